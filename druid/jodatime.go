package druid

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// Druid reads the times and intervals of a spec with Joda: a DateTime
// property through its Jackson deserializer (processing/src/main/java/org/
// apache/druid/jackson/JodaStuff.java: an integer is epoch milliseconds, a
// string goes through ISODateTimeFormat.dateTimeParser with its offset
// kept) and an interval through Intervals.of (Joda's Interval, in UTC:
// START/END, START/PERIOD or PERIOD/END, with calendar periods). The
// sidecar takes the same forms, so a spec Druid accepts plans here.

// jodaDateTime is what ISODateTimeFormat.dateTimeParser takes, in
// extended format: a calendar date (yyyy, yyyy-MM or yyyy-MM-dd), an
// ordinal date (yyyy-DDD) or a week date (xxxx-Www or xxxx-Www-e), then
// optionally T and a time (HH, HH:mm, HH:mm:ss, with a fraction of up to
// nine digits after . or ,), then optionally an offset (Z, ±HH, ±HHmm,
// ±HH:mm).
var jodaDateTime = regexp.MustCompile(`^([+-]?\d{4,9})(?:-(\d{2})(?:-(\d{2}))?|-(\d{3})|-W(\d{2})(?:-(\d))?)?` +
	`(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?)?` +
	`(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// ParseInstant reads an ISO 8601 date-time as Druid's Joda parser does;
// without an offset it is UTC, as Druid's chronology is.
func ParseInstant(s string) (time.Time, error) {
	m := jodaDateTime.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, fmt.Errorf("%s is not an ISO 8601 date-time (such as 2024-03-01, 2024-03-01T12:00Z or 2024-03-01T12:00:00+01:00)", fault.Quote(s))
	}
	num := func(i, def int) int {
		if m[i] == "" {
			return def
		}
		v, _ := strconv.Atoi(m[i])
		return v
	}
	year := num(1, 0)
	var t time.Time
	switch {
	case m[4] != "": // ordinal date
		day := num(4, 1)
		t = time.Date(year, 1, day, 0, 0, 0, 0, time.UTC)
		if day < 1 || t.Year() != year {
			return time.Time{}, fmt.Errorf("%s: day %d is not in %d", fault.Quote(s), day, year)
		}
	case m[5] != "": // week date: ISO weeks start on Monday; week 1 holds January 4th
		week, weekday := num(5, 1), num(6, 1)
		if week < 1 || week > 53 || weekday < 1 || weekday > 7 {
			return time.Time{}, fmt.Errorf("%s is not a week date", fault.Quote(s))
		}
		jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC)
		monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
		t = monday.AddDate(0, 0, 7*(week-1)+weekday-1)
		if y, w := t.ISOWeek(); y != year || w != week {
			return time.Time{}, fmt.Errorf("%s: %d has no week %d", fault.Quote(s), year, week)
		}
	default:
		month, day := num(2, 1), num(3, 1)
		t = time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
		if int(t.Month()) != month || t.Day() != day {
			return time.Time{}, fmt.Errorf("%s is not a calendar date", fault.Quote(s))
		}
	}
	hour, minute, second := num(7, 0), num(8, 0), num(9, 0)
	if hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, fmt.Errorf("%s is not a time of day", fault.Quote(s))
	}
	nanos := 0
	if f := m[10]; f != "" {
		nanos, _ = strconv.Atoi((f + "000000000")[:9])
	}
	offset := 0
	if z := m[11]; z != "" && z != "Z" {
		digits := strings.ReplaceAll(z[1:], ":", "")
		h, _ := strconv.Atoi(digits[:2])
		mi := 0
		if len(digits) == 4 {
			mi, _ = strconv.Atoi(digits[2:])
		}
		if h > 23 || mi > 59 {
			return time.Time{}, fmt.Errorf("%s: offset %s is out of range", fault.Quote(s), z)
		}
		offset = h*3600 + mi*60
		if z[0] == '-' {
			offset = -offset
		}
	}
	wall := t.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute + time.Duration(second)*time.Second + time.Duration(nanos))
	return wall.Add(-time.Duration(offset) * time.Second).UTC(), nil
}

// ParseInterval reads a Druid interval as Intervals.of does: START/END,
// START/PERIOD or PERIOD/END, a period being ISO 8601 with calendar
// fields (P1M from March 1st ends on April 1st).
func ParseInterval(s string) (start, end time.Time, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return start, end, fmt.Errorf("interval %s: want START/END, START/PERIOD or PERIOD/END", fault.Quote(s))
	}
	switch {
	case strings.HasPrefix(a, "P") && strings.HasPrefix(b, "P"):
		return start, end, fmt.Errorf("interval %s: two periods bound nothing", fault.Quote(s))
	case strings.HasPrefix(a, "P"):
		if end, err = ParseInstant(b); err == nil {
			start, err = addPeriod(end, a, -1)
		}
	case strings.HasPrefix(b, "P"):
		if start, err = ParseInstant(a); err == nil {
			end, err = addPeriod(start, b, 1)
		}
	default:
		if start, err = ParseInstant(a); err == nil {
			end, err = ParseInstant(b)
		}
	}
	if err != nil {
		return start, end, fmt.Errorf("interval %s: %w", fault.Quote(s), err)
	}
	if end.Before(start) {
		return start, end, fmt.Errorf("interval %s ends before it starts", fault.Quote(s))
	}
	return start, end, nil
}

var isoPeriod = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:[.,](\d{1,3}))?S)?)?$`)

// addPeriod adds an ISO 8601 period sign times, field by field as Joda's
// Period does: years, months, weeks and days by the calendar, then the
// time fields.
func addPeriod(t time.Time, p string, sign int) (time.Time, error) {
	m := isoPeriod.FindStringSubmatch(p)
	if m == nil || p == "P" || strings.HasSuffix(p, "T") {
		return t, fmt.Errorf("period %s is not ISO 8601 (such as P1D, P1M or PT6H)", fault.Quote(p))
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return sign * v }
	t = t.AddDate(n(1), n(2), 7*n(3)+n(4))
	ms := 0
	if m[8] != "" {
		ms, _ = strconv.Atoi((m[8] + "00")[:3])
	}
	return t.Add(time.Duration(n(5))*time.Hour + time.Duration(n(6))*time.Minute + time.Duration(n(7))*time.Second +
		time.Duration(sign*ms)*time.Millisecond), nil
}

// The years Druid keeps apart without surprises. Druid's metadata store
// holds a segment's interval as text (the start and end columns of the
// segments table, VARCHAR), and finds the segments of an interval by
// comparing that text, which orders instants only while their years have
// four digits and no sign: "10000-01-01" sorts before "2024-01-01".
// SqlSegmentsMetadataQuery compares text only when the interval asked for
// lies in the years 0 to 9999 (DateTimes.canCompareAsString; #12844 adds
// eternity, #15608 half-eternity), so a segment that reaches past them
// can still be missed by a query of a plain interval (apache/druid#12860):
// a later REPLACE, drop or compaction may not see it. A statement cannot
// name such an interval either: a TIMESTAMP literal has a four-digit year
// (Calcite's TimestampString).
var (
	firstSegmentYear = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	afterSegmentYear = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

// InSegmentYears reports whether the instant ms (epoch milliseconds) lies
// in the years 1 to 9999, where Druid finds a segment by its interval
// without surprises.
func InSegmentYears(ms int64) bool { return ms >= firstSegmentYear && ms < afterSegmentYear }

// FormatInstant writes epoch milliseconds as Druid does (Joda's ISO form,
// as in Intervals.ETERNITY's "146140482-04-24T15:36:27.903Z"): a year of
// at least four digits, negative ones (year 0 is 1 BC) with a minus.
func FormatInstant(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	y := t.Year()
	rest := t.Format("-01-02T15:04:05.000Z")
	switch {
	case y > 9999:
		return fmt.Sprintf("%d%s", y, rest)
	case y < 0:
		return fmt.Sprintf("-%04d%s", -y, rest)
	}
	return fmt.Sprintf("%04d%s", y, rest)
}
