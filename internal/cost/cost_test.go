package cost_test

import (
	"testing"

	"github.com/druidiceberg/sidecar/internal/cost"
)

var sink []byte

func TestAllocatedByCountsWhatFAllocates(t *testing.T) {
	got := cost.AllocatedBy(func() { sink = make([]byte, 1<<20) })
	if got < 1<<20 {
		t.Errorf("AllocatedBy a 1 MiB slice = %d bytes, want at least %d", got, 1<<20)
	}
}

func TestCPUTimeGrowsWithWork(t *testing.T) {
	before := cost.CPUTime()
	x := uint64(1)
	for range 50_000_000 {
		x = x*6364136223846793005 + 1
	}
	if x == 0 {
		t.Log(x) // keeps the loop's work alive
	}
	if after := cost.CPUTime(); after <= before {
		t.Errorf("CPU time went from %v to %v while computing", before, after)
	}
}
