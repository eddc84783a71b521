package splits

import (
	"context"
	"path"
	"slices"
	"testing"
	"time"
)

// TestIntervalSelection: a plan restricted to a time interval keeps the
// files whose partition and bounds allow a time in it, filters row by row
// only those not wholly inside it (the others, without delete files, are
// served raw), and cuts the same plans from one scan as Plan gives for each
// interval.
func TestIntervalSelection(t *testing.T) {
	ctx := context.Background()
	p := eventsTable(t) // one file a day, 2025-01-01 to 05, rows at 06:00, 12:00 and 18:00
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	sc, err := p.NewScan(ctx, nil, Request{Table: "events.daily"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		iv         TimeInterval
		files      []string // the days of the files kept
		unfiltered []string // the days of those kept without a row filter
	}{
		{"one whole day", TimeInterval{"ts", day(2), day(3)}, []string{"2025-01-02"}, []string{"2025-01-02"}},
		{"two days", TimeInterval{"ts", day(2), day(4)}, []string{"2025-01-02", "2025-01-03"}, []string{"2025-01-02", "2025-01-03"}},
		{"part of a day", TimeInterval{"ts", day(2).Add(10 * time.Hour), day(2).Add(13 * time.Hour)}, []string{"2025-01-02"}, nil},
		{"between rows", TimeInterval{"ts", day(3).Add(19 * time.Hour), day(4).Add(5 * time.Hour)}, nil, nil}, // the bounds say so
		{"before the table", TimeInterval{"ts", day(1).AddDate(-1, 0, 0), day(1)}, nil, nil},
		{"by date", TimeInterval{"day", day(5), day(6)}, []string{"2025-01-05"}, []string{"2025-01-05"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := tc.iv
			cut, err := p.Cut(ctx, sc, &iv)
			if err != nil {
				t.Fatal(err)
			}
			planned, err := p.Plan(ctx, Request{Table: "events.daily", Interval: &iv})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(cut.Splits, planned.Splits, func(a, b PlannedSplit) bool { return a.Token == b.Token }) {
				t.Fatal("Cut of one scan and Plan differ")
			}
			var files, unfiltered []string
			for _, ps := range cut.Splits {
				for _, part := range ps.Parts {
					d := path.Base(path.Dir(part.Data.Path))[len("day="):]
					files = append(files, d)
					if len(part.Filter) == 0 {
						unfiltered = append(unfiltered, d)
					}
				}
			}
			if !slices.Equal(files, tc.files) || !slices.Equal(unfiltered, tc.unfiltered) {
				t.Fatalf("files %v (unfiltered %v), want %v (%v)", files, unfiltered, tc.files, tc.unfiltered)
			}
			// Files wholly inside the interval need no row filter: without
			// delete files, they are served raw.
			if want := map[bool]Path{true: PathFiles, false: PathRows}[len(unfiltered) == len(files)]; len(files) > 0 && cut.Path != want {
				t.Fatalf("path %s, want %s", cut.Path, want)
			}
		})
	}
	if _, err := p.Cut(ctx, sc, &TimeInterval{"kind", day(1), day(2)}); err == nil {
		t.Fatal("a string column as the time column planned")
	}
}
