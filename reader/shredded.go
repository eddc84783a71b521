package reader

import (
	"fmt"

	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/schema"
)

// A variant's value is reassembled from the columns that schema resolved
// (schema.VariantColumn): from whichever of a value/typed_value pair holds
// it, merging the two for a partially shredded object.

// appendVariantNode appends the next instance of variant node n, which is
// not null.
func (e *rowEncoder) appendVariantNode(b []byte, n *schema.Node) []byte {
	vc := n.Variant
	ml := vc.Meta
	if ml.Null() {
		e.fail(fmt.Errorf("%w: a variant without metadata", encode.ErrVariant))
		n.Skip()
		return append(b, "null"...)
	}
	raw := ml.Cur.ByteArray(ml.VPos)
	ml.Pos++
	ml.VPos++
	mark := len(b)
	err := vc.Enc.SetMeta(raw)
	if err == nil {
		vc.Enc.Begin()
		var ok bool
		b, ok, err = e.appendPair(b, vc, vc.Top, 0)
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
func (e *rowEncoder) appendPair(b []byte, vc *schema.VariantColumn, p *schema.ShredPair, depth int) ([]byte, bool, error) {
	var raw []byte
	if l := p.Value; l != nil {
		if !l.Null() {
			raw = l.Cur.ByteArray(l.VPos)
		}
		l.Consume()
	}
	t := p.Typed
	typed := t != nil && t.First.PeekDef() >= t.Def
	switch {
	case typed && raw != nil && t.Kind != schema.ShredObject:
		return b, false, fmt.Errorf("%w: both value and a typed_value that is not an object", encode.ErrVariant)
	case typed:
		b, err := e.appendTyped(b, vc, t, raw, depth)
		return b, err == nil, err
	}
	if t != nil {
		for _, l := range t.Leaves {
			l.Skip(t.Rep)
		}
	}
	if raw == nil {
		return b, false, nil
	}
	b, err := vc.Enc.AppendVariant(b, raw, depth, &e.enc, &e.scratch)
	return b, err == nil, err
}

// appendTyped appends a typed_value that is not null, merged with raw, the
// value of a partially shredded object (nil without one).
func (e *rowEncoder) appendTyped(b []byte, vc *schema.VariantColumn, t *schema.ShredTyped, raw []byte, depth int) ([]byte, error) {
	switch t.Kind {
	case schema.ShredPrimitive:
		l := t.Leaf
		b = encode.AppendValue(b, l.Cur, l.VPos, &l.Type, &e.enc, &e.scratch)
		l.Pos++
		l.VPos++
		return b, nil
	case schema.ShredObject:
		b, _, err := vc.Enc.Object(b, raw, depth, &e.enc, &e.scratch, typedFields{e: e, vc: vc, t: t})
		return b, err
	}
	if depth >= encode.MaxVariantDepth {
		return b, fmt.Errorf("%w: nested deeper than %d", encode.ErrVariant, encode.MaxVariantDepth)
	}
	if t.First.PeekDef() < t.ElemDef {
		for _, l := range t.Leaves {
			l.Skip(t.Rep)
		}
		return append(b, '[', ']'), nil
	}
	b = append(b, '[')
	for {
		var ok bool
		var err error
		if b, ok, err = e.appendPair(b, vc, t.Elem, depth+1); err != nil {
			return b, err
		}
		if !ok {
			b = append(b, "null"...)
		}
		if !t.First.Continues(t.ElemRep) {
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
	vc *schema.VariantColumn
	t  *schema.ShredTyped
}

func (f typedFields) Fields() int       { return len(f.t.Fields) }
func (f typedFields) Name(i int) []byte { return f.t.Fields[i].Name }

func (f typedFields) AppendField(b []byte, i, depth int) ([]byte, bool, error) {
	field := &f.t.Fields[i]
	mark := len(b)
	b, ok, err := f.e.appendPair(append(b, field.Key...), f.vc, field.Pair, depth)
	if !ok {
		b = b[:mark]
	}
	return b, ok, err
}
