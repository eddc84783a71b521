package reader

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// leaf is one Parquet leaf column that a stream reads, with a cursor over the
// values of the current row group. Values are decoded a slice at a time into
// a reused buffer; byte-array values point into the page, so a page is
// released only once no row refers to it any more.
type leaf struct {
	index  int
	path   string
	maxRep int
	maxDef int
	vt     valueType

	pages  parquet.Pages
	page   parquet.Page
	values parquet.ValueReader // of page
	vals   []parquet.Value
	next   int  // index in vals of the first value of the next row
	eof    bool // the column chunk has no more pages
	held   []parquet.Page
	carry  []parquet.Value

	// row holds the values of the current row; pos is the next one to
	// consume while a row is encoded.
	row []parquet.Value
	pos int
}

// start points the cursor at a new column chunk.
func (l *leaf) start(pages parquet.Pages) error {
	err := l.stop()
	l.pages = pages
	return err
}

// stop releases the cursor's pages and closes its page reader.
func (l *leaf) stop() error {
	l.release()
	if l.page != nil {
		parquet.Release(l.page)
		l.page, l.values = nil, nil
	}
	l.vals, l.next, l.eof, l.row, l.pos = l.vals[:0], 0, false, nil, 0
	if l.pages == nil {
		return nil
	}
	err := l.pages.Close()
	l.pages = nil
	return err
}

// end checks that the column chunk holds no value past the row group's
// last row, then stops the cursor. A page header that claims more values
// than the page's share of the rows (a damaged num_values) would otherwise
// shift this column against the others without any error.
func (l *leaf) end() error {
	extra := l.next < len(l.vals)
	if !extra && !l.eof {
		switch err := l.load(false); {
		case err == nil:
			extra = true
		case !errors.Is(err, io.EOF):
			return errors.Join(l.unexpected(err), l.stop())
		}
	}
	if extra {
		return errors.Join(fmt.Errorf("column %s: values past the row group's last row", l.path), l.stop())
	}
	return l.stop()
}

// release drops the pages that were held for a row that straddled pages.
func (l *leaf) release() {
	for i, p := range l.held {
		parquet.Release(p)
		l.held[i] = nil
	}
	l.held = l.held[:0]
}

// valuesPerRead is how many values a leaf decodes at a time: enough to
// amortize the call, small enough that a stream's buffers stay far below
// its batch (24 bytes per value per column).
const valuesPerRead = 2048

// load decodes the next values of the column chunk into l.vals, moving to
// the next page when the current one is exhausted. With hold, a page left
// behind stays alive because the current row still refers to it.
func (l *leaf) load(hold bool) error {
	if l.vals == nil {
		l.vals = make([]parquet.Value, 0, valuesPerRead)
	}
	for {
		if l.values != nil {
			n, err := l.values.ReadValues(l.vals[:cap(l.vals)])
			if n > 0 {
				l.vals, l.next = l.vals[:n], 0
				return nil
			}
			if err == nil {
				return io.ErrNoProgress
			}
			if !errors.Is(err, io.EOF) {
				return err
			}
			if hold {
				l.held = append(l.held, l.page)
			} else {
				parquet.Release(l.page)
			}
			l.page, l.values = nil, nil
		}
		p, err := l.pages.ReadPage()
		if err != nil {
			l.vals, l.next = l.vals[:0], 0
			if errors.Is(err, io.EOF) {
				l.eof = true
				return io.EOF
			}
			return err
		}
		l.page, l.values = p, p.Values()
	}
}

// advance moves the cursor to the next row and makes its values l.row.
func (l *leaf) advance() error {
	if len(l.held) > 0 {
		l.release()
	}
	l.pos = 0
	if l.next == len(l.vals) {
		if err := l.load(false); err != nil {
			return l.unexpected(err)
		}
	}
	start := l.next
	if l.maxRep == 0 {
		l.row = l.vals[start : start+1]
		l.next++
		return nil
	}
	j := start + 1
	for j < len(l.vals) && l.vals[j].RepetitionLevel() != 0 {
		j++
	}
	if j < len(l.vals) {
		l.row, l.next = l.vals[start:j], j
		return nil
	}
	// The row reaches the end of the page; in data page v1 it may go on in
	// the next one.
	l.carry = append(l.carry[:0], l.vals[start:]...)
	for {
		if err := l.load(true); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return l.unexpected(err)
		}
		j = 0
		for j < len(l.vals) && l.vals[j].RepetitionLevel() != 0 {
			j++
		}
		l.carry = append(l.carry, l.vals[:j]...)
		l.next = j
		if j < len(l.vals) {
			break
		}
	}
	l.row = l.carry
	return nil
}

// unexpected describes a page error; running out of pages before the row
// group's row count is a truncated column.
func (l *leaf) unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("column %s: %w", l.path, err)
}

// peekDef returns the definition level of the next value of the row.
func (l *leaf) peekDef() int {
	if l.pos >= len(l.row) {
		return 0
	}
	return l.row[l.pos].DefinitionLevel()
}

// continues reports whether the next value of the row starts another
// element of the repeated group at level rep.
func (l *leaf) continues(rep int) bool {
	return l.pos < len(l.row) && l.row[l.pos].RepetitionLevel() == rep
}

// skip consumes one instance of a node that starts at repetition level rep:
// its first value and every value nested deeper.
func (l *leaf) skip(rep int) {
	l.pos++
	for l.pos < len(l.row) && l.row[l.pos].RepetitionLevel() > rep {
		l.pos++
	}
}

// rowEncoder writes rows of resolved nodes as JSON objects.
type rowEncoder struct {
	fields  []*node
	enc     encoding
	scratch scratch
}

// appendRow appends the current row as one NDJSON line.
func (e *rowEncoder) appendRow(b []byte) []byte {
	b = append(b, '{')
	for i, n := range e.fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n.key...)
		b = e.appendNode(b, n)
	}
	return append(b, '}', '\n')
}

// appendNode appends the next instance of n and consumes its values.
func (e *rowEncoder) appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case nodePrimitive:
		l := n.leaf
		v := &l.row[l.pos]
		l.pos++
		if v.IsNull() {
			return append(b, "null"...)
		}
		return appendValue(b, v, &l.vt, &e.enc, &e.scratch)
	case nodeStruct:
		if n.first.peekDef() < n.def {
			n.skip()
			return append(b, "null"...)
		}
		b = append(b, '{')
		for i, c := range n.children {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, c.key...)
			b = e.appendNode(b, c)
		}
		for _, l := range n.extra {
			l.skip(n.rep)
		}
		return append(b, '}')
	case nodeList:
		d := n.first.peekDef()
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
			if !n.first.continues(n.elemRep) {
				break
			}
			b = append(b, ',')
		}
		return append(b, ']')
	case nodeMap:
		d := n.first.peekDef()
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
				if kl := k.leaf; kl.row[kl.pos].IsNull() {
					// Map keys are required; keep the line valid JSON
					// even for a file that breaks the rule.
					kl.pos++
					b = append(b, '"', '"')
				} else {
					b = e.appendNode(b, k)
				}
				b = append(b, ':')
				b = e.appendNode(b, v)
				if !n.first.continues(n.elemRep) {
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
			if !n.first.continues(n.elemRep) {
				break
			}
			b = append(b, ',')
		}
		return append(b, ']')
	}
	if n.invalid {
		e.scratch.invalid++
	}
	return append(b, n.value...)
}

// skip consumes a null or empty instance of n from all of its leaves.
func (n *node) skip() {
	for _, l := range n.leaves {
		l.skip(n.rep)
	}
}
