package splits

import (
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// The time interval of a plan (Request.Interval), the end of Plan's scan
// step: of the scanned files, keep those whose partition and column
// metrics allow a time in the interval (TimeColumn.FileTimes), and filter
// their rows to the interval row by row, except in a file whose times all
// lie inside it and that holds no null time. It is decided from the scan's
// own files, so /changes cuts the plan of each changed interval from one
// scan of the target snapshot.

// intervalSelection is a request's interval as the scan step applied it.
type intervalSelection struct {
	// filter keeps the rows of the interval, bound to the schema.
	filter iceberg.BooleanExpression
	// within holds the paths of the files all of whose rows lie in the
	// interval: they need no filter.
	within map[string]bool
}

// selectInterval keeps the tasks that may hold rows of the request's
// interval, if it has one.
func (pl *planning) selectInterval() error {
	iv := pl.req.Interval
	pl.interval = nil
	if iv == nil {
		return nil
	}
	i := slices.IndexFunc(pl.schema.Fields(), func(f iceberg.NestedField) bool { return f.Name == iv.Column })
	if i < 0 {
		return fmt.Errorf("%w: time column %s is not a top-level column of the table", fault.ErrBadRequest, fault.Quote(iv.Column))
	}
	col, err := NewTimeColumn(pl.tbl.Metadata(), pl.schema.Fields()[i])
	if err != nil {
		return err
	}
	f, err := IntervalFilter(col.Field(), iv.Start, iv.End)
	if err != nil {
		return err
	}
	expr, err := f.Expression(pl.schema, time.Time{})
	if err != nil {
		return err
	}
	sel := &intervalSelection{within: map[string]bool{}}
	if sel.filter, err = iceberg.BindExpr(pl.schema, expr, true); err != nil {
		return fmt.Errorf("bind the filter of interval %s/%s: %w", iv.Start, iv.End, err)
	}
	startMs, endMs := iv.Start.UnixMilli(), iv.End.UnixMilli()
	var kept []table.FileScanTask
	for _, t := range pl.tasks {
		s, ext := col.FileTimes(t.File)
		switch ext {
		case ExtentNone:
			continue // no time Druid ingests
		case ExtentKnown:
			lo, ok1 := col.Millis(s.Lo)
			hi, ok2 := col.Millis(s.Hi)
			if ok1 && ok2 {
				if hi < startMs || lo >= endMs {
					continue
				}
				nulls, known := t.File.NullValueCounts()[col.Field().ID]
				sel.within[t.File.FilePath()] = lo >= startMs && hi < endMs && known && nulls == 0
			}
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 && len(pl.tasks) > 0 {
		pl.plan.Empty = true
	}
	pl.tasks, pl.interval = kept, sel
	return nil
}
