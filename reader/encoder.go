package reader

import (
	"fmt"

	"github.com/druidiceberg/sidecar/reader/encode"
)

// rowEncoder writes rows of resolved nodes as JSON objects.
type rowEncoder struct {
	fields  []*node
	enc     encode.Options
	scratch encode.Scratch
	// meta are the metadata columns after the fields, and pos the
	// position of the row in its data file, which they may need.
	meta []metaColumn
	pos  int64
}

// appendRow appends the current row as one NDJSON line.
func (e *rowEncoder) appendRow(b []byte) []byte {
	b = append(b, '{')
	for i, n := range e.fields {
		b = n.key.Append(b, i == 0)
		if n.kind != nodePrimitive {
			b = e.appendNode(b, n)
			continue
		}
		// A column at the top level, inlined.
		l := n.leaf
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
func (e *rowEncoder) appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case nodePrimitive:
		l := n.leaf
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
	case nodeStruct:
		if n.first.PeekDef() < n.def {
			n.skip()
			return append(b, "null"...)
		}
		b = append(b, '{')
		for i, c := range n.children {
			b = c.key.Append(b, i == 0)
			b = e.appendNode(b, c)
		}
		for _, l := range n.extra {
			l.Skip(n.rep)
		}
		return append(b, '}')
	case nodeList:
		d := n.first.PeekDef()
		if d < n.def {
			n.skip()
			return append(b, "null"...)
		}
		if d < n.elemDef {
			n.skip()
			return append(b, '[', ']')
		}
		b = append(b, '[')
		for {
			b = e.appendNode(b, n.children[0])
			if !n.first.Continues(n.elemRep) {
				break
			}
			b = append(b, ',')
		}
		return append(b, ']')
	case nodeMap:
		d := n.first.PeekDef()
		if d < n.def {
			n.skip()
			return append(b, "null"...)
		}
		if d < n.elemDef {
			n.skip()
			if n.stringKeys {
				return append(b, '{', '}')
			}
			return append(b, '[', ']')
		}
		k, v := n.children[0], n.children[1]
		if n.stringKeys {
			b = append(b, '{')
			for {
				if kl := k.leaf; kl.Null() {
					// Map keys are required; keep the line valid JSON
					// even for a file that breaks the rule.
					kl.Pos++
					b = append(b, '"', '"')
				} else {
					b = e.appendNode(b, k)
				}
				b = append(b, ':')
				b = e.appendNode(b, v)
				if !n.first.Continues(n.elemRep) {
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
			if !n.first.Continues(n.elemRep) {
				break
			}
			b = append(b, ',')
		}
		return append(b, ']')
	case nodeVariant:
		if n.first.PeekDef() < n.def {
			n.skip()
			return append(b, "null"...)
		}
		return e.appendVariantNode(b, n)
	}
	if n.invalid {
		e.scratch.Invalid++
	}
	return append(b, n.value...)
}

// skip consumes a null or empty instance of n from all of its leaves.
func (n *node) skip() {
	for _, l := range n.leaves {
		l.Skip(n.rep)
	}
}
