package memory

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// TestBudgetMetrics: the budget follows its reservations by kind and
// counts its refusals by kind and reason on the registry it was given,
// and the scrape passes promtool.
func TestBudgetMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	b := NewBudget(100, "the test budget", reg)
	plan, err := b.Reserve(Plan, 60, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	deletes, err := b.Reserve(Deletes, 30, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(Deletes, 50, 0, ""); err == nil {
		t.Fatal("50 more of 100 with 90 held fit")
	}
	if _, err := b.Reserve(Plan, 101, 0, ""); err == nil {
		t.Fatal("101 of 100 fit")
	}
	deletes.Release()
	scrape := testenv.PromtoolCheckGatherer(t, reg)
	for _, line := range []string{
		`sidecar_memory_reserved_bytes{kind="plan"} 60`,
		`sidecar_memory_reserved_bytes{kind="deletes"} 0`,
		`sidecar_memory_refused_total{kind="deletes",reason="busy"} 1`,
		`sidecar_memory_refused_total{kind="plan",reason="too_large"} 1`,
	} {
		if !strings.Contains(scrape, "\n"+line+"\n") {
			t.Errorf("the scrape lacks %s:\n%s", line, scrape)
		}
	}
	plan.Release()
	// A second budget on the registry counts into the same series.
	other := NewBudget(100, "another budget", reg)
	if _, err := other.Reserve(Plan, 101, 0, ""); err == nil {
		t.Fatal("101 of 100 fit")
	}
	if got := testutil.ToFloat64(b.refused.WithLabelValues("plan", "too_large")); got != 2 {
		t.Errorf("too_large plan refusals of two budgets on one registry: %v, want 2", got)
	}
}
