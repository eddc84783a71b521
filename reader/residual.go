package reader

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/reader/schema"
)

// residual is the row filter of a split: what of the request's filter the
// planner could not decide for the data file. iceberg-go's own expression
// evaluator decides each live row; the reader only supplies the row, as an
// iceberg.StructLike whose slots hold the fields the filter names, converted
// to the Go types iceberg-go's literals compare (int64 for a long stored as
// INT32, iceberg.Timestamp in microseconds whatever the stored unit, and so
// on). The slots are reused from row to row.
type residual struct {
	eval func(iceberg.StructLike) (bool, error)
	row  *structRow
	cols []filterCol
}

// structRow is an iceberg.StructLike over reused slots: the top-level row
// (a slot per top-level field of the schema) or a struct inside it that the
// filter reaches into. Slots the filter does not name stay nil.
type structRow struct{ vals []any }

func (r *structRow) Size() int          { return len(r.vals) }
func (r *structRow) Get(pos int) any    { return r.vals[pos] }
func (r *structRow) Set(pos int, v any) { r.vals[pos] = v }

// The definition levels of filterCol.defs for a struct the file lacks.
const (
	structPresent = -1 // its initial-default is a struct: always present
	structNull    = -2 // always null
)

// filterCol fills the slot of one field the filter names.
type filterCol struct {
	// rows are the structRows along the field's path: rows[0] is the
	// top-level row, rows[i+1] the struct in slot pos[i] of rows[i]; the
	// field's value goes in slot pos[len(pos)-1] of the last one.
	rows []*structRow
	pos  []int
	// defs say when each enclosing struct is present: when the leaf's
	// definition level is at least defs[i], or structPresent or structNull
	// for a struct the file lacks.
	defs []int
	// leaf is the field's column when value is true; otherwise, when the
	// file lacks the field but has an enclosing struct, a column of that
	// struct read only for its definition levels; nil when neither.
	leaf  *column.Leaf
	value bool
	// long is true for an int field promoted to long.
	long bool
	// konst is the field's value when the file lacks it.
	konst any
	// field names the field in errors.
	field iceberg.NestedField
}

// parseResidual reads the filter a split pins against the split's schema.
// It returns nil for an empty filter or one that binds to always-true.
func parseResidual(raw json.RawMessage, ts *iceberg.Schema) (_ *residual, _ []int, err error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	defer func() {
		// iceberg-go panics when binding a reference to a struct, list or
		// map field; such a filter is one the reader cannot apply.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: residual filter %s: %v", ErrUnsupported, raw, r)
		}
	}()
	expr, err := iceberg.ParseExpr(raw, ts)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: residual filter %s: %w", ErrUnsupported, raw, err)
	}
	bound, err := iceberg.BindExpr(ts, expr, true)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: bind residual filter %s: %w", ErrUnsupported, raw, err)
	}
	if bound.Equals(iceberg.AlwaysTrue{}) {
		return nil, nil, nil
	}
	ids, err := iceberg.ExtractFieldIDs(bound)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: residual filter %s: %w", ErrUnsupported, raw, err)
	}
	slices.Sort(ids)
	eval, err := iceberg.ExpressionEvaluator(ts, expr, true)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: residual filter %s: %w", ErrUnsupported, raw, err)
	}
	return &residual{eval: eval, row: &structRow{vals: make([]any, len(ts.Fields()))}}, ids, nil
}

// resolveResidual resolves the fields ids of the filter against the data
// file with root, registering with r the columns it reads (read even when
// they are not emitted). It runs after every other column is resolved, so
// that a column read here only for its levels is never one that another
// part of the stream reads for its values.
func resolveResidual(r *schema.Resolver, f *residual, ts *iceberg.Schema, root *parquet.Column, ids []int) error {
	structs := map[int]*structRow{}
	var levelOnly []*parquet.Column
	for _, id := range ids {
		fields, pos := fieldPath(ts.AsStruct().FieldList, id)
		if fields == nil {
			field, _ := ts.FindFieldByID(id)
			return fmt.Errorf("%w: residual filter on field %d (%s) inside a list or map", ErrUnsupported, id, field.Name)
		}
		last := len(fields) - 1
		c := filterCol{pos: pos, rows: []*structRow{f.row}, field: fields[last]}
		for _, sf := range fields[:last] {
			sr := structs[sf.ID]
			if sr == nil {
				sr = &structRow{vals: make([]any, len(sf.Type.(*iceberg.StructType).FieldList))}
				structs[sf.ID] = sr
			}
			c.rows = append(c.rows, sr)
		}
		col, deepest := root, (*parquet.Column)(nil)
		for i, sf := range fields {
			if col != nil {
				if col = r.Child(col, sf.ID); col != nil {
					if col.Repeated() || (i < last) == col.Leaf() {
						return r.Mismatch(sf, col)
					}
					deepest = col
				}
			}
			if i == last {
				break
			}
			switch {
			case col != nil:
				c.defs = append(c.defs, col.MaxDefinitionLevel())
			case sf.InitialDefault != nil:
				c.defs = append(c.defs, structPresent)
			default:
				c.defs = append(c.defs, structNull)
			}
		}
		field := fields[last]
		_, c.long = field.Type.(iceberg.Int64Type)
		if col != nil {
			vt, err := r.ValueTypeOf(field, col)
			if err != nil {
				return err
			}
			c.leaf, c.value = r.AddLeaf(col, vt), true
		} else {
			v, vt, err := r.PrimitiveValue(field)
			if err != nil {
				return fmt.Errorf("resolve residual filter column %d: %w", id, err)
			}
			if !v.IsNull() {
				c.konst, err = goValue(encode.ValuesOf(v), 0, &vt, c.long)
			}
			if err != nil {
				return fmt.Errorf("resolve residual filter column %d: %w", id, err)
			}
			if deepest != nil {
				levelOnly = append(levelOnly, deepest)
			} else {
				levelOnly = append(levelOnly, nil)
			}
		}
		f.cols = append(f.cols, c)
	}
	// Columns read only for their levels come last, so that a column the
	// filter also reads for its values is registered with its conversion.
	k := 0
	for i := range f.cols {
		c := &f.cols[i]
		if c.value {
			continue
		}
		if s := levelOnly[k]; s != nil {
			c.leaf = r.AddLeaf(schema.FirstLeafColumn(s), encode.ValueType{Conv: encode.ConvNull})
		}
		k++
	}
	return nil
}

// fieldPath returns the fields from the top level down to the field with
// id, through structs only, and the position of each in its struct: the
// positions iceberg-go's accessors use. It returns nil when the field is
// not reachable that way.
func fieldPath(fields []iceberg.NestedField, id int) ([]iceberg.NestedField, []int) {
	for i, f := range fields {
		if f.ID == id {
			return []iceberg.NestedField{f}, []int{i}
		}
		if st, ok := f.Type.(*iceberg.StructType); ok {
			if sub, pos := fieldPath(st.FieldList, id); sub != nil {
				return append([]iceberg.NestedField{f}, sub...), append([]int{i}, pos...)
			}
		}
	}
	return nil, nil
}

// match fills the row from the current values of the leaves and reports
// whether it passes the filter.
func (f *residual) match() (bool, error) {
	for i := range f.cols {
		if err := f.cols[i].fill(); err != nil {
			return false, err
		}
	}
	return f.eval(f.row)
}

// fill sets the field's slot, and the slots of its enclosing structs, for
// the current row.
func (c *filterCol) fill() error {
	for i, d := range c.defs {
		if d == structNull || d >= 0 && c.leaf.PeekDef() < d {
			c.rows[i].vals[c.pos[i]] = nil
			return nil
		}
		c.rows[i].vals[c.pos[i]] = c.rows[i+1]
	}
	slot := &c.rows[len(c.rows)-1].vals[c.pos[len(c.pos)-1]]
	if !c.value {
		*slot = c.konst
		return nil
	}
	if c.leaf.Null() {
		*slot = nil
		return nil
	}
	x, err := goValue(c.leaf.Cur, c.leaf.VPos, &c.leaf.Type, c.long)
	if err != nil {
		return fmt.Errorf("column %s (field %d, %s): %w", c.leaf.Path, c.field.ID, c.field.Name, err)
	}
	*slot = x
	return nil
}

// goValue converts the non-null i-th value of v to the Go type
// iceberg-go compares values of its Iceberg type as. A string aliases the
// page it was read from, which outlives the evaluation of the row
// (iceberg-go keeps no value).
func goValue(v *parquetpage.Values, i int, vt *encode.ValueType, long bool) (any, error) {
	switch vt.Conv {
	case encode.ConvBool:
		return v.Bool[i], nil
	case encode.ConvInt32:
		if long {
			return int64(v.Int32[i]), nil
		}
		return v.Int32[i], nil
	case encode.ConvInt64:
		return v.Int64[i], nil
	case encode.ConvFloat:
		return v.Float[i], nil
	case encode.ConvFloatAsDouble:
		return float64(v.Float[i]), nil
	case encode.ConvDouble:
		return v.Double[i], nil
	case encode.ConvDate:
		return iceberg.Date(v.Int32[i]), nil
	case encode.ConvTimeInt32:
		return iceberg.Time(encode.TimeMicros(int64(v.Int32[i]), vt.Unit)), nil
	case encode.ConvTimeInt64:
		return iceberg.Time(encode.TimeMicros(v.Int64[i], vt.Unit)), nil
	case encode.ConvTimestamp:
		return timestampValue(encode.TimestampIn(v.Int64[i], vt.Unit, vt.Nanos), vt.Nanos), nil
	case encode.ConvDateTimestamp:
		perDay := encode.NanosPerDay / 1000
		if vt.Nanos {
			perDay = encode.NanosPerDay
		}
		return timestampValue(int64(v.Int32[i])*perDay, vt.Nanos), nil
	case encode.ConvInt96:
		return timestampValue(encode.TimestampIn(encode.Int96Nanos(v.Int96[i]), 1, vt.Nanos), vt.Nanos), nil
	case encode.ConvDecimalInt32:
		return iceberg.Decimal{Val: decimal128.FromI64(int64(v.Int32[i])), Scale: vt.Scale}, nil
	case encode.ConvDecimalInt64:
		return iceberg.Decimal{Val: decimal128.FromI64(v.Int64[i]), Scale: vt.Scale}, nil
	case encode.ConvDecimalBytes:
		raw := encode.TrimSignExtension(v.ByteArray(i))
		if len(raw) > 16 {
			return nil, fmt.Errorf("%w: decimal value of %d significant bytes is wider than decimal(38)", ErrCorruptFile, len(raw))
		}
		var buf [16]byte
		if len(raw) > 0 && raw[0]&0x80 != 0 {
			for i := range buf {
				buf[i] = 0xff
			}
		}
		copy(buf[16-len(raw):], raw)
		n := decimal128.New(int64(binary.BigEndian.Uint64(buf[:8])), binary.BigEndian.Uint64(buf[8:]))
		return iceberg.Decimal{Val: n, Scale: vt.Scale}, nil
	case encode.ConvString:
		b := v.ByteArray(i)
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	case encode.ConvBinary:
		return v.ByteArray(i), nil
	case encode.ConvUUID:
		b := v.ByteArray(i)
		if len(b) != 16 {
			return nil, fmt.Errorf("%w: uuid value of %d bytes", ErrCorruptFile, len(b))
		}
		return uuid.UUID(b), nil
	}
	return nil, nil
}

func timestampValue(v int64, nanos bool) any {
	if nanos {
		return iceberg.TimestampNano(v)
	}
	return iceberg.Timestamp(v)
}
