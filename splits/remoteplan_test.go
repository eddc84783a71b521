package splits

import (
	"errors"
	"testing"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// TestRemoteMeter: a plan on the server holds, past what its snapshot
// declares, the entries of the answers read and the bytes of the answer
// being read, each answer counted once: its bytes until its entries are
// charged, then its entries alone; an answer whose bytes pass the budget
// is refused as they arrive, and the reservation keeps what it held.
func TestRemoteMeter(t *testing.T) {
	budget := memory.NewBudget(1<<20, "a test's budget", nil)
	r, err := budget.Reserve(memory.Plan, entryBytes(10), budget.Capacity(), budget.Origin())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	m := &remoteMeter{r: r, declared: 10}
	used := func() int64 { return budget.Stats().Used }
	for _, step := range []struct {
		name string
		do   func() error
		want int64
	}{
		{"an answer within what the snapshot declares", func() error { return m.Answer(5 << 10) }, entryBytes(10)},
		{"the answer grows past it", func() error { return m.Answer(20 << 10) }, 20 << 10 * PlanAnswerBytesPerByte},
		{"its entries in place of its bytes", func() error { return m.Entries(30) }, entryBytes(30)},
		{"the next answer beside them", func() error { return m.Answer(10 << 10) }, entryBytes(30) + 10<<10*PlanAnswerBytesPerByte},
		{"a poll that answers nothing", func() error { return m.Entries(0) }, entryBytes(30)},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := used(); got != step.want {
			t.Fatalf("%s: the budget holds %d, want %d", step.name, got, step.want)
		}
	}
	err = m.Answer(300 << 10)
	if !errors.Is(err, memory.ErrTooLarge) {
		t.Fatalf("an answer past the budget: %v, want ErrTooLarge", err)
	}
	if got := used(); got != entryBytes(30) {
		t.Fatalf("after the refusal the budget holds %d, want what it held (%d)", got, entryBytes(30))
	}
}
