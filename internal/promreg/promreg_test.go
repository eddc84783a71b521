package promreg_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/druidiceberg/sidecar/internal/promreg"
)

// TestRegisterShares: two instances of a component register one counter,
// and both count into the one the registry exports.
func TestRegisterShares(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "sidecar_test_total", Help: "A test counter."}
	a := promreg.Register(reg, prometheus.NewCounter(opts))
	b := promreg.Register(reg, prometheus.NewCounter(opts))
	a.Inc()
	b.Add(2)
	if got := testutil.ToFloat64(a); got != 3 {
		t.Errorf("the shared counter is %v, want 3", got)
	}
	if n, err := testutil.GatherAndCount(reg, "sidecar_test_total"); err != nil || n != 1 {
		t.Errorf("the registry exports %d series (%v), want 1", n, err)
	}
}

// TestRegisterNil: without a registry the collector counts, unexported.
func TestRegisterNil(t *testing.T) {
	c := promreg.Register(nil, prometheus.NewCounter(prometheus.CounterOpts{Name: "sidecar_test_total", Help: "A test counter."}))
	c.Inc()
	if got := testutil.ToFloat64(c); got != 1 {
		t.Errorf("the counter is %v, want 1", got)
	}
}

// TestRegisterConflict: one name with another help is a programming error.
func TestRegisterConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "sidecar_test_total", Help: "A test counter."}))
	defer func() {
		if recover() == nil {
			t.Error("a second counter of the same name and another help registered")
		}
	}()
	promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "sidecar_test_total", Help: "Another help."}))
}
