package splits

import (
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// The years Druid keeps apart without surprises. Druid's metadata store
// holds a segment's interval as text (the start and end columns of the
// segments table, VARCHAR), and finds the segments of an interval by
// comparing that text, which orders instants only while their years have
// four digits and no sign: "10000-01-01" sorts before "2024-01-01".
// SqlSegmentsMetadataQuery compares text only when the interval asked for
// lies in the years 0 to 9999 (DateTimes.canCompareAsString; #12844 adds
// eternity, #15608 half-eternity), so a segment that reaches past them
// can still be missed by a query of a plain interval (apache/druid#12860):
// a later REPLACE, drop or compaction may not see it. A statement cannot name such an interval either: a
// TIMESTAMP literal has a four-digit year (Calcite's TimestampString).
var (
	firstDruidYear = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	afterDruidYear = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

// timeRangeWarning warns when the metadata of the plan's files shows
// times of the request's time column, as Druid gets them (epoch
// milliseconds, within the request's interval), outside the years 1 to
// 9999. Files without bounds for the column say nothing; the warning
// needs a bound that proves such a time.
func (pl *planning) timeRangeWarning() {
	name := pl.req.TimeColumn
	if pl.req.Interval != nil {
		name = pl.req.Interval.Column
	}
	i := slices.IndexFunc(pl.schema.Fields(), func(f iceberg.NestedField) bool { return f.Name == name })
	if name == "" || i < 0 {
		return
	}
	col, err := NewTimeColumn(pl.tbl.Metadata(), pl.schema.Fields()[i])
	if err != nil {
		return // the generator refuses the column itself
	}
	lo, hi := int64(0), int64(0)
	found := false
	for _, t := range pl.tasks {
		s, ext := col.FileTimes(t.File)
		if ext != ExtentKnown {
			continue
		}
		a, ok1 := col.Millis(s.Lo)
		b, ok2 := col.Millis(s.Hi)
		if !ok1 || !ok2 {
			continue
		}
		if iv := pl.req.Interval; iv != nil {
			a, b = max(a, iv.Start.UnixMilli()), min(b, iv.End.UnixMilli()-1)
			if a > b {
				continue
			}
		}
		if !found || a < lo {
			lo = a
		}
		if !found || b > hi {
			hi = b
		}
		found = true
	}
	if !found || (lo >= firstDruidYear && hi < afterDruidYear) {
		return
	}
	pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("time column %s holds times from %s to %s (the files' column bounds), "+
		"outside the years 1 to 9999: Druid's metadata store compares segment intervals as text, which orders such years wrongly, "+
		"so a later REPLACE, drop or compaction can miss their segments (apache/druid#12860), and no OVERWRITE WHERE can name them "+
		"(TIMESTAMP literals have four-digit years); filter them out (icebergFilter) or ingest them apart",
		fault.Quote(name), druidInstant(lo), druidInstant(hi)))
}

// druidInstant writes epoch milliseconds as Druid does (Joda's ISO form,
// as in Intervals.ETERNITY's "146140482-04-24T15:36:27.903Z"): a year of
// at least four digits, negative ones (year 0 is 1 BC) with a minus.
func druidInstant(ms int64) string {
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
