package druidsim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// granularity is a Druid Granularity in UTC: a period, or all time.
// The model's own, read from Druid's
// processing/src/main/java/org/apache/druid/java/util/common/granularity/
// (GranularityType, PeriodGranularity, AllGranularity), so that it checks
// the sidecar's druid package rather than repeating it.
type granularity struct {
	name string // GranularityType name, or the period for another one
	all  bool
	// A period of whole months, or a fixed duration.
	months int
	fixed  time.Duration
	// weeks are aligned to Mondays, as Joda's ISO weeks are.
	week bool
}

// standardGranularities are GranularityType's values with their periods
// (GranularityType.java). PARTITIONED BY takes only these
// (DruidSqlParserUtils.validateSupportedGranularityForPartitionedBy:
// GranularityType.isStandard).
var standardGranularities = []struct{ name, period string }{
	{"SECOND", "PT1S"}, {"MINUTE", "PT1M"}, {"FIVE_MINUTE", "PT5M"}, {"TEN_MINUTE", "PT10M"},
	{"FIFTEEN_MINUTE", "PT15M"}, {"THIRTY_MINUTE", "PT30M"}, {"HOUR", "PT1H"}, {"SIX_HOUR", "PT6H"},
	{"EIGHT_HOUR", "PT8H"}, {"DAY", "P1D"}, {"WEEK", "P1W"}, {"MONTH", "P1M"}, {"QUARTER", "P3M"}, {"YEAR", "P1Y"},
}

var allGranularity = granularity{name: "ALL", all: true}

// granularityType reads a GranularityType name in any case, as Druid's
// Granularity.fromString does (GranularityType.valueOf(toUpperCase)).
func granularityType(s string) (granularity, error) {
	u := strings.ToUpper(s)
	if u == "ALL" {
		return allGranularity, nil
	}
	for _, g := range standardGranularities {
		if g.name == u {
			return periodGranularity(g.period)
		}
	}
	return granularity{}, fmt.Errorf("no GranularityType named %q", s)
}

var periodRE = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// periodGranularity is a PeriodGranularity in UTC, of a period with one
// unit (which is what the model needs to bucket).
func periodGranularity(p string) (granularity, error) {
	m := periodRE.FindStringSubmatch(strings.ToUpper(p))
	if m == nil || p == "P" || strings.HasSuffix(strings.ToUpper(p), "T") {
		return granularity{}, fmt.Errorf("period %q is not ISO 8601", p)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	g := granularity{name: standardName(strings.ToUpper(p))}
	units := 0
	for i := 1; i <= 7; i++ {
		if m[i] != "" {
			units++
		}
	}
	if units != 1 {
		return granularity{}, fmt.Errorf("period %q: the model buckets periods of one unit", p)
	}
	switch {
	case m[1] != "":
		g.months = 12 * n(1)
	case m[2] != "":
		g.months = n(2)
	case m[3] != "":
		g.fixed, g.week = time.Duration(n(3))*7*24*time.Hour, true
	case m[4] != "":
		g.fixed = time.Duration(n(4)) * 24 * time.Hour
	case m[5] != "":
		g.fixed = time.Duration(n(5)) * time.Hour
	case m[6] != "":
		g.fixed = time.Duration(n(6)) * time.Minute
	case m[7] != "":
		g.fixed = time.Duration(n(7)) * time.Second
	}
	if g.months == 0 && g.fixed == 0 {
		return granularity{}, fmt.Errorf("period %q is empty", p)
	}
	return g, nil
}

func standardName(period string) string {
	for _, g := range standardGranularities {
		if g.period == period {
			return g.name
		}
	}
	return period
}

// standard says whether g is one of GranularityType's.
func (g granularity) standard() bool {
	if g.all {
		return true
	}
	for _, s := range standardGranularities {
		if s.name == g.name {
			return true
		}
	}
	return false
}

// bucketStart is the start of the chunk that holds t. AllGranularity's is
// DateTimes.MIN, before any time: the model says ok false.
func (g granularity) bucketStart(t time.Time) (start time.Time, ok bool) {
	t = t.UTC()
	switch {
	case g.all:
		return time.Time{}, false
	case g.months > 0:
		y, m, _ := t.Date()
		idx := y*12 + int(m) - 1
		idx -= ((idx % g.months) + g.months) % g.months
		return time.Date(idx/12, time.Month(idx%12+1), 1, 0, 0, 0, 0, time.UTC), true
	case g.week:
		// Joda's weeks start on Monday; 1970-01-05 was one.
		origin := time.Date(1970, 1, 5, 0, 0, 0, 0, time.UTC)
		return floorFrom(origin, t, g.fixed), true
	}
	return floorFrom(time.Unix(0, 0).UTC(), t, g.fixed), true
}

func floorFrom(origin, t time.Time, d time.Duration) time.Time {
	diff := t.Sub(origin)
	k := diff / d
	if diff%d < 0 {
		k--
	}
	return origin.Add(k * d)
}

// next is the start of the chunk after the one starting at start.
func (g granularity) next(start time.Time) time.Time {
	if g.months > 0 {
		return start.AddDate(0, g.months, 0)
	}
	return start.Add(g.fixed)
}

// aligned says whether t starts a chunk.
func (g granularity) aligned(t time.Time) bool {
	s, ok := g.bucketStart(t)
	return ok && s.Equal(t)
}

func (g granularity) String() string {
	if g.all {
		return "AllGranularity"
	}
	return g.name
}

// jodaInstant reads an instant as Druid's Jackson DateTime deserializer
// does (processing/src/main/java/org/apache/druid/jackson/JodaStuff.java:
// ISODateTimeFormat.dateTimeParser with the offset kept): a date with
// optional month and day, an optional time after T with optional minutes,
// seconds and fraction, and an optional offset (Z, ±HH, ±HHmm, ±HH:mm);
// without an offset, UTC.
func jodaInstant(s string) (time.Time, error) {
	m := jodaRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date-time", s)
	}
	num := func(i, def int) int {
		if m[i] == "" {
			return def
		}
		v, _ := strconv.Atoi(m[i])
		return v
	}
	nanos := 0
	if f := m[7]; f != "" {
		nanos, _ = strconv.Atoi((f + "000000000")[:9])
	}
	loc := time.UTC
	if z := m[8]; z != "" && z != "Z" {
		sign := 1
		if z[0] == '-' {
			sign = -1
		}
		digits := strings.ReplaceAll(z[1:], ":", "")
		h, _ := strconv.Atoi(digits[:2])
		mi := 0
		if len(digits) == 4 {
			mi, _ = strconv.Atoi(digits[2:])
		}
		loc = time.FixedZone(z, sign*(h*3600+mi*60))
	}
	t := time.Date(num(1, 0), time.Month(num(2, 1)), num(3, 1), num(4, 0), num(5, 0), num(6, 0), nanos, loc)
	if t.Month() != time.Month(num(2, 1)) || t.Day() != num(3, 1) {
		return time.Time{}, fmt.Errorf("%q is not a calendar date", s)
	}
	return t.UTC(), nil
}

var jodaRE = regexp.MustCompile(`^([+-]?\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:T(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// jodaInterval reads an interval as Druid's Intervals.of does (Joda's
// Interval with the UTC chronology): START/END, START/PERIOD or
// PERIOD/END.
func jodaInterval(s string) (start, end time.Time, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return start, end, fmt.Errorf("interval %q has no /", s)
	}
	switch {
	case strings.HasPrefix(strings.ToUpper(b), "P"):
		if start, err = jodaInstant(a); err == nil {
			end, err = addPeriod(start, b, 1)
		}
	case strings.HasPrefix(strings.ToUpper(a), "P"):
		if end, err = jodaInstant(b); err == nil {
			start, err = addPeriod(end, a, -1)
		}
	default:
		if start, err = jodaInstant(a); err == nil {
			end, err = jodaInstant(b)
		}
	}
	if err == nil && end.Before(start) {
		err = fmt.Errorf("interval %q ends before it starts", s)
	}
	return start, end, err
}

// addPeriod adds an ISO 8601 period (calendar fields) sign times.
func addPeriod(t time.Time, p string, sign int) (time.Time, error) {
	m := periodRE.FindStringSubmatch(strings.ToUpper(p))
	if m == nil || strings.ToUpper(p) == "P" {
		return t, fmt.Errorf("period %q is not ISO 8601", p)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return sign * v }
	t = t.AddDate(n(1), n(2), 7*n(3)+n(4))
	return t.Add(time.Duration(n(5))*time.Hour + time.Duration(n(6))*time.Minute + time.Duration(n(7))*time.Second), nil
}
