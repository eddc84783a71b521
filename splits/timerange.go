package splits

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// timeRangeWarning warns when the metadata of the plan's files shows
// times of the request's time column, as Druid gets them (epoch
// milliseconds, within the request's interval), outside the years 1 to
// 9999 (druid.InSegmentYears). Files without bounds for the column say
// nothing; the warning needs a bound that proves such a time.
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
	if !found || (druid.InSegmentYears(lo) && druid.InSegmentYears(hi)) {
		return
	}
	pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("time column %s holds times from %s to %s (the files' column bounds), "+
		"outside the years 1 to 9999: Druid's metadata store compares segment intervals as text, which orders such years wrongly, "+
		"so a later REPLACE, drop or compaction can miss their segments (apache/druid#12860), and no OVERWRITE WHERE can name them "+
		"(TIMESTAMP literals have four-digit years); filter them out (icebergFilter) or ingest them apart",
		fault.Quote(name), druid.FormatInstant(lo), druid.FormatInstant(hi)))
}
