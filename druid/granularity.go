// Package druid holds what the sidecar generates for Druid and what it must
// know of Druid to do so: granularities, ingestion specs and MSQ statements,
// and the Iceberg to Druid type mapping.
package druid

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalid: a parameter of a spec or statement is not one Druid takes.
var ErrInvalid = errors.New("invalid Druid parameter")

// Granularity is a Druid segment granularity: the unit that changed time
// intervals are aligned to, in UTC.
type Granularity string

// The granularities Druid names, as /changes takes them.
const (
	GranularityHour    Granularity = "HOUR"
	GranularityDay     Granularity = "DAY"
	GranularityWeek    Granularity = "WEEK"
	GranularityMonth   Granularity = "MONTH"
	GranularityQuarter Granularity = "QUARTER"
	GranularityYear    Granularity = "YEAR"
	// GranularityAll is one bucket for all time: any change replaces it all.
	GranularityAll Granularity = "ALL"
)

// ParseGranularity parses a granularity, "" being DAY, in any case.
func ParseGranularity(s string) (Granularity, error) {
	g := Granularity(strings.ToUpper(s))
	switch g {
	case "":
		return GranularityDay, nil
	case GranularityHour, GranularityDay, GranularityWeek, GranularityMonth, GranularityQuarter, GranularityYear, GranularityAll:
		return g, nil
	}
	if len(s) > 16 {
		// No granularity is this long: not worth quoting back.
		return "", fmt.Errorf("%w: a granularity of %d bytes: want HOUR, DAY, WEEK, MONTH, QUARTER, YEAR or ALL", ErrInvalid, len(s))
	}
	return "", fmt.Errorf("%w: granularity %q: want HOUR, DAY, WEEK, MONTH, QUARTER, YEAR or ALL", ErrInvalid, s)
}

// Floor is the start of the bucket that holds t, in UTC. Weeks start on
// Mondays, as Druid's (Joda's) do. ALL has no buckets: Floor returns t.
func (g Granularity) Floor(t time.Time) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	switch g {
	case GranularityHour:
		return t.Truncate(time.Hour)
	case GranularityDay:
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case GranularityWeek:
		back := (int(t.Weekday()) + 6) % 7
		return time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	case GranularityMonth:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	case GranularityQuarter:
		return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, time.UTC)
	case GranularityYear:
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return t
}

// Next is the start of the bucket after the one that starts at start.
func (g Granularity) Next(start time.Time) time.Time {
	switch g {
	case GranularityHour:
		return start.Add(time.Hour)
	case GranularityDay:
		return start.AddDate(0, 0, 1)
	case GranularityWeek:
		return start.AddDate(0, 0, 7)
	case GranularityMonth:
		return start.AddDate(0, 1, 0)
	case GranularityQuarter:
		return start.AddDate(0, 3, 0)
	case GranularityYear:
		return start.AddDate(1, 0, 0)
	}
	return start
}
