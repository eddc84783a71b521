package splits

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
)

// TimeColumn finds the top-level column Druid's __time comes from and checks
// its type: a timestamp, a date or a long (epoch milliseconds).
func TimeColumn(schema *iceberg.Schema, name string) (iceberg.NestedField, error) {
	if name == "" {
		return iceberg.NestedField{}, fmt.Errorf("%w: timeColumn is required", ErrBadRequest)
	}
	i := slices.IndexFunc(schema.Fields(), func(f iceberg.NestedField) bool { return f.Name == name })
	if i < 0 {
		return iceberg.NestedField{}, fmt.Errorf("%w: timeColumn %q is not a top-level column of the table", ErrBadRequest, name)
	}
	f := schema.Fields()[i]
	if _, ok := TimeUnitOf(f.Type); !ok {
		return f, fmt.Errorf("%w: timeColumn %q is %s; want a timestamp, date or long (epoch millis) column",
			ErrBadRequest, name, f.Type)
	}
	return f, nil
}

// TimeUnit is how a time column's values become the Druid times the
// sidecar serves: epoch milliseconds.
type TimeUnit int

const (
	UnitMicros TimeUnit = iota
	UnitNanos
	UnitDays
	UnitMillis
)

// TimeUnitOf is the unit of a time column's type: a timestamp (micro- or
// nanoseconds), a date (days) or a long (epoch milliseconds).
func TimeUnitOf(t iceberg.Type) (TimeUnit, bool) {
	switch t.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return UnitMicros, true
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return UnitNanos, true
	case iceberg.DateType:
		return UnitDays, true
	case iceberg.Int64Type:
		return UnitMillis, true
	}
	return 0, false
}

// Millis converts a value of the column's unit to what the sidecar serves
// Druid: epoch milliseconds, truncated toward zero (so 1 µs before the epoch
// is 0 ms, on 1970-01-01). Truncation is monotonic, so a range of values
// maps to the range of their milliseconds. ok is false when the result
// overflows.
func (u TimeUnit) Millis(v int64) (ms int64, ok bool) {
	switch u {
	case UnitMicros:
		return v / 1000, true
	case UnitNanos:
		return v / 1_000_000, true
	case UnitDays:
		const perDay = 86_400_000
		if v > (1<<63-1)/perDay || v < -(1<<63-1)/perDay {
			return 0, false
		}
		return v * perDay, true
	}
	return v, true
}

// IntervalFilter is the icebergFilter that keeps exactly the rows whose
// time column the sidecar serves as a Druid time in [start, end): a
// timestamp is served as epoch milliseconds truncated toward zero, so
// before 1970 the bounds move by up to a millisecond less one unit
// (-0.5 ms is served as 0, on 1970-01-01); a long is compared as epoch
// milliseconds.
func IntervalFilter(field iceberg.NestedField, start, end time.Time) (*Filter, error) {
	u, ok := TimeUnitOf(field.Type)
	if !ok {
		return nil, fmt.Errorf("%w: column %q is %s, not a time column", ErrBadRequest, field.Name, field.Type)
	}
	startMs, endMs := start.UnixMilli(), end.UnixMilli()
	raw := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	f := &Filter{FilterColumn: field.Name}
	switch u {
	case UnitMillis:
		f.Type, f.Lower, f.Upper, f.UpperOpen = "range", raw(startMs), raw(endMs), true
		return f, nil
	case UnitDays:
		// A date is served as the milliseconds of its midnight, exactly.
		f.Type, f.Intervals = "interval", []string{isoInstant(time.UnixMilli(startMs)) + "/" + isoInstant(time.UnixMilli(endMs))}
		return f, nil
	}
	// The first value served as ms: ms×k from 1970 on, ms×k-(k-1) before
	// (truncation toward zero), with k units in a millisecond.
	first := func(ms int64) time.Time {
		if u == UnitMicros {
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
	f.Type, f.Intervals = "interval", []string{isoInstant(first(startMs)) + "/" + isoInstant(first(endMs))}
	return f, nil
}

// isoInstant is t in RFC 3339 with as many fractional digits as it needs.
func isoInstant(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
