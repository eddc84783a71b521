package druid

import (
	"errors"
	"testing"
	"time"
)

func TestGranularity(t *testing.T) {
	at := time.Date(2024, 5, 16, 13, 45, 1, 0, time.UTC) // a Thursday
	for _, tc := range []struct {
		g           Granularity
		floor, next string
	}{
		{GranularityHour, "2024-05-16T13:00:00Z", "2024-05-16T14:00:00Z"},
		{GranularityDay, "2024-05-16T00:00:00Z", "2024-05-17T00:00:00Z"},
		{GranularityWeek, "2024-05-13T00:00:00Z", "2024-05-20T00:00:00Z"},
		{GranularityMonth, "2024-05-01T00:00:00Z", "2024-06-01T00:00:00Z"},
		{GranularityQuarter, "2024-04-01T00:00:00Z", "2024-07-01T00:00:00Z"},
		{GranularityYear, "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
	} {
		f := tc.g.Floor(at)
		if got := f.Format(time.RFC3339); got != tc.floor {
			t.Errorf("%s floor %s, want %s", tc.g, got, tc.floor)
		}
		if got := tc.g.Next(f).Format(time.RFC3339); got != tc.next {
			t.Errorf("%s next %s, want %s", tc.g, got, tc.next)
		}
	}
	// Before 1970, a Monday too.
	if got := GranularityWeek.Floor(time.Date(1969, 12, 31, 5, 0, 0, 0, time.UTC)).Format(time.DateOnly); got != "1969-12-29" {
		t.Errorf("week of 1969-12-31 starts %s", got)
	}
	if _, err := ParseGranularity("fortnight"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bad granularity: %v", err)
	}
	if g, err := ParseGranularity("day"); err != nil || g != GranularityDay {
		t.Errorf("day: %v %v", g, err)
	}
}

// TestGranularityForms: what an operator writes parses to one
// granularity, and each renders in the form Druid's grammar takes.
func TestGranularityForms(t *testing.T) {
	for _, tc := range []struct {
		in, partitionedBy, segment string
	}{
		{"", "DAY", "DAY"},
		{"hour", "HOUR", "HOUR"},
		{"PT1H", "HOUR", "HOUR"},
		{"p1d", "DAY", "DAY"},
		{"week", `TIME_FLOOR("__time", 'P1W')`, "WEEK"},
		{"P1W", `TIME_FLOOR("__time", 'P1W')`, "WEEK"},
		{"Quarter", `TIME_FLOOR("__time", 'P3M')`, "QUARTER"},
		{"P3M", `TIME_FLOOR("__time", 'P3M')`, "QUARTER"},
		{"month", "MONTH", "MONTH"},
		{"P1Y", "YEAR", "YEAR"},
		{"all", "ALL TIME", "ALL"},
		{"ALL  TIME", "ALL TIME", "ALL"},
	} {
		g, err := ParseGranularity(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if g.PartitionedBy() != tc.partitionedBy || g.Segment() != tc.segment {
			t.Errorf("%q: PARTITIONED BY %s, segmentGranularity %s; want %s and %s", tc.in, g.PartitionedBy(), g.Segment(), tc.partitionedBy, tc.segment)
		}
	}
	for _, bad := range []string{"P2D", "PT15M", "fortnight", "ALL TIMES", "1 day"} {
		if _, err := ParseGranularity(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
	if GranularityAll.Aligned(time.Unix(0, 0)) || !GranularityDay.Aligned(time.Unix(0, 0)) {
		t.Error("ALL aligns nothing; DAY aligns midnight UTC")
	}
}
