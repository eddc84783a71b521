package reader

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/codec"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
)

// leaf is one Parquet leaf column that a stream reads, with a cursor over
// the entries of the current row group. Entries are decoded a batch at a
// time by parquetpage into typed slices: levels as bytes, values as
// int32, int64, float, double or byte-array slices. A row that straddles
// two batches (a list in data pages v1 may go on in the next page) is
// copied into carry, values and all, so a batch is never held beyond the
// next.
type leaf struct {
	// What every row touches comes first, to share cache lines: the
	// current row, entries [pos, rowEnd) of cur, the value of the entry at
	// pos being cur's vpos-th (the encoder moves pos and vpos along as it
	// consumes entries); where the next row starts in batch; the levels
	// and the conversion.
	cur         *parquetpage.Values
	pos, rowEnd int
	vpos        int
	next        int // entry of batch that starts the next row
	nextV       int // value of batch of that entry
	maxRep      int
	maxDef      int
	vt          encode.ValueType
	batch       parquetpage.Values

	index  int
	path   string
	length int // of a FIXED_LEN_BYTE_ARRAY value
	// entries is how many entries load decodes at a time; 0 is
	// batchEntries.
	entries int
	eof     bool // the column chunk has no more entries
	// whole is true for the leaf of an Avro file, whose batch is filled
	// with whole rows and is followed by nothing (see avroFile.fill).
	whole bool

	pages     parquetpage.Reader
	col       parquetpage.Column
	carry     parquetpage.Values
	carryData carried
}

// batchEntries is how many entries a leaf decodes at a time: enough to
// amortize the call, few enough that the batches of a stream's columns
// stay in cache (9 bytes an entry for an optional long column).
const batchEntries = 2048

// start points the cursor at the leaf's chunk of a row group of the file
// src, whose metadata is md; the leaves of a stream share one scratch.
func (l *leaf) start(src io.ReaderAt, md *format.ColumnMetaData, scratch *parquetpage.Scratch) {
	l.col = parquetpage.Column{Type: md.Type, Length: l.length, MaxDef: l.maxDef, MaxRep: l.maxRep, Codec: md.Codec}
	l.pages.Reset(src, l.col, parquetpage.ChunkOf(md), codec.Decompress, scratch)
	l.batch, l.next, l.nextV, l.eof = parquetpage.Values{}, 0, 0, false
	l.cur, l.pos, l.rowEnd, l.vpos = &l.batch, 0, 0, 0
}

// stop releases the cursor's pages and buffers.
func (l *leaf) stop() {
	l.pages.Release()
	l.batch, l.carry, l.carryData = parquetpage.Values{}, parquetpage.Values{}, carried{}
	l.cur, l.next, l.nextV, l.pos, l.rowEnd, l.vpos, l.eof = &l.batch, 0, 0, 0, 0, 0, false
}

// end checks that the column chunk holds no entry past the row group's
// last row. A page header that claims more values than the page's share of
// the rows (a damaged num_values) would otherwise shift this column
// against the others without any error.
func (l *leaf) end() error {
	extra := l.next < l.batch.N
	if !extra && !l.eof {
		switch err := l.load(); {
		case err == nil:
			extra = true
		case !errors.Is(err, io.EOF):
			return l.unexpected(err)
		}
	}
	if extra {
		return fmt.Errorf("column %s: values past the row group's last row", l.path)
	}
	return nil
}

// load decodes the next batch of the column chunk.
func (l *leaf) load() error {
	l.next, l.nextV = 0, 0
	if l.whole {
		l.eof = true
		return io.EOF
	}
	n := batchEntries
	if l.entries > 0 {
		n = l.entries
	}
	err := l.pages.Read(&l.batch, n)
	if errors.Is(err, io.EOF) {
		l.eof = true
	}
	if l.vt.NullOnly && err == nil {
		for i := range l.batch.N {
			if l.defined(&l.batch, i) {
				return fmt.Errorf("column %s is annotated NULL, yet holds a value", l.path)
			}
		}
	}
	return err
}

// defined reports whether entry i of v holds a value.
func (l *leaf) defined(v *parquetpage.Values, i int) bool {
	return v.Def == nil || int(v.Def[i]) == l.maxDef
}

// advance moves the cursor to the next row.
func (l *leaf) advance() error {
	if l.next == l.batch.N {
		if err := l.load(); err != nil {
			return l.unexpected(err)
		}
	}
	start, startV := l.next, l.nextV
	b := &l.batch
	if l.maxRep == 0 {
		l.cur, l.pos, l.rowEnd, l.vpos = b, start, start+1, startV
		l.next++
		if l.defined(b, start) {
			l.nextV++
		}
		return nil
	}
	j, v := start, startV
	for {
		if l.defined(b, j) {
			v++
		}
		j++
		if j == b.N || b.Rep[j] == 0 {
			break
		}
	}
	if j < b.N {
		l.cur, l.pos, l.rowEnd, l.vpos = b, start, j, startV
		l.next, l.nextV = j, v
		return nil
	}
	// The row reaches the end of the batch and may go on in the next one:
	// copy what it has so far, as the next batch reuses this one's storage.
	l.carryData.reset(&l.carry)
	l.carryData.append(&l.carry, b, l.col.Type, start, b.N, startV, v)
	for {
		if err := l.load(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return l.unexpected(err)
		}
		j, v = 0, 0
		for j < b.N && b.Rep[j] != 0 {
			if l.defined(b, j) {
				v++
			}
			j++
		}
		l.carryData.append(&l.carry, b, l.col.Type, 0, j, 0, v)
		l.next, l.nextV = j, v
		if j < b.N {
			break
		}
	}
	l.cur, l.pos, l.rowEnd, l.vpos = &l.carry, 0, l.carry.N, 0
	return nil
}

// unexpected describes a page error; running out of entries before the
// row group's row count is a truncated column.
func (l *leaf) unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("column %s: %w", l.path, err)
}

// null reports whether the entry at pos is null.
func (l *leaf) null() bool {
	return l.cur.Def != nil && int(l.cur.Def[l.pos]) < l.maxDef
}

// peekDef returns the definition level of the next entry of the row.
func (l *leaf) peekDef() int {
	if l.pos >= l.rowEnd {
		return 0
	}
	if l.cur.Def == nil {
		return l.maxDef
	}
	return int(l.cur.Def[l.pos])
}

// continues reports whether the next entry of the row starts another
// element of the repeated group at level rep.
func (l *leaf) continues(rep int) bool {
	return l.pos < l.rowEnd && int(l.cur.Rep[l.pos]) == rep
}

// consume moves past the entry at pos.
func (l *leaf) consume() {
	if l.defined(l.cur, l.pos) {
		l.vpos++
	}
	l.pos++
}

// skip consumes one instance of a node that starts at repetition level rep:
// its first entry and every entry nested deeper.
func (l *leaf) skip(rep int) {
	l.consume()
	for l.pos < l.rowEnd && int(l.cur.Rep[l.pos]) > rep {
		l.consume()
	}
}

// carried holds the storage of a leaf's carry.
type carried struct {
	def, rep []uint8
}

// reset empties c.
func (c *carried) reset(v *parquetpage.Values) {
	*v = parquetpage.Values{Bool: v.Bool[:0], Int32: v.Int32[:0], Int64: v.Int64[:0], Int96: v.Int96[:0],
		Float: v.Float[:0], Double: v.Double[:0], Refs: v.Refs[:0], Bytes: v.Bytes[:0]}
	c.def, c.rep = c.def[:0], c.rep[:0]
}

// append copies entries [from, to) of b, whose values are [vfrom, vto),
// to the end of c, byte arrays included.
func (c *carried) append(v, b *parquetpage.Values, t format.Type, from, to, vfrom, vto int) {
	if b.Def != nil {
		c.def = append(c.def, b.Def[from:to]...)
		v.Def = c.def
	}
	if b.Rep != nil {
		c.rep = append(c.rep, b.Rep[from:to]...)
		v.Rep = c.rep
	}
	v.N += to - from
	switch t {
	case format.Boolean:
		v.Bool = append(v.Bool, b.Bool[vfrom:vto]...)
	case format.Int32:
		v.Int32 = append(v.Int32, b.Int32[vfrom:vto]...)
	case format.Int64:
		v.Int64 = append(v.Int64, b.Int64[vfrom:vto]...)
	case format.Int96:
		v.Int96 = append(v.Int96, b.Int96[vfrom:vto]...)
	case format.Float:
		v.Float = append(v.Float, b.Float[vfrom:vto]...)
	case format.Double:
		v.Double = append(v.Double, b.Double[vfrom:vto]...)
	default:
		for i := vfrom; i < vto; i++ {
			raw := b.ByteArray(i)
			v.Refs = append(v.Refs, parquetpage.Ref{Off: uint32(len(v.Bytes)), Len: uint32(len(raw))})
			v.Bytes = append(v.Bytes, raw...)
		}
	}
}
