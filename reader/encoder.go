package reader

import (
	"fmt"
	"strconv"

	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/schema"
	"github.com/druidiceberg/sidecar/token"
)

// rowEncoder writes rows of resolved nodes as JSON objects.
type rowEncoder struct {
	fields  []*schema.Node
	enc     encode.Options
	scratch encode.Scratch
	// meta are the metadata columns after the fields, and pos the
	// position of the row in its data file, which they may need.
	meta []schema.MetaColumn
	pos  int64
}

// appendRow appends the current row as one NDJSON line.
func (e *rowEncoder) appendRow(b []byte) []byte {
	b = append(b, '{')
	for i, n := range e.fields {
		b = n.Key.Append(b, i == 0)
		if n.Kind != schema.NodePrimitive {
			b = e.appendNode(b, n)
			continue
		}
		// A column at the top level, inlined.
		l := n.Leaf
		if l.Null() {
			l.Pos++
			b = append(b, "null"...)
			continue
		}
		b = encode.AppendValue(b, l.Cur, l.VPos, &l.Type, &e.enc, &e.scratch)
		l.Pos++
		l.VPos++
	}
	if len(e.meta) > 0 {
		b = e.appendMeta(b, e.pos, len(e.fields) > 0)
	}
	return append(b, '}', '\n')
}

// appendNode appends the next instance of n and consumes its entries.
func (e *rowEncoder) appendNode(b []byte, n *schema.Node) []byte {
	switch n.Kind {
	case schema.NodePrimitive:
		l := n.Leaf
		if l.Pos >= l.RowEnd {
			// A nested column whose row ends before its sibling's, which
			// drives the list or map: damaged repetition levels.
			if e.scratch.Err == nil {
				e.scratch.Err = fmt.Errorf("%w: column %s: the row holds fewer entries than the columns beside it", ErrCorruptFile, l.Path)
			}
			return append(b, "null"...)
		}
		if l.Null() {
			l.Pos++
			return append(b, "null"...)
		}
		b = encode.AppendValue(b, l.Cur, l.VPos, &l.Type, &e.enc, &e.scratch)
		l.Pos++
		l.VPos++
		return b
	case schema.NodeStruct:
		if n.First.PeekDef() < n.Def {
			n.Skip()
			return append(b, "null"...)
		}
		b = append(b, '{')
		for i, c := range n.Children {
			b = c.Key.Append(b, i == 0)
			b = e.appendNode(b, c)
		}
		for _, l := range n.Extra {
			l.Skip(n.Rep)
		}
		return append(b, '}')
	case schema.NodeList:
		d := n.First.PeekDef()
		if d < n.Def {
			n.Skip()
			return append(b, "null"...)
		}
		if d < n.ElemDef {
			n.Skip()
			return append(b, '[', ']')
		}
		b = append(b, '[')
		for {
			b = e.appendNode(b, n.Children[0])
			if !n.First.Continues(n.ElemRep) {
				break
			}
			b = append(b, ',')
		}
		return append(b, ']')
	case schema.NodeMap:
		d := n.First.PeekDef()
		if d < n.Def {
			n.Skip()
			return append(b, "null"...)
		}
		if d < n.ElemDef {
			n.Skip()
			if n.StringKeys {
				return append(b, '{', '}')
			}
			return append(b, '[', ']')
		}
		k, v := n.Children[0], n.Children[1]
		if n.StringKeys {
			b = append(b, '{')
			for {
				if kl := k.Leaf; kl.Null() {
					// Map keys are required; keep the line valid JSON
					// even for a file that breaks the rule.
					kl.Pos++
					b = append(b, '"', '"')
				} else {
					b = e.appendNode(b, k)
				}
				b = append(b, ':')
				b = e.appendNode(b, v)
				if !n.First.Continues(n.ElemRep) {
					break
				}
				b = append(b, ',')
			}
			return append(b, '}')
		}
		b = append(b, '[')
		for {
			b = append(b, `{"key":`...)
			b = e.appendNode(b, k)
			b = append(b, `,"value":`...)
			b = e.appendNode(b, v)
			b = append(b, '}')
			if !n.First.Continues(n.ElemRep) {
				break
			}
			b = append(b, ',')
		}
		return append(b, ']')
	case schema.NodeVariant:
		if n.First.PeekDef() < n.Def {
			n.Skip()
			return append(b, "null"...)
		}
		return e.appendVariantNode(b, n)
	}
	if n.Invalid {
		e.scratch.Invalid++
	}
	return append(b, n.Value...)
}

// appendMeta appends the row's metadata columns; pos is the row's position
// in its data file, and comma says that a column comes before them.
func (e *rowEncoder) appendMeta(b []byte, pos int64, comma bool) []byte {
	for i := range e.meta {
		m := &e.meta[i]
		if comma || i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.Key...)
		switch m.Bit {
		case token.MetaPos:
			b = strconv.AppendInt(b, pos, 10)
		case token.MetaRowID, token.MetaLastUpdated:
			// The spec's inheritance: a stored value wins; a null (or no
			// column) is the file's first_row_id plus the position, or
			// its data sequence number.
			if n := m.Stored; n.Kind == schema.NodePrimitive {
				if !n.Leaf.Null() {
					b = e.appendNode(b, n)
					continue
				}
				n.Leaf.Pos++
			}
			switch {
			case !m.Inherits:
				b = append(b, "null"...)
			case m.Bit == token.MetaRowID:
				b = strconv.AppendInt(b, m.Inherit+pos, 10)
			default:
				b = strconv.AppendInt(b, m.Inherit, 10)
			}
		default:
			b = append(b, m.Value...)
		}
	}
	return b
}

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
