package reader

import (
	"fmt"
	"strconv"

	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/schema"
	"github.com/druidiceberg/sidecar/splits/split"
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
		case split.MetaPos:
			b = strconv.AppendInt(b, pos, 10)
		case split.MetaRowID, split.MetaLastUpdated:
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
			case m.Bit == split.MetaRowID:
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
