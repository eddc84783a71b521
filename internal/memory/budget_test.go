package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestBudget(t *testing.T) {
	t.Parallel()
	b := NewBudget(100, "the test budget", nil)
	a, err := b.Reserve(Plan, 60, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	// Held by another: busy, worth a retry.
	if _, err := b.Reserve(Deletes, 50, 0, ""); !errors.Is(err, ErrBusy) || errors.Is(err, ErrTooLarge) {
		t.Fatalf("50 of 100 with 60 held: %v, want ErrBusy", err)
	}
	// Larger than the whole budget: never fits.
	_, err = b.Reserve(Plan, 101, 0, "")
	var ex *ExceedsError
	if !errors.As(err, &ex) || !errors.Is(err, ErrTooLarge) || ex.Need != 101 || ex.Bound != 100 || ex.BoundName != "the test budget" {
		t.Fatalf("101 of 100: %v", err)
	}
	// Past its own bound, even with room in the budget.
	r, err := b.Reserve(Deletes, 10, 30, "--max-delete-memory")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Grow(25); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "--max-delete-memory") {
		t.Fatalf("growing past the bound: %v", err)
	}
	if r.Size() != 10 {
		t.Errorf("a failed Grow changed the reservation to %d", r.Size())
	}
	a.Release()
	a.Release() // twice is harmless
	if err := r.Set(30); err != nil {
		t.Fatal(err)
	}
	s := b.Stats()
	if s.Used != 30 || s.ByKind[Deletes] != 30 || s.ByKind[Plan] != 0 || s.Peak != 70 || s.Busy != 1 || s.TooLarge != 2 {
		t.Errorf("stats %+v", s)
	}
	r.Release()
	if err := r.Grow(1); err == nil {
		t.Error("a released reservation grew")
	}
	if s := b.Stats(); s.Used != 0 {
		t.Errorf("%d held after every release", s.Used)
	}
	// No budget: everything fits.
	if _, err := b.Reserve(Plan, -4096, 0, ""); err == nil || b.Stats().Used != 0 {
		t.Errorf("a negative reservation: %v, %d held", err, b.Stats().Used)
	}
	var none *Budget
	if r, err := none.Reserve(Plan, 1<<60, 0, ""); err != nil || r.Grow(1<<60) != nil {
		t.Errorf("a nil budget refused: %v", err)
	}
}

func TestBudgetReclaims(t *testing.T) {
	t.Parallel()
	b := NewBudget(100, "the test budget", nil)
	cached, err := b.Reserve(Deletes, 80, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var asked int64
	b.OnPressure(func(need int64) {
		asked = need
		cached.Release()
	})
	if _, err := b.Reserve(Plan, 50, 0, ""); err != nil {
		t.Fatalf("a reservation that fits once the cache gives back: %v", err)
	}
	if asked != 30 {
		t.Errorf("reclaim asked for %d, want the 30 short", asked)
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	b := NewBudget(100, "the test budget", nil)
	ctx, end := WithScope(context.Background())
	r, _ := b.Reserve(Plan, 40, 0, "")
	if !Hold(ctx, r) {
		t.Fatal("Hold in a scope reported false")
	}
	if b.Stats().Used != 40 {
		t.Fatal("a held reservation was released before its scope ended")
	}
	end()
	if b.Stats().Used != 0 {
		t.Fatal("the scope's end did not release what it held")
	}
	r, _ = b.Reserve(Plan, 40, 0, "")
	if Hold(ctx, r) || b.Stats().Used != 0 {
		t.Fatal("a scope that ended must release at once what it is given")
	}
	r, _ = b.Reserve(Plan, 40, 0, "")
	if Hold(context.Background(), r) || b.Stats().Used != 0 {
		t.Fatal("without a scope, Hold must release at once")
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{512: "512 bytes", 1 << 20: "1 MiB", 3 << 29: "1.5 GiB", 1536: "1.5 KiB"} {
		if got := Bytes(n).String(); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
