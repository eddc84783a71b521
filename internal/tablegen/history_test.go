package tablegen

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestHistoryTracksItsRows: after every step of histories of every time
// column type and layout the handlers' and sync's histories use (with a
// time column whose name needs quoting, and without bounds on it), the
// generator's record of its rows (History.Rows) is exactly the oracle's
// live rows, the ids it holds live are the oracle's, and rows a
// merge-on-read or equality delete removed are gone.
func TestHistoryTracksItsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []HistoryOptions{
		{Seed: 1, Time: TimeTimestamp, Layout: LayoutDay},
		{Seed: 2, Time: TimeTimestampTz, Layout: LayoutUnpartitioned},
		{Seed: 3, Time: TimeDate, Layout: LayoutDay},
		{Seed: 4, Time: TimeLongMillis, Layout: LayoutCategory},
	}
	for i, opts := range cases {
		t.Run(fmt.Sprintf("%s_%s", opts.Time, opts.Layout), func(t *testing.T) {
			t.Parallel()
			h, err := NewHistory(ctx, newCatalog(t), table.Identifier{"hist", fmt.Sprintf("t%d", i)}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for step := range 12 {
				before := len(h.Table().Metadata().Snapshots())
				what, err := h.Step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(h.Table().Metadata().Snapshots()) <= before && !strings.Contains(what, "nothing") {
					t.Fatalf("step %d (%s) committed no snapshot", step, what)
				}
				rows := recordsTheOracle(t, h, fmt.Sprintf("step %d (%s)", step, what))
				var got []int64
				for _, r := range rows {
					var row struct{ ID int64 }
					if err := json.Unmarshal([]byte(r), &row); err != nil {
						t.Fatal(err)
					}
					got = append(got, row.ID)
				}
				slices.Sort(got)
				// A resurrected row (see History.refresh) may share its id
				// with its update.
				got = slices.Compact(got)
				var want []int64
				for id := range h.live {
					want = append(want, id)
				}
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("step %d (%s): live ids %v, generator holds %v", step, what, got, want)
				}
			}
		})
	}
}

// TestHistoryFollowsFilteredDeletes: a delete or overwrite by a filter on
// the time column, over a file holding as many rows without a time as rows
// with one (which iceberg-go v0.7.0's row-group pruning takes for a file of
// nulls only, see History.settle), leaves the generator's record exactly
// the oracle's live rows.
func TestHistoryFollowsFilteredDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const day = 19_785
	inDay := int64(day*86_400_000 + 3_600_000)
	ops := map[string]func(h *History) (string, error){
		"merge-on-read delete": func(h *History) (string, error) { return h.deleteDayOf(ctx, day) },
		"copy-on-write delete": func(h *History) (string, error) {
			h.mode = table.WriteModeCopyOnWrite
			return h.deleteDayOf(ctx, day)
		},
		"overwrite": func(h *History) (string, error) {
			ts := inDay + 1
			return h.overwriteDayWith(ctx, day, []historyRow{{id: 3, ts: &ts, cat: "c", v: 3}})
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h, err := NewHistory(ctx, newCatalog(t), table.Identifier{"hist", "t"}, HistoryOptions{Seed: 1, Time: TimeLongMillis, Layout: LayoutUnpartitioned})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Append(ctx, HistoryRow{ID: 1, TS: &inDay, Cat: "a", V: 1}, HistoryRow{ID: 2, Cat: "b", V: 2}); err != nil {
				t.Fatal(err)
			}
			what, err := op(h)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.settle(ctx); err != nil {
				t.Fatal(err)
			}
			recordsTheOracle(t, h, what)
		})
	}
}

// recordsTheOracle fails unless the generator's record of the current
// snapshot's rows is exactly the oracle's live rows, and returns them.
func recordsTheOracle(t *testing.T, h *History, what string) []string {
	t.Helper()
	rows, err := OracleRows(context.Background(), h.Table(), h.Table().CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	recorded := h.Rows()
	slices.Sort(recorded)
	slices.Sort(rows)
	if !slices.Equal(recorded, rows) {
		t.Fatalf("%s: the oracle has\n  %s\nthe generator records\n  %s", what,
			strings.Join(rows, "\n  "), strings.Join(recorded, "\n  "))
	}
	return rows
}
