package schema

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
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// A variant column in Parquet (VariantShredding.md) is a group of a
// required binary "metadata" and a pair of "value" (the value in the
// variant encoding) and "typed_value" (the same value in columns of its
// own types: a primitive, an object of named fields, each a pair again, or
// a LIST of element pairs). Unshredded, the group has value alone. The
// reader reassembles each value from whichever of the pair holds it, and
// merges the two for a partially shredded object: value holds the fields
// that typed_value does not.

// VariantColumn is a variant field's columns in one file.
type VariantColumn struct {
	Meta *column.Leaf
	Top  *ShredPair
	Enc  encode.VariantEncoder
}

// ShredPair is one value/typed_value pair.
type ShredPair struct {
	Value *column.Leaf // nil when the group has no value column
	Typed *ShredTyped  // nil when the group has no typed_value
	// rep is the repetition level at which an instance of the pair starts.
	rep    int
	leaves []*column.Leaf
}

type shredKind uint8

const (
	ShredPrimitive shredKind = iota
	ShredObject
	shredArray
)

// ShredTyped is the typed_value of a pair.
type ShredTyped struct {
	Kind shredKind
	// Def is the definition level at which typed_value is not null, and
	// rep the repetition level at which an instance of it starts.
	Def, Rep int
	// First is its first leaf, whose levels tell null, empty and repeated
	// instances apart; leaves are all of them.
	First  *column.Leaf
	Leaves []*column.Leaf
	// Leaf is a primitive's column.
	Leaf *column.Leaf
	// Fields are an object's, in ascending order of their names.
	Fields []shredField
	// ElemDef and elemRep are an array's repeated group's levels, and elem
	// its element pair.
	ElemDef, ElemRep int
	Elem             *ShredPair
}

// shredField is one field of a shredded object.
type shredField struct {
	Name []byte
	Key  []byte // `"name":`
	Pair *ShredPair
}

// resolveVariant resolves variant field f against its group c into n.
func (r *Resolver) resolveVariant(f iceberg.NestedField, c *parquet.Column, n *Node) (*Node, error) {
	if c.Leaf() || c.Repeated() {
		return nil, r.Mismatch(f, c)
	}
	mc := c.Column("metadata")
	if mc == nil || !mc.Leaf() || mc.Repeated() || mc.Type().Kind() != parquet.ByteArray {
		return nil, fmt.Errorf("%w: variant column %s of %s (field id %d) has no binary metadata",
			readerr.ErrSchemaMismatch, strings.Join(c.Path(), "."), r.Path, f.ID)
	}
	top, err := r.shredPair(f, c, 0)
	if err != nil {
		return nil, err
	}
	meta := r.AddLeaf(mc, encode.ValueType{Conv: encode.ConvNull})
	n.Kind = NodeVariant
	n.Variant = &VariantColumn{Meta: meta, Top: top}
	n.leaves = append([]*column.Leaf{meta}, top.leaves...)
	n.First = meta
	return n, nil
}

// shredPair resolves the value/typed_value pair of group c, depth levels
// of shredding down.
func (r *Resolver) shredPair(f iceberg.NestedField, c *parquet.Column, depth int) (*ShredPair, error) {
	if depth > encode.MaxVariantDepth {
		return nil, fmt.Errorf("%w: variant column %s of %s is shredded deeper than %d",
			readerr.ErrUnsupported, strings.Join(c.Path(), "."), r.Path, encode.MaxVariantDepth)
	}
	if c.Repeated() {
		// A pair repeats only through the list around an array's element
		// (VariantShredding.md's three-level list): one that repeats itself
		// would make each element a list of them.
		return nil, r.Mismatch(f, c)
	}
	p := &ShredPair{rep: c.MaxRepetitionLevel()}
	vc, tc := c.Column("value"), c.Column("typed_value")
	if vc == nil && tc == nil {
		return nil, fmt.Errorf("%w: variant group %s of %s (field id %d) has neither value nor typed_value",
			readerr.ErrSchemaMismatch, strings.Join(c.Path(), "."), r.Path, f.ID)
	}
	if vc != nil {
		if !vc.Leaf() || vc.Repeated() || vc.Type().Kind() != parquet.ByteArray {
			return nil, r.Mismatch(f, vc)
		}
		p.Value = r.AddLeaf(vc, encode.ValueType{Conv: encode.ConvNull})
		p.leaves = append(p.leaves, p.Value)
	}
	if tc != nil {
		t, err := r.shredTyped(f, tc, depth)
		if err != nil {
			return nil, err
		}
		p.Typed = t
		p.leaves = append(p.leaves, t.Leaves...)
	}
	return p, nil
}

// shredTyped resolves a typed_value column.
func (r *Resolver) shredTyped(f iceberg.NestedField, c *parquet.Column, depth int) (*ShredTyped, error) {
	if c.Repeated() {
		return nil, r.Mismatch(f, c)
	}
	t := &ShredTyped{Def: c.MaxDefinitionLevel(), Rep: c.MaxRepetitionLevel()}
	if c.Leaf() {
		vt, err := r.shreddedValueType(f, c)
		if err != nil {
			return nil, err
		}
		t.Kind = ShredPrimitive
		t.Leaf = r.AddLeaf(c, vt)
		t.Leaves = []*column.Leaf{t.Leaf}
		t.First = t.Leaf
		return t, nil
	}
	_, list := LogicalValue(c.Type().LogicalType()).(*format.ListType)
	if rc := RepeatedChild(c); list || rc != nil {
		if rc == nil || rc.Leaf() || len(rc.Columns()) != 1 {
			return nil, r.Mismatch(f, c)
		}
		elem, err := r.shredPair(f, rc.Columns()[0], depth+1)
		if err != nil {
			return nil, err
		}
		t.Kind = shredArray
		t.ElemDef, t.ElemRep = rc.MaxDefinitionLevel(), rc.MaxRepetitionLevel()
		t.Elem = elem
		t.Leaves = elem.leaves
	} else {
		t.Kind = ShredObject
		for _, fc := range c.Columns() {
			if fc.Leaf() || fc.Repeated() {
				return nil, r.Mismatch(f, fc)
			}
			p, err := r.shredPair(f, fc, depth+1)
			if err != nil {
				return nil, err
			}
			t.Fields = append(t.Fields, shredField{Name: []byte(fc.Name()), Key: encode.FieldKey(fc.Name()), Pair: p})
			t.Leaves = append(t.Leaves, p.leaves...)
		}
		slices.SortFunc(t.Fields, func(a, b shredField) int { return bytes.Compare(a.Name, b.Name) })
	}
	if len(t.Leaves) == 0 {
		return nil, r.Mismatch(f, c)
	}
	t.First = t.Leaves[0]
	return t, nil
}

// shreddedValueType picks the conversion of a shredded primitive column:
// the variant type its Parquet type stands for (VariantShredding.md), in
// the value contract of the Iceberg type of the same values.
func (r *Resolver) shreddedValueType(f iceberg.NestedField, c *parquet.Column) (encode.ValueType, error) {
	lt := LogicalValue(c.Type().LogicalType())
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
			readerr.ErrSchemaMismatch, strings.Join(c.Path(), "."), r.Path, f.ID, c.Type())
	}
	vt, err := r.ValueTypeOf(iceberg.NestedField{ID: f.ID, Name: f.Name, Type: t}, c)
	if err != nil {
		return vt, err
	}
	if vt.Conv == encode.ConvBinary {
		vt.Conv = encode.ConvBase64 // a variant's binary is base64 whatever binaryAsString says
	}
	return vt, nil
}
