package splits

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// A table's time column, the one Druid's __time comes from, and what the
// metadata says of the times a data file holds: its partition (identity,
// hour, day, month and year transforms of the column) and its lower and
// upper bounds. The snapshot diff of /changes finds the changed intervals
// with it, and a plan restricted to a time interval (Request.Interval)
// selects its files with it.

// TimeColumn is a table's time column: a timestamp (micro- or
// nanoseconds, with or without zone), a date, or a long of epoch
// milliseconds.
type TimeColumn struct {
	meta  table.Metadata
	field iceberg.NestedField
	unit  unit
}

// NewTimeColumn returns field of the table meta as a time column.
func NewTimeColumn(meta table.Metadata, field iceberg.NestedField) (TimeColumn, error) {
	u, ok := timeUnit(field.Type)
	if !ok {
		return TimeColumn{}, fmt.Errorf("%w: column %q is %s; want a timestamp, date or long (epoch millis) column",
			fault.ErrBadRequest, field.Name, field.Type)
	}
	return TimeColumn{meta: meta, field: field, unit: u}, nil
}

// IsTimeType reports whether a column of type t can be a time column.
func IsTimeType(t iceberg.Type) bool {
	_, ok := timeUnit(t)
	return ok
}

// Field is the column.
func (d TimeColumn) Field() iceberg.NestedField { return d.field }

// Millis converts a value of the column to what the sidecar serves Druid:
// epoch milliseconds, truncated toward zero (see unit.millis); ok is false
// when the result overflows.
func (d TimeColumn) Millis(v int64) (ms int64, ok bool) { return d.unit.millis(v) }

// unit is how a time column's values become Druid milliseconds.
type unit int

const (
	unitMicros unit = iota
	unitNanos
	unitDays
	unitMillis
)

// timeUnit is the unit of a time column of type t; ok is false for a type
// Druid's __time cannot come from.
func timeUnit(t iceberg.Type) (unit, bool) {
	switch t.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return unitMicros, true
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return unitNanos, true
	case iceberg.DateType:
		return unitDays, true
	case iceberg.Int64Type:
		return unitMillis, true
	}
	return 0, false
}

// millis converts a value of the column's unit to what the sidecar serves
// Druid: epoch milliseconds, truncated toward zero (so 1 µs before the epoch
// is 0 ms, on 1970-01-01). Truncation is monotonic, so a range of values
// maps to the range of their milliseconds. ok is false when the result
// overflows.
func (u unit) millis(v int64) (ms int64, ok bool) {
	switch u {
	case unitMicros:
		return v / 1000, true
	case unitNanos:
		return v / 1_000_000, true
	case unitDays:
		const perDay = 86_400_000
		if v > (1<<63-1)/perDay || v < -(1<<63-1)/perDay {
			return 0, false
		}
		return v * perDay, true
	}
	return v, true
}

// Span is an inclusive range of a time column's values, in its unit (see
// TimeColumn).
type Span struct{ Lo, Hi int64 }

// Intersect is the part of s inside o; ok is false when there is none.
func (s Span) Intersect(o Span) (_ Span, ok bool) {
	r := Span{max(s.Lo, o.Lo), min(s.Hi, o.Hi)}
	return r, r.Lo <= r.Hi
}

// Extent is what is known of the times a data file holds.
type Extent int

// The extents.
const (
	ExtentKnown   Extent = iota // within a span
	ExtentNone                  // no non-null time: nothing for Druid
	ExtentUnknown               // anything
)

// FileTimes is what a data file's partition and column metrics say of its
// values of the time column.
func (d TimeColumn) FileTimes(f iceberg.DataFile) (Span, Extent) {
	fid := d.field.ID
	if f.Count() == 0 || AllNull(f, fid) {
		return Span{}, ExtentNone
	}
	s, known := d.Bounds(f, fid)
	if ps, ext := d.partitionSpan(f); ext == ExtentNone {
		return Span{}, ExtentNone
	} else if ext == ExtentKnown {
		if !known {
			return ps, ExtentKnown
		}
		both, ok := s.Intersect(ps)
		if !ok {
			// Bounds and partition disagree: believe neither alone.
			return Span{min(s.Lo, ps.Lo), max(s.Hi, ps.Hi)}, ExtentKnown
		}
		return both, ExtentKnown
	}
	if !known {
		return Span{}, ExtentUnknown
	}
	return s, ExtentKnown
}

// AllNull says whether the metrics show every value of a column to be null.
func AllNull(f iceberg.DataFile, fid int) bool {
	nulls, ok := f.NullValueCounts()[fid]
	if !ok {
		return false
	}
	if nulls == f.Count() {
		return true
	}
	values, ok := f.ValueCounts()[fid]
	return ok && values == nulls
}

// Bounds decodes a file's lower and upper bounds of column fid, a column
// of the time column's type.
func (d TimeColumn) Bounds(f iceberg.DataFile, fid int) (Span, bool) {
	lo, ok1 := f.LowerBoundValues()[fid]
	hi, ok2 := f.UpperBoundValues()[fid]
	if !ok1 || !ok2 {
		return Span{}, false
	}
	a, ok1 := decodeTime(d.unit, lo)
	b, ok2 := decodeTime(d.unit, hi)
	if !ok1 || !ok2 || a > b {
		return Span{}, false
	}
	return Span{a, b}, true
}

// decodeTime decodes an Iceberg single-value binary of a time column: a
// long (8 bytes, little endian) for timestamps and longs, an int (4 bytes)
// for dates and for longs promoted from int.
func decodeTime(u unit, b []byte) (int64, bool) {
	switch {
	case len(b) == 8 && u != unitDays:
		return int64(binary.LittleEndian.Uint64(b)), true
	case len(b) == 4 && (u == unitDays || u == unitMillis):
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	}
	return 0, false
}

// partitionSpan is what the partition of a data file says of its time
// values: the identity, hour, day, month or year transform of the time
// column pins them to a range (a null partition value to null times).
func (d TimeColumn) partitionSpan(f iceberg.DataFile) (Span, Extent) {
	spec := d.meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return Span{}, ExtentUnknown
	}
	out, ext := Span{}, ExtentUnknown
	for _, pf := range spec.Fields() {
		if pf.SourceID() != d.field.ID {
			continue
		}
		raw, present := f.Partition()[pf.FieldID]
		if !present {
			continue
		}
		if raw == nil {
			switch pf.Transform.(type) {
			case iceberg.IdentityTransform, iceberg.HourTransform, iceberg.DayTransform, iceberg.MonthTransform, iceberg.YearTransform:
				return Span{}, ExtentNone
			}
			continue
		}
		v, ok := asInt64(raw)
		if !ok {
			continue
		}
		s, ok := transformSpan(pf.Transform, d.unit, v)
		if !ok {
			continue
		}
		if ext == ExtentKnown {
			if s, ok = s.Intersect(out); !ok {
				return Span{}, ExtentUnknown
			}
		}
		out, ext = s, ExtentKnown
	}
	return out, ext
}

// transformSpan is the range of source values (in the time column's unit)
// that a partition value v of transform t stands for.
func transformSpan(t iceberg.Transform, u unit, v int64) (Span, bool) {
	if _, ok := t.(iceberg.IdentityTransform); ok {
		return Span{v, v}, true
	}
	var start, end time.Time // [start, end)
	switch t.(type) {
	case iceberg.HourTransform:
		if u == unitDays || u == unitMillis {
			return Span{}, false
		}
		start = time.Unix(v*3600, 0)
		end = start.Add(time.Hour)
	case iceberg.DayTransform:
		start = time.Unix(v*86400, 0)
		end = start.AddDate(0, 0, 1)
	case iceberg.MonthTransform:
		start = time.Date(1970, time.January+time.Month(v), 1, 0, 0, 0, 0, time.UTC)
		end = start.AddDate(0, 1, 0)
	case iceberg.YearTransform:
		start = time.Date(1970+int(v), time.January, 1, 0, 0, 0, 0, time.UTC)
		end = start.AddDate(1, 0, 0)
	default:
		return Span{}, false
	}
	if u == unitMillis {
		// Time transforms do not apply to a long column.
		return Span{}, false
	}
	if start.Year() < 1 || end.Year() > 9999 {
		return Span{}, false
	}
	switch u {
	case unitMicros:
		return Span{start.UnixMicro(), end.UnixMicro() - 1}, true
	case unitNanos:
		if start.Year() < 1678 || end.Year() > 2261 {
			return Span{}, false
		}
		return Span{start.UnixNano(), end.UnixNano() - 1}, true
	}
	// Days: midnights are whole days.
	return Span{start.Unix() / 86400, end.Unix()/86400 - 1}, true
}

// asInt64 reads a partition value of an integer-like type.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case iceberg.Date:
		return int64(x), true
	case iceberg.Timestamp:
		return int64(x), true
	case iceberg.TimestampNano:
		return int64(x), true
	}
	return 0, false
}

// IntervalFilter is the icebergFilter that keeps exactly the rows whose
// time column the sidecar serves as a Druid time in [start, end): a
// timestamp is served as epoch milliseconds truncated toward zero, so
// before 1970 the bounds move by up to a millisecond less one unit
// (-0.5 ms is served as 0, on 1970-01-01); a long is compared as epoch
// milliseconds.
func IntervalFilter(field iceberg.NestedField, start, end time.Time) (*druid.Filter, error) {
	u, ok := timeUnit(field.Type)
	if !ok {
		return nil, fmt.Errorf("%w: column %q is %s, not a time column", fault.ErrBadRequest, field.Name, field.Type)
	}
	startMs, endMs := start.UnixMilli(), end.UnixMilli()
	raw := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	f := &druid.Filter{FilterColumn: field.Name}
	switch u {
	case unitMillis:
		f.Type, f.Lower, f.Upper, f.UpperOpen = "range", raw(startMs), raw(endMs), true
		return f, nil
	case unitDays:
		// A date is served as the milliseconds of its midnight, exactly.
		f.Type, f.Intervals = "interval", []string{iso(time.UnixMilli(startMs)) + "/" + iso(time.UnixMilli(endMs))}
		return f, nil
	}
	// The first value served as ms: ms×k from 1970 on, ms×k-(k-1) before
	// (truncation toward zero), with k units in a millisecond.
	first := func(ms int64) time.Time {
		if u == unitMicros {
			if ms > 0 {
				return time.UnixMicro(ms * 1000)
			}
			return time.UnixMicro(ms*1000 - 999)
		}
		if ms > 0 {
			return time.Unix(0, ms*1_000_000)
		}
		return time.Unix(0, ms*1_000_000-999_999)
	}
	f.Type, f.Intervals = "interval", []string{iso(first(startMs)) + "/" + iso(first(endMs))}
	return f, nil
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
