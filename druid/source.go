package druid

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/token"
)

// Source is what a generated spec reads: the planned Druid inputSource and
// inputFormat, and the columns they serve.
type Source struct {
	// InputSource and InputFormat are the planned http inputSource and its
	// format. Druid's HttpInputSource refuses an empty uris list when it
	// is constructed ("Empty URIs"), so a Source without a URI cannot be
	// generated; see EmptySource.
	InputSource HTTPInputSource
	InputFormat InputFormat
	// Fields are the served top-level columns, in order.
	Fields []iceberg.NestedField
	// TimeField is the column __time comes from: a timestamp, a date or a
	// long of epoch milliseconds. It is the zero field when ConstantTime
	// is set.
	TimeField iceberg.NestedField
	// ConstantTime, when not zero, is the __time of every row, for a
	// table without a time column: the native timestampSpec names a
	// column no row has, with ConstantTime as its missingValue
	// (TimestampSpec.parseDateTime gives missingValue for a null or absent
	// value), and a statement selects it as a TIMESTAMP literal.
	ConstantTime time.Time
	// Encoding is how the values are served.
	Encoding token.Encoding
	// inline is EmptySource's stand-in, which reads no row, in place of
	// InputSource; nil otherwise.
	inline *inlineInputSource
}

// empty says that s is EmptySource's stand-in.
func (s Source) empty() bool { return s.inline != nil }

// inputSource is the inputSource a spec over s reads.
func (s Source) inputSource() any {
	if s.inline != nil {
		return s.inline
	}
	return s.InputSource
}

// TimeField checks that a served column can be __time: a timestamp, a
// date or a long (epoch milliseconds); param names it in the error.
func TimeField(fields []iceberg.NestedField, name, param string) (iceberg.NestedField, error) {
	if name == "" {
		return iceberg.NestedField{}, fmt.Errorf("%w: %s is required", ErrInvalid, param)
	}
	for _, f := range fields {
		if f.Name != name {
			continue
		}
		switch f.Type.(type) {
		case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
			iceberg.DateType, iceberg.Int64Type:
			return f, nil
		}
		return f, fmt.Errorf("%w: %s %q is %s; want a timestamp, date or long (epoch millis) column", ErrInvalid, param, name, f.Type)
	}
	return iceberg.NestedField{}, fmt.Errorf("%w: %s %q is not a column the plan serves", ErrInvalid, param, name)
}

// constant says that every row's __time is ConstantTime.
func (s Source) constant() bool { return !s.ConstantTime.IsZero() }

// checkConstant refuses a ConstantTime outside the years 1 to 9999: a
// statement writes it as a TIMESTAMP literal, which has a four-digit year
// (Calcite's TimestampString), and year 0 is no year of the calendar
// Druid's Joda times and the sidecar's ISO strings share.
func (s Source) checkConstant() error {
	if y := s.ConstantTime.UTC().Year(); s.constant() && (y < 1 || y > 9999) {
		return fmt.Errorf("%w: constantTime %s: want a time in the years 1 to 9999", ErrInvalid, s.ConstantTime.UTC().Format(time.RFC3339))
	}
	return nil
}

// ConstantTimeWarning says what a spec over a source with a ConstantTime
// does.
func (s Source) ConstantTimeWarning() string {
	return fmt.Sprintf("no time column: every row's __time is %s (constantTime), so the table lands in one time chunk; "+
		"a REPLACE or task with another constantTime writes another chunk and leaves this one", s.ConstantTime.UTC().Format(isoMillis))
}

// isoMillis is how Druid writes an instant.
const isoMillis = "2006-01-02T15:04:05.000Z"

// timestampSpec is the native task's timestampSpec: the time column in
// its format, or, with a ConstantTime, a column no row has and the time as
// its missingValue.
func (s Source) timestampSpec() map[string]any {
	if !s.constant() {
		return map[string]any{"column": s.TimeField.Name, "format": s.TimestampFormat()}
	}
	return map[string]any{"column": s.absentColumn(), "format": "auto", "missingValue": s.ConstantTime.UTC().Format(isoMillis)}
}

// absentColumn is a column name that no served column has.
func (s Source) absentColumn() string {
	name := "__constant_time"
	for slices.ContainsFunc(s.Fields, func(f iceberg.NestedField) bool { return f.Name == name }) {
		name += "_"
	}
	return name
}

// isoTime says whether the time column is served as an ISO 8601 string:
// a timestamp under timestamps=iso (dates stay epoch milliseconds).
func (s Source) isoTime() bool {
	if s.constant() || !s.Encoding.ISOTimestamps {
		return false
	}
	switch s.TimeField.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return true
	}
	return false
}

// TimestampFormat is the native timestampSpec format of the time column.
func (s Source) TimestampFormat() string {
	if s.isoTime() {
		return "iso"
	}
	return "millis"
}

// timeExpr is the Druid SQL expression of __time over the time column:
// TIME_PARSE of its ISO text, or MILLIS_TO_TIMESTAMP of its epoch
// milliseconds.
func (s Source) timeExpr() string {
	if s.constant() {
		return Timestamp(s.ConstantTime)
	}
	if s.isoTime() {
		return "TIME_PARSE(" + Ident(s.externTime()) + ")"
	}
	return "MILLIS_TO_TIMESTAMP(" + Ident(s.externTime()) + ")"
}

// externTime is the name a statement's EXTERN reads the time column by.
// Druid SQL types an EXTERN column named __time as TIMESTAMP whatever its
// declared type (RowSignatures.toRelDataType), so it refuses
// MILLIS_TO_TIMESTAMP or TIME_PARSE of it, and reads a null in it as 0,
// past the statement's IS NOT NULL: a time column of that name is read
// under another name, which externFormat's flattenSpec gives it.
func (s Source) externTime() string {
	if s.constant() || s.TimeField.Name != TimeColumnName {
		return s.TimeField.Name
	}
	name := "__time_value"
	for slices.ContainsFunc(s.Fields, func(f iceberg.NestedField) bool { return f.Name == name }) {
		name += "_"
	}
	return name
}

// externFormat is the inputFormat of a statement's EXTERN: the planned
// one, with a flattenSpec that copies a time column named __time to
// externTime.
func (s Source) externFormat() InputFormat {
	f := s.InputFormat
	if name := s.externTime(); !s.constant() && name != s.TimeField.Name {
		f.FlattenSpec = &FlattenSpec{UseFieldDiscovery: true,
			Fields: []FlattenField{{Type: "path", Name: name, Expr: "$." + TimeColumnName}}}
	}
	return f
}

// TimeColumnName is Druid's time column, which every datasource has.
const TimeColumnName = "__time"

// outputs are the served columns that become columns of their own beside
// __time: every one, the time column too, but a time column named __time,
// which is Druid's __time itself. Another column named __time is refused:
// Druid keeps the name for its time column (MSQ fails the statement with
// "Duplicate field in SELECT: [__time]", MSQTaskSqlEngine
// .validateNoDuplicateAliases; native ingestion a __time dimension that is
// not the first and long-typed, DataSchema.computeAndValidateOutputFieldNames).
func (s Source) outputs() ([]Column, error) {
	var out []Column
	for _, c := range s.Columns() {
		if c.Name == TimeColumnName {
			if s.TimeField.Name == TimeColumnName {
				continue
			}
			return nil, fmt.Errorf("%w: the table has a column named %s, the name Druid keeps for its time column, and %s is "+
				"not the time column: make it the time column (timestampColumn or timeColumn %s), or leave it out with columns",
				ErrInvalid, TimeColumnName, TimeColumnName, TimeColumnName)
		}
		out = append(out, c)
	}
	return out, nil
}

// Columns maps every served column.
func (s Source) Columns() []Column {
	cols := make([]Column, len(s.Fields))
	for i, f := range s.Fields {
		cols[i] = ColumnOf(f, s.Encoding)
	}
	return cols
}

// EmptySource is the stand-in for a plan without a URI, for a statement
// or task that must replace an interval with nothing: an inline source of
// one row that the statement's WHERE (and a task's intervals) drop. Its
// time lies just before start, or is absent when start is zero (a null
// __time, which a statement's IS NOT NULL drops and a task counts as
// unparseable).
//
// A source with a ConstantTime would give the row that time, which lies
// within the interval replaced: its stand-in instead takes __time from a
// long column of epoch milliseconds that no served column is named, which
// the row alone has.
func (s Source) EmptySource(start time.Time) Source {
	if s.constant() {
		tf := iceberg.NestedField{ID: -1, Name: s.absentColumn(), Type: iceberg.PrimitiveTypes.Int64}
		s.Fields = append(slices.Clone(s.Fields), tf)
		s.TimeField, s.ConstantTime = tf, time.Time{}
	}
	row := "{}"
	if !start.IsZero() {
		before := start.Add(-time.Millisecond)
		// A string always encodes.
		name, _ := json.Marshal(s.TimeField.Name)
		if s.isoTime() {
			row = fmt.Sprintf(`{%s:"%s"}`, name, before.UTC().Format(time.RFC3339Nano))
		} else {
			row = fmt.Sprintf(`{%s:%d}`, name, before.UnixMilli())
		}
	}
	out := s
	out.InputSource = HTTPInputSource{}
	out.InputFormat = InputFormat{Type: "json"}
	out.inline = &inlineInputSource{Data: row + "\n", Type: "inline"}
	return out
}
