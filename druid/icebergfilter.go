package druid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// Filter is Druid's icebergFilter object: equals, interval, range, and, or,
// not and timeWindow, with Druid's field names. It is turned into an
// iceberg-go expression over the table's schema, which prunes planning.
type Filter struct {
	Type              string
	FilterColumn      string
	FilterValue       json.RawMessage
	Intervals         []string
	Lower, Upper      json.RawMessage
	LowerOpen         bool
	UpperOpen         bool
	Filters           []Filter
	Filter            *Filter
	LookbackDuration  json.RawMessage
	LookaheadDuration json.RawMessage
	BaseTime          string
	// ignored are the fields of the JSON this filter does not take.
	ignored []string
}

// filterFields are the JSON fields each filter type takes. Druid's mapper
// ignores any other (DefaultObjectMapper: FAIL_ON_UNKNOWN_PROPERTIES
// false), so the sidecar plans such a filter too, and names each ignored
// field in the answer's warnings (Ignored): a typo shows there.
var filterFields = map[string][]string{
	"equals":     {"type", "filterColumn", "filterValue"},
	"interval":   {"type", "filterColumn", "intervals"},
	"range":      {"type", "filterColumn", "lower", "upper", "lowerOpen", "upperOpen"},
	"and":        {"type", "filters"},
	"or":         {"type", "filters"},
	"not":        {"type", "filter"},
	"timeWindow": {"type", "filterColumn", "lookbackDuration", "lookaheadDuration", "baseTime"},
}

// UnmarshalJSON decodes a filter: an unknown type is an error that names
// it (Druid refuses an unknown type id too); a field the type does not
// take is ignored and kept for Ignored.
func (f *Filter) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("icebergFilter: %w", err)
	}
	var typ string
	if err := json.Unmarshal(raw["type"], &typ); err != nil || typ == "" {
		return fmt.Errorf("icebergFilter: a filter needs a \"type\" (one of %s)", filterTypes())
	}
	allowed, ok := filterFields[typ]
	if !ok {
		return fmt.Errorf("icebergFilter: unknown filter type %q (want one of %s)", typ, filterTypes())
	}
	*f = Filter{Type: typ}
	for k := range raw {
		if !slices.Contains(allowed, k) {
			f.ignored = append(f.ignored, k)
		}
	}
	sort.Strings(f.ignored)
	str := func(key string, dst *string) error {
		if v, ok := raw[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("icebergFilter: %s.%s must be a string", typ, key)
			}
		}
		return nil
	}
	boolean := func(key string, dst *bool) error {
		if v, ok := raw[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("icebergFilter: %s.%s must be true or false", typ, key)
			}
		}
		return nil
	}
	if err := str("filterColumn", &f.FilterColumn); err != nil {
		return err
	}
	if err := str("baseTime", &f.BaseTime); err != nil {
		return err
	}
	if err := boolean("lowerOpen", &f.LowerOpen); err != nil {
		return err
	}
	if err := boolean("upperOpen", &f.UpperOpen); err != nil {
		return err
	}
	f.FilterValue, f.Lower, f.Upper = raw["filterValue"], raw["lower"], raw["upper"]
	f.LookbackDuration, f.LookaheadDuration = raw["lookbackDuration"], raw["lookaheadDuration"]
	if v, ok := raw["intervals"]; ok {
		if err := json.Unmarshal(v, &f.Intervals); err != nil {
			return fmt.Errorf("icebergFilter: interval.intervals must be a list of ISO 8601 interval strings")
		}
	}
	if v, ok := raw["filters"]; ok {
		if err := json.Unmarshal(v, &f.Filters); err != nil {
			return err
		}
	}
	if v, ok := raw["filter"]; ok {
		f.Filter = &Filter{}
		if err := json.Unmarshal(v, f.Filter); err != nil {
			return err
		}
	}
	return nil
}

// Ignored names the fields of the filter's JSON, and of the filters in
// it, that were ignored, as warnings; path names the filter itself.
// At most MaxIgnoredWarnings are named, then their number.
func (f *Filter) Ignored(path string) []string {
	var out []string
	n := f.ignoredTo(path, &out)
	if n > len(out) {
		out = append(out, fmt.Sprintf("%d more ignored filter fields", n-len(out)))
	}
	return out
}

// MaxIgnoredWarnings bounds the warnings that name ignored fields, so that
// a spec of many unknown fields does not make a long answer.
const MaxIgnoredWarnings = 20

// ignoredTo appends the warnings of f and its filters to out, up to the
// bound, and returns how many there are in all.
func (f *Filter) ignoredTo(path string, out *[]string) int {
	n := 0
	for _, k := range f.ignored {
		if n++; len(*out) < MaxIgnoredWarnings {
			*out = append(*out, fmt.Sprintf("%s.%s is ignored: a %s filter has no such field (Druid ignores it too)", path, fault.Short(k), f.Type))
		}
	}
	for i := range f.Filters {
		n += f.Filters[i].ignoredTo(fmt.Sprintf("%s.filters[%d]", path, i), out)
	}
	if f.Filter != nil {
		n += f.Filter.ignoredTo(path+".filter", out)
	}
	return n
}

func filterTypes() string {
	var names []string
	for k := range filterFields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Expression turns the filter into an iceberg-go expression over schema;
// now is the base time of a timeWindow without one. Errors wrap
// fault.ErrBadRequest and say which filter and column they are about.
//
// A null matches no comparison, as in Druid SQL and SQL generally, also
// under `not`: negations are pushed down to the comparisons, and each
// comparison is guarded with not_null. (iceberg-go's row evaluator, like
// Iceberg Java's, orders nulls first, so a bare `x < 5` would keep a null x.)
// For and/or trees of comparisons, a row passes exactly when SQL's
// three-valued result is TRUE.
func (f *Filter) Expression(schema *iceberg.Schema, now time.Time) (iceberg.BooleanExpression, error) {
	e, err := f.expr(schema, now)
	if err != nil {
		return nil, err
	}
	pushed, err := iceberg.RewriteNotExpr(e)
	if err != nil {
		return nil, fmt.Errorf("%w: icebergFilter: %w", fault.ErrBadRequest, err)
	}
	return iceberg.VisitExpr[iceberg.BooleanExpression](pushed, nullsMatchNothing{})
}

// nullsMatchNothing guards every comparison with not_null; it runs after
// RewriteNotExpr, so no `not` is left above a comparison.
type nullsMatchNothing struct{}

func (nullsMatchNothing) VisitTrue() iceberg.BooleanExpression  { return iceberg.AlwaysTrue{} }
func (nullsMatchNothing) VisitFalse() iceberg.BooleanExpression { return iceberg.AlwaysFalse{} }
func (nullsMatchNothing) VisitNot(c iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewNot(c)
}
func (nullsMatchNothing) VisitAnd(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewAnd(l, r)
}
func (nullsMatchNothing) VisitOr(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
	return iceberg.NewOr(l, r)
}
func (nullsMatchNothing) VisitBound(p iceberg.BoundPredicate) iceberg.BooleanExpression { return p }
func (nullsMatchNothing) VisitUnbound(p iceberg.UnboundPredicate) iceberg.BooleanExpression {
	switch p.Op() {
	case iceberg.OpIsNull, iceberg.OpNotNull, iceberg.OpIsNan, iceberg.OpNotNan:
		return p
	}
	return iceberg.NewAnd(iceberg.NotNull(p.Term()), p)
}

// expr builds the expression as Druid's filter reads, before null guards.
func (f *Filter) expr(schema *iceberg.Schema, now time.Time) (iceberg.BooleanExpression, error) {
	// bad is the error of the filter f: format's %w keep the cause.
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: icebergFilter %s: "+format, append([]any{fault.ErrBadRequest, f.Type}, args...)...)
	}
	var field iceberg.NestedField
	if slices.Contains(filterFields[f.Type], "filterColumn") {
		if f.FilterColumn == "" {
			return nil, bad("filterColumn is required")
		}
		var ok bool
		if field, ok = schema.FindFieldByName(f.FilterColumn); !ok {
			return nil, bad("the table has no column %q", f.FilterColumn)
		}
	}
	ref := iceberg.Reference(f.FilterColumn)
	switch f.Type {
	case "equals":
		if len(f.FilterValue) == 0 {
			return nil, bad("filterValue is required")
		}
		lit, err := literalFor(field, f.FilterValue)
		if err != nil {
			return nil, bad("%w", err)
		}
		if lit == nil {
			return iceberg.IsNull(ref), nil
		}
		return iceberg.LiteralPredicate(iceberg.OpEQ, ref, lit), nil

	case "range":
		// A null bound is an absent bound (IcebergRangeFilter's
		// @Nullable lower and upper).
		absent := func(raw json.RawMessage) bool { return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" }
		if absent(f.Lower) && absent(f.Upper) {
			return nil, bad("Both lower and upper bounds cannot be empty: give lower, upper or both")
		}
		var parts []iceberg.BooleanExpression
		for _, b := range []struct {
			raw        json.RawMessage
			open       bool
			opOpen, op iceberg.Operation
		}{{f.Lower, f.LowerOpen, iceberg.OpGT, iceberg.OpGTEQ}, {f.Upper, f.UpperOpen, iceberg.OpLT, iceberg.OpLTEQ}} {
			if absent(b.raw) {
				continue
			}
			lit, err := literalFor(field, b.raw)
			if err != nil {
				return nil, bad("%w", err)
			}
			op := b.op
			if b.open {
				op = b.opOpen
			}
			parts = append(parts, iceberg.LiteralPredicate(op, ref, lit))
		}
		return andAll(parts), nil

	case "interval":
		if len(f.Intervals) == 0 {
			return nil, bad("intervals is required")
		}
		parts := make([]iceberg.BooleanExpression, 0, len(f.Intervals))
		for _, s := range f.Intervals {
			start, end, err := ParseInterval(s)
			if err != nil {
				return nil, bad("%w", err)
			}
			// Druid's interval is [start, end).
			e, err := timeBounds(field, start, end, false)
			if err != nil {
				return nil, bad("%w", err)
			}
			parts = append(parts, e)
		}
		return orAll(parts), nil

	case "timeWindow":
		back, err := durationOf(f.LookbackDuration, 24*time.Hour)
		if err != nil {
			return nil, bad("lookbackDuration: %w", err)
		}
		ahead, err := durationOf(f.LookaheadDuration, 0)
		if err != nil {
			return nil, bad("lookaheadDuration: %w", err)
		}
		base := now
		if f.BaseTime != "" {
			if base, err = ParseInstant(f.BaseTime); err != nil {
				return nil, bad("baseTime: %w", err)
			}
		}
		// Druid's time window includes both ends.
		e, err := timeBounds(field, base.Add(-back), base.Add(ahead), true)
		if err != nil {
			return nil, bad("%w", err)
		}
		return e, nil

	case "and", "or":
		if len(f.Filters) == 0 {
			return nil, bad("filters is required")
		}
		var parts []iceberg.BooleanExpression
		for i := range f.Filters {
			e, err := f.Filters[i].expr(schema, now)
			if err != nil {
				return nil, err
			}
			parts = append(parts, e)
		}
		if f.Type == "and" {
			return andAll(parts), nil
		}
		return orAll(parts), nil

	case "not":
		if f.Filter == nil {
			return nil, bad("filter is required")
		}
		e, err := f.Filter.expr(schema, now)
		if err != nil {
			return nil, err
		}
		return iceberg.NewNot(e), nil
	}
	return nil, bad("unknown filter type")
}

// andAll and orAll join parts into a balanced tree, true and false when
// there are none. A chain would be as deep as the list is long, and
// iceberg-go's String, JSON encoding and parsing of an expression cost the
// square of its depth: a 2,000-way or took seconds, and its residual rode
// in every row URI.
func andAll(parts []iceberg.BooleanExpression) iceberg.BooleanExpression {
	return balanced(parts, iceberg.AlwaysTrue{}, func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
		return iceberg.NewAnd(l, r)
	})
}

func orAll(parts []iceberg.BooleanExpression) iceberg.BooleanExpression {
	return balanced(parts, iceberg.AlwaysFalse{}, func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression {
		return iceberg.NewOr(l, r)
	})
}

func balanced(parts []iceberg.BooleanExpression, none iceberg.BooleanExpression,
	join func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression) iceberg.BooleanExpression {
	switch len(parts) {
	case 0:
		return none
	case 1:
		return parts[0]
	}
	mid := len(parts) / 2
	return join(balanced(parts[:mid], none, join), balanced(parts[mid:], none, join))
}

// literalFor converts a JSON filter value to a literal of the field's type;
// JSON null gives a nil literal. Timestamps accept the ISO 8601 forms Druid
// users write (with or without zone, or a date) and integer epoch
// milliseconds, as Druid's own timestamps are.
func literalFor(field iceberg.NestedField, raw json.RawMessage) (iceberg.Literal, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("value %s is not JSON", raw)
	}
	if v == nil {
		return nil, nil
	}
	typ := field.Type
	fail := func() error {
		return fmt.Errorf("value %s cannot be converted to column %q of type %s", raw, field.Name, typ)
	}
	if isTimeType(typ) {
		var t time.Time
		switch x := v.(type) {
		case string:
			var err error
			if t, err = ParseInstant(x); err != nil {
				return nil, fail()
			}
		case json.Number:
			ms, err := x.Int64()
			if err != nil {
				return nil, fail()
			}
			t = time.UnixMilli(ms)
		default:
			return nil, fail()
		}
		return timeLiteral(typ, t)
	}
	var lit iceberg.Literal
	switch x := v.(type) {
	case bool:
		lit = iceberg.NewLiteral(x)
	case string:
		lit = iceberg.NewLiteral(x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			lit = iceberg.NewLiteral(n)
		} else if _, isDec := typ.(iceberg.DecimalType); isDec {
			lit = iceberg.NewLiteral(x.String())
		} else if f, err := x.Float64(); err == nil {
			lit = iceberg.NewLiteral(f)
		} else {
			return nil, fail()
		}
	default:
		return nil, fail()
	}
	out, err := lit.To(typ)
	if err != nil {
		return nil, fail()
	}
	return out, nil
}

func isTimeType(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return true
	}
	return false
}

// timeLiteral is t as a literal of a timestamp-like column. For a date
// column it is the first day whose midnight is at or after t (ceil), so a
// date is in a time range exactly when its midnight is.
func timeLiteral(typ iceberg.Type, t time.Time) (iceberg.Literal, error) {
	switch typ.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.Int64Type:
		return iceberg.NewLiteral(t.UnixMicro()).To(typ)
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		if t.Year() < 1678 || t.Year() > 2261 {
			return nil, fmt.Errorf("time %s is out of the range of nanosecond timestamps", t.UTC().Format(time.RFC3339))
		}
		return iceberg.NewLiteral(iceberg.TimestampNano(t.UnixNano())), nil
	case iceberg.DateType:
		days := t.Unix() / 86400
		if t.Unix() < 0 && t.Unix()%86400 != 0 {
			days-- // floor toward minus infinity
		}
		if time.Unix(days*86400, 0).Before(t) {
			days++
		}
		if days < math.MinInt32 || days > math.MaxInt32 {
			return nil, fmt.Errorf("time %s is out of the range of dates", t.UTC().Format(time.RFC3339))
		}
		return iceberg.NewLiteral(iceberg.Date(days)), nil
	}
	return nil, fmt.Errorf("a time filter needs a timestamp, date or long column, not %s", typ)
}

// timeBounds is start <= column < end (or <= end when endInclusive) for a
// time-like column. A long column is compared in epoch microseconds, as
// Druid's own filters do.
func timeBounds(field iceberg.NestedField, start, end time.Time, endInclusive bool) (iceberg.BooleanExpression, error) {
	switch field.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
		iceberg.DateType, iceberg.Int64Type:
	default:
		return nil, fmt.Errorf("column %q is %s; interval and timeWindow filters need a timestamp, date or long column",
			field.Name, field.Type)
	}
	lo, err := timeLiteral(field.Type, start)
	if err != nil {
		return nil, err
	}
	ref := iceberg.Reference(field.Name)
	hiOp := iceberg.OpLT
	if endInclusive {
		hiOp = iceberg.OpLTEQ
		if _, isDate := field.Type.(iceberg.DateType); isDate {
			// date <= end: every day whose midnight is at or before end,
			// which is "< the first midnight after end".
			hiOp = iceberg.OpLT
			end = end.Add(time.Nanosecond)
		}
	}
	hi, err := timeLiteral(field.Type, end)
	if err != nil {
		return nil, err
	}
	return iceberg.NewAnd(iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, lo), iceberg.LiteralPredicate(hiOp, ref, hi)), nil
}

// durationOf reads a Joda Duration as Druid's JSON carries it: an ISO 8601
// period of fixed length (weeks, days, hours, minutes, seconds) or integer
// milliseconds. Absent gives def.
func durationOf(raw json.RawMessage, def time.Duration) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return def, nil
	}
	var ms int64
	if err := json.Unmarshal(raw, &ms); err == nil {
		return time.Duration(ms) * time.Millisecond, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("%s is neither an ISO 8601 duration nor milliseconds", raw)
	}
	return parseISODuration(s)
}

// parseISODuration parses PnW, PnDTnHnMnS and their parts. Years and months
// have no fixed length, so they are refused, as Joda's standard durations do.
func parseISODuration(s string) (time.Duration, error) {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return 0, fmt.Errorf("duration %q: want an ISO 8601 duration such as P1D or PT6H", s)
	}
	var d time.Duration
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "YMWDHS")
		if i <= 0 {
			return 0, fmt.Errorf("duration %q: want an ISO 8601 duration such as P1D or PT6H", s)
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("duration %q: bad number %q", s, rest[:i])
		}
		var unit time.Duration
		switch u := rest[i]; {
		case u == 'W' && !inTime:
			unit = 7 * 24 * time.Hour
		case u == 'D' && !inTime:
			unit = 24 * time.Hour
		case u == 'H' && inTime:
			unit = time.Hour
		case u == 'M' && inTime:
			unit = time.Minute
		case u == 'S' && inTime:
			unit = time.Second
		default:
			return 0, fmt.Errorf("duration %q: years and months have no fixed length; use weeks, days or hours", s)
		}
		d += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	return d, nil
}
