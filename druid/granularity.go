package druid

import (
	"fmt"
	"strings"
	"time"
)

// Granularity is a Druid segment granularity: the time chunk a segment
// covers, which REPLACE intervals must align to, in UTC. One type serves
// every generator: /druid/task's segmentGranularity, /druid/sql's
// PARTITIONED BY, /changes and sync.
type Granularity string

// The granularities the sidecar generates for. Each is a standard Druid
// granularity (GranularityType), so MSQ's PARTITIONED BY takes it
// (DruidSqlParserUtils.validateSupportedGranularityForPartitionedBy).
const (
	GranularityHour    Granularity = "HOUR"
	GranularityDay     Granularity = "DAY"
	GranularityWeek    Granularity = "WEEK"
	GranularityMonth   Granularity = "MONTH"
	GranularityQuarter Granularity = "QUARTER"
	GranularityYear    Granularity = "YEAR"
	// GranularityAll is one chunk for all time: any change replaces it all.
	GranularityAll Granularity = "ALL"
)

// periods are the ISO 8601 periods of the granularities, as Druid's
// PeriodGranularity spells them.
var periods = map[Granularity]string{
	GranularityHour: "PT1H", GranularityDay: "P1D", GranularityWeek: "P1W",
	GranularityMonth: "P1M", GranularityQuarter: "P3M", GranularityYear: "P1Y",
}

// ParseGranularity parses a granularity as an operator writes it: a name
// in any case (HOUR, DAY, WEEK, MONTH, QUARTER, YEAR, ALL or ALL TIME, as
// Druid's GranularityType names them), or its ISO 8601 period (PT1H, P1D,
// P1W, P1M, P3M, P1Y, as PARTITIONED BY takes them). "" is DAY.
func ParseGranularity(s string) (Granularity, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	switch Granularity(u) {
	case "":
		return GranularityDay, nil
	case GranularityHour, GranularityDay, GranularityWeek, GranularityMonth, GranularityQuarter, GranularityYear, GranularityAll:
		return Granularity(u), nil
	}
	if strings.Join(strings.Fields(u), " ") == "ALL TIME" {
		return GranularityAll, nil
	}
	for g, p := range periods {
		if u == p {
			return g, nil
		}
	}
	if len(s) > 16 {
		// No granularity is this long: not worth quoting back.
		return "", fmt.Errorf("%w: a granularity of %d bytes: want HOUR, DAY, WEEK, MONTH, QUARTER, YEAR or ALL", ErrInvalid, len(s))
	}
	return "", fmt.Errorf("%w: granularity %q: want HOUR, DAY, WEEK, MONTH, QUARTER, YEAR or ALL (or the period PT1H, P1D, P1W, P1M, P3M, P1Y)",
		ErrInvalid, s)
}

// PartitionedBy is the granularity as an MSQ PARTITIONED BY clause's
// argument. Druid's grammar has keywords for HOUR, DAY, MONTH, YEAR and
// ALL TIME only (sql/src/main/codegen/includes/common.ftl,
// PartitionGranularity); WEEK and QUARTER are written TIME_FLOOR("__time",
// 'P1W') and TIME_FLOOR("__time", 'P3M'), which every Druid with MSQ takes
// (DruidSqlParserUtils.convertSqlNodeToGranularity), where the bare period
// literal 'P1W' needs Druid 30.
func (g Granularity) PartitionedBy() string {
	switch g {
	case GranularityAll:
		return "ALL TIME"
	case GranularityWeek, GranularityQuarter:
		return `TIME_FLOOR("__time", ` + String(periods[g]) + ")"
	}
	return string(g)
}

// Segment is the granularity as a native task's segmentGranularity: a
// GranularityType name, which Druid's Granularity.fromString reads in any
// case.
func (g Granularity) Segment() string { return string(g) }

// Floor is the start of the chunk that holds t, in UTC. Weeks start on
// Mondays, as Druid's (Joda's) do. ALL has no chunks: Floor returns t.
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

// Next is the start of the chunk after the one that starts at start.
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

// Aligned says whether t starts a chunk. Nothing is aligned to ALL: its
// one chunk starts before any time (Druid's AllGranularity.bucketStart is
// DateTimes.MIN), which is why Druid refuses a bounded OVERWRITE with
// PARTITIONED BY ALL TIME.
func (g Granularity) Aligned(t time.Time) bool {
	return g != GranularityAll && g.Floor(t).Equal(t)
}
