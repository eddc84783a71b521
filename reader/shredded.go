package reader

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
)

// A variant column in Parquet (VariantShredding.md) is a group of a
// required binary "metadata" and a pair of "value" (the value in the
// variant encoding) and "typed_value" (the same value in columns of its
// own types: a primitive, an object of named fields, each a pair again, or
// a LIST of element pairs). Unshredded, the group has value alone. The
// reader reassembles each value from whichever of the pair holds it, and
// merges the two for a partially shredded object: value holds the fields
// that typed_value does not.

// variantColumn is a variant field's columns in one file.
type variantColumn struct {
	meta *column.Leaf
	top  *shredPair
	enc  encode.VariantEncoder
}

// shredPair is one value/typed_value pair.
type shredPair struct {
	value *column.Leaf // nil when the group has no value column
	typed *shredTyped  // nil when the group has no typed_value
	// rep is the repetition level at which an instance of the pair starts.
	rep    int
	leaves []*column.Leaf
}

type shredKind uint8

const (
	shredPrimitive shredKind = iota
	shredObject
	shredArray
)

// shredTyped is the typed_value of a pair.
type shredTyped struct {
	kind shredKind
	// def is the definition level at which typed_value is not null, and
	// rep the repetition level at which an instance of it starts.
	def, rep int
	// first is its first leaf, whose levels tell null, empty and repeated
	// instances apart; leaves are all of them.
	first  *column.Leaf
	leaves []*column.Leaf
	// leaf is a primitive's column.
	leaf *column.Leaf
	// fields are an object's, in ascending order of their names.
	fields []shredField
	// elemDef and elemRep are an array's repeated group's levels, and elem
	// its element pair.
	elemDef, elemRep int
	elem             *shredPair
}

// shredField is one field of a shredded object.
type shredField struct {
	name []byte
	key  []byte // `"name":`
	pair *shredPair
}

// resolveVariant resolves variant field f against its group c into n.
func (r *resolver) resolveVariant(f iceberg.NestedField, c *parquet.Column, n *node) (*node, error) {
	if c.Leaf() || c.Repeated() {
		return nil, r.mismatch(f, c)
	}
	mc := c.Column("metadata")
	if mc == nil || !mc.Leaf() || mc.Repeated() || mc.Type().Kind() != parquet.ByteArray {
		return nil, fmt.Errorf("%w: variant column %s of %s (field id %d) has no binary metadata",
			ErrSchemaMismatch, strings.Join(c.Path(), "."), r.path, f.ID)
	}
	top, err := r.shredPair(f, c, 0)
	if err != nil {
		return nil, err
	}
	meta := r.addLeaf(mc, encode.ValueType{Conv: encode.ConvNull})
	n.kind = nodeVariant
	n.variant = &variantColumn{meta: meta, top: top}
	n.leaves = append([]*column.Leaf{meta}, top.leaves...)
	n.first = meta
	return n, nil
}

// shredPair resolves the value/typed_value pair of group c, depth levels
// of shredding down.
func (r *resolver) shredPair(f iceberg.NestedField, c *parquet.Column, depth int) (*shredPair, error) {
	if depth > encode.MaxVariantDepth {
		return nil, fmt.Errorf("%w: variant column %s of %s is shredded deeper than %d",
			ErrUnsupported, strings.Join(c.Path(), "."), r.path, encode.MaxVariantDepth)
	}
	if c.Repeated() {
		// A pair repeats only through the list around an array's element
		// (VariantShredding.md's three-level list): one that repeats itself
		// would make each element a list of them.
		return nil, r.mismatch(f, c)
	}
	p := &shredPair{rep: c.MaxRepetitionLevel()}
	vc, tc := c.Column("value"), c.Column("typed_value")
	if vc == nil && tc == nil {
		return nil, fmt.Errorf("%w: variant group %s of %s (field id %d) has neither value nor typed_value",
			ErrSchemaMismatch, strings.Join(c.Path(), "."), r.path, f.ID)
	}
	if vc != nil {
		if !vc.Leaf() || vc.Repeated() || vc.Type().Kind() != parquet.ByteArray {
			return nil, r.mismatch(f, vc)
		}
		p.value = r.addLeaf(vc, encode.ValueType{Conv: encode.ConvNull})
		p.leaves = append(p.leaves, p.value)
	}
	if tc != nil {
		t, err := r.shredTyped(f, tc, depth)
		if err != nil {
			return nil, err
		}
		p.typed = t
		p.leaves = append(p.leaves, t.leaves...)
	}
	return p, nil
}

// shredTyped resolves a typed_value column.
func (r *resolver) shredTyped(f iceberg.NestedField, c *parquet.Column, depth int) (*shredTyped, error) {
	if c.Repeated() {
		return nil, r.mismatch(f, c)
	}
	t := &shredTyped{def: c.MaxDefinitionLevel(), rep: c.MaxRepetitionLevel()}
	if c.Leaf() {
		vt, err := r.shreddedValueType(f, c)
		if err != nil {
			return nil, err
		}
		t.kind = shredPrimitive
		t.leaf = r.addLeaf(c, vt)
		t.leaves = []*column.Leaf{t.leaf}
		t.first = t.leaf
		return t, nil
	}
	_, list := logicalValue(c.Type().LogicalType()).(*format.ListType)
	if rc := repeatedChild(c); list || rc != nil {
		if rc == nil || rc.Leaf() || len(rc.Columns()) != 1 {
			return nil, r.mismatch(f, c)
		}
		elem, err := r.shredPair(f, rc.Columns()[0], depth+1)
		if err != nil {
			return nil, err
		}
		t.kind = shredArray
		t.elemDef, t.elemRep = rc.MaxDefinitionLevel(), rc.MaxRepetitionLevel()
		t.elem = elem
		t.leaves = elem.leaves
	} else {
		t.kind = shredObject
		for _, fc := range c.Columns() {
			if fc.Leaf() || fc.Repeated() {
				return nil, r.mismatch(f, fc)
			}
			p, err := r.shredPair(f, fc, depth+1)
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, shredField{name: []byte(fc.Name()), key: encode.FieldKey(fc.Name()), pair: p})
			t.leaves = append(t.leaves, p.leaves...)
		}
		slices.SortFunc(t.fields, func(a, b shredField) int { return bytes.Compare(a.name, b.name) })
	}
	if len(t.leaves) == 0 {
		return nil, r.mismatch(f, c)
	}
	t.first = t.leaves[0]
	return t, nil
}

// shreddedValueType picks the conversion of a shredded primitive column:
// the variant type its Parquet type stands for (VariantShredding.md), in
// the value contract of the Iceberg type of the same values.
func (r *resolver) shreddedValueType(f iceberg.NestedField, c *parquet.Column) (encode.ValueType, error) {
	lt := logicalValue(c.Type().LogicalType())
	var t iceberg.Type
	switch c.Type().Kind() {
	case parquet.Boolean:
		t = iceberg.PrimitiveTypes.Bool
	case parquet.Int32:
		t = iceberg.PrimitiveTypes.Int32
	case parquet.Int64:
		t = iceberg.PrimitiveTypes.Int64
	case parquet.Float:
		t = iceberg.PrimitiveTypes.Float32
	case parquet.Double:
		t = iceberg.PrimitiveTypes.Float64
	case parquet.ByteArray:
		t = iceberg.PrimitiveTypes.Binary
	case parquet.FixedLenByteArray:
		t = iceberg.PrimitiveTypes.UUID
	}
	switch l := lt.(type) {
	case nil:
	case *format.IntType:
		if !l.IsSigned {
			t = nil // variants have no unsigned integers
		}
	case *format.DecimalType:
		t = iceberg.DecimalTypeOf(int(l.Precision), int(l.Scale))
	case *format.DateType:
		t = iceberg.PrimitiveTypes.Date
	case *format.TimeType:
		t = iceberg.PrimitiveTypes.Time
	case *format.TimestampType:
		if _, nanos := l.Unit.Value.(*format.NanoSeconds); nanos {
			t = iceberg.PrimitiveTypes.TimestampNs
		} else {
			t = iceberg.PrimitiveTypes.Timestamp
		}
	case *format.StringType:
		t = iceberg.PrimitiveTypes.String
	case *format.UUIDType:
		t = iceberg.PrimitiveTypes.UUID
	default:
		t = nil
	}
	if t == nil {
		return encode.ValueType{}, fmt.Errorf("%w: shredded variant column %s of %s (field id %d) has type %s, which no variant value has",
			ErrSchemaMismatch, strings.Join(c.Path(), "."), r.path, f.ID, c.Type())
	}
	vt, err := r.valueTypeOf(iceberg.NestedField{ID: f.ID, Name: f.Name, Type: t}, c)
	if err != nil {
		return vt, err
	}
	if vt.Conv == encode.ConvBinary {
		vt.Conv = encode.ConvBase64 // a variant's binary is base64 whatever binaryAsString says
	}
	return vt, nil
}

// appendVariantNode appends the next instance of variant node n, which is
// not null.
func (e *rowEncoder) appendVariantNode(b []byte, n *node) []byte {
	vc := n.variant
	ml := vc.meta
	if ml.Null() {
		e.fail(fmt.Errorf("%w: a variant without metadata", encode.ErrVariant))
		n.skip()
		return append(b, "null"...)
	}
	raw := ml.Cur.ByteArray(ml.VPos)
	ml.Pos++
	ml.VPos++
	mark := len(b)
	err := vc.enc.SetMeta(raw)
	if err == nil {
		vc.enc.Begin()
		var ok bool
		b, ok, err = e.appendPair(b, vc, vc.top, 0)
		if err == nil && !ok {
			// Neither value nor typed_value: as good as a variant null.
			b = append(b, "null"...)
		}
	}
	if err != nil {
		e.fail(err)
		return append(b[:mark], "null"...)
	}
	return b
}

// fail records the first error of the row's encoding.
func (e *rowEncoder) fail(err error) {
	if e.scratch.Err == nil {
		e.scratch.Err = fmt.Errorf("%w: variant value: %w", ErrCorruptFile, err)
	}
}

// appendPair appends the value of pair p and consumes its entries, or, for
// a pair that holds nothing (a field the object lacks), appends nothing
// and reports false.
func (e *rowEncoder) appendPair(b []byte, vc *variantColumn, p *shredPair, depth int) ([]byte, bool, error) {
	var raw []byte
	if l := p.value; l != nil {
		if !l.Null() {
			raw = l.Cur.ByteArray(l.VPos)
		}
		l.Consume()
	}
	t := p.typed
	typed := t != nil && t.first.PeekDef() >= t.def
	switch {
	case typed && raw != nil && t.kind != shredObject:
		return b, false, fmt.Errorf("%w: both value and a typed_value that is not an object", encode.ErrVariant)
	case typed:
		b, err := e.appendTyped(b, vc, t, raw, depth)
		return b, err == nil, err
	}
	if t != nil {
		for _, l := range t.leaves {
			l.Skip(t.rep)
		}
	}
	if raw == nil {
		return b, false, nil
	}
	b, err := vc.enc.AppendVariant(b, raw, depth, &e.enc, &e.scratch)
	return b, err == nil, err
}

// appendTyped appends a typed_value that is not null, merged with raw, the
// value of a partially shredded object (nil without one).
func (e *rowEncoder) appendTyped(b []byte, vc *variantColumn, t *shredTyped, raw []byte, depth int) ([]byte, error) {
	switch t.kind {
	case shredPrimitive:
		l := t.leaf
		b = encode.AppendValue(b, l.Cur, l.VPos, &l.Type, &e.enc, &e.scratch)
		l.Pos++
		l.VPos++
		return b, nil
	case shredObject:
		b, _, err := vc.enc.Object(b, raw, depth, &e.enc, &e.scratch, typedFields{e: e, vc: vc, t: t})
		return b, err
	}
	if depth >= encode.MaxVariantDepth {
		return b, fmt.Errorf("%w: nested deeper than %d", encode.ErrVariant, encode.MaxVariantDepth)
	}
	if t.first.PeekDef() < t.elemDef {
		for _, l := range t.leaves {
			l.Skip(t.rep)
		}
		return append(b, '[', ']'), nil
	}
	b = append(b, '[')
	for {
		var ok bool
		var err error
		if b, ok, err = e.appendPair(b, vc, t.elem, depth+1); err != nil {
			return b, err
		}
		if !ok {
			b = append(b, "null"...)
		}
		if !t.first.Continues(t.elemRep) {
			break
		}
		b = append(b, ',')
	}
	return append(b, ']'), nil
}

// typedFields are a shredded object's fields as encode.VariantEncoder.Object
// merges them.
type typedFields struct {
	e  *rowEncoder
	vc *variantColumn
	t  *shredTyped
}

func (f typedFields) Fields() int       { return len(f.t.fields) }
func (f typedFields) Name(i int) []byte { return f.t.fields[i].name }

func (f typedFields) AppendField(b []byte, i, depth int) ([]byte, bool, error) {
	field := &f.t.fields[i]
	mark := len(b)
	b, ok, err := f.e.appendPair(append(b, field.key...), f.vc, field.pair, depth)
	if !ok {
		b = b[:mark]
	}
	return b, ok, err
}
