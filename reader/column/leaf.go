// Package column holds Leaf, the cursor through which a stream reads one
// leaf column of its file a row at a time: the entries of the current row
// (definition and repetition levels, and the values that the levels say are
// there) over a batch of decoded entries. A Parquet leaf fills its batch
// from the pages of a row group's column chunk through parquetpage and the
// bounded codecs of reader/codec; an Avro file's leaves are filled with
// whole rows by the Avro decoder (AppendEntry). What reads a row (the row
// encoder, the residual filter, the delete sets) sees the same cursor
// whichever format the file has.
//
// It owns the walk over entries only: which Iceberg field a leaf stands for
// and how its values are written (encode.ValueType) are set by who builds
// the leaf.
package column

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/codec"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
)

// Leaf is one Parquet leaf column that a stream reads, with a cursor over
// the entries of the current row group. Entries are decoded a batch at a
// time by parquetpage into typed slices: levels as bytes, values as
// int32, int64, float, double or byte-array slices. A row that straddles
// two batches (a list in data pages v1 may go on in the next page) is
// copied into carry, values and all, so a batch is never held beyond the
// next.
type Leaf struct {
	// What every row touches comes first, to share cache lines: the
	// current row, entries [Pos, RowEnd) of Cur, the value of the entry at
	// Pos being Cur's VPos-th (the encoder moves Pos and VPos along as it
	// consumes entries); where the next row starts in batch; the levels
	// and the conversion.
	Cur         *parquetpage.Values
	Pos, RowEnd int
	VPos        int
	Next        int // entry of batch that starts the next row
	NextV       int // value of batch of that entry
	MaxRep      int
	MaxDef      int
	Type        encode.ValueType
	Batch       parquetpage.Values

	Index  int
	Path   string
	Length int // of a FIXED_LEN_BYTE_ARRAY value
	// Entries is how many entries load decodes at a time; 0 is
	// batchEntries.
	Entries int
	EOF     bool // the column chunk has no more entries
	// Whole is true for the leaf of an Avro file, whose batch is filled
	// with whole rows and is followed by nothing (AppendEntry).
	Whole bool

	pages     parquetpage.Reader
	Col       parquetpage.Column
	carry     parquetpage.Values
	carryData carried
}

// batchEntries is how many entries a leaf decodes at a time: enough to
// amortize the call, few enough that the batches of a stream's columns
// stay in cache (9 bytes an entry for an optional long column).
const batchEntries = 2048

// Start points the cursor at the leaf's chunk of a row group of the file
// src, whose metadata is md; the leaves of a stream share one scratch.
func (l *Leaf) Start(src io.ReaderAt, md *format.ColumnMetaData, scratch *parquetpage.Scratch) {
	l.Col = parquetpage.Column{Type: md.Type, Length: l.Length, MaxDef: l.MaxDef, MaxRep: l.MaxRep, Codec: md.Codec}
	l.pages.Reset(src, l.Col, parquetpage.ChunkOf(md), codec.Decompress, scratch)
	l.Batch, l.Next, l.NextV, l.EOF = parquetpage.Values{}, 0, 0, false
	l.Cur, l.Pos, l.RowEnd, l.VPos = &l.Batch, 0, 0, 0
}

// Stop releases the cursor's pages and buffers.
func (l *Leaf) Stop() {
	l.pages.Release()
	l.Batch, l.carry, l.carryData = parquetpage.Values{}, parquetpage.Values{}, carried{}
	l.Cur, l.Next, l.NextV, l.Pos, l.RowEnd, l.VPos, l.EOF = &l.Batch, 0, 0, 0, 0, 0, false
}

// End checks that the column chunk holds no entry past the row group's
// last row. A page header that claims more values than the page's share of
// the rows (a damaged num_values) would otherwise shift this column
// against the others without any error.
func (l *Leaf) End() error {
	extra := l.Next < l.Batch.N
	if !extra && !l.EOF {
		switch err := l.load(); {
		case err == nil:
			extra = true
		case !errors.Is(err, io.EOF):
			return l.unexpected(err)
		}
	}
	if extra {
		return fmt.Errorf("column %s: values past the row group's last row", l.Path)
	}
	return nil
}

// load decodes the next batch of the column chunk.
func (l *Leaf) load() error {
	l.Next, l.NextV = 0, 0
	if l.Whole {
		l.EOF = true
		return io.EOF
	}
	n := batchEntries
	if l.Entries > 0 {
		n = l.Entries
	}
	err := l.pages.Read(&l.Batch, n)
	if errors.Is(err, io.EOF) {
		l.EOF = true
	}
	if l.Type.NullOnly && err == nil {
		for i := range l.Batch.N {
			if l.defined(&l.Batch, i) {
				return fmt.Errorf("column %s is annotated NULL, yet holds a value", l.Path)
			}
		}
	}
	return err
}

// defined reports whether entry i of v holds a value.
func (l *Leaf) defined(v *parquetpage.Values, i int) bool {
	return v.Def == nil || int(v.Def[i]) == l.MaxDef
}

// Advance moves the cursor to the next row.
func (l *Leaf) Advance() error {
	if l.Next == l.Batch.N {
		if err := l.load(); err != nil {
			return l.unexpected(err)
		}
	}
	start, startV := l.Next, l.NextV
	b := &l.Batch
	if l.MaxRep == 0 {
		l.Cur, l.Pos, l.RowEnd, l.VPos = b, start, start+1, startV
		l.Next++
		if l.defined(b, start) {
			l.NextV++
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
		l.Cur, l.Pos, l.RowEnd, l.VPos = b, start, j, startV
		l.Next, l.NextV = j, v
		return nil
	}
	// The row reaches the end of the batch and may go on in the next one:
	// copy what it has so far, as the next batch reuses this one's storage.
	l.carryData.reset(&l.carry)
	l.carryData.append(&l.carry, b, l.Col.Type, start, b.N, startV, v)
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
		l.carryData.append(&l.carry, b, l.Col.Type, 0, j, 0, v)
		l.Next, l.NextV = j, v
		if j < b.N {
			break
		}
	}
	l.Cur, l.Pos, l.RowEnd, l.VPos = &l.carry, 0, l.carry.N, 0
	return nil
}

// unexpected describes a page error; running out of entries before the
// row group's row count is a truncated column.
func (l *Leaf) unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("column %s: %w", l.Path, err)
}

// Null reports whether the entry at pos is null.
func (l *Leaf) Null() bool {
	return l.Cur.Def != nil && int(l.Cur.Def[l.Pos]) < l.MaxDef
}

// PeekDef returns the definition level of the next entry of the row.
func (l *Leaf) PeekDef() int {
	if l.Pos >= l.RowEnd {
		return 0
	}
	if l.Cur.Def == nil {
		return l.MaxDef
	}
	return int(l.Cur.Def[l.Pos])
}

// Continues reports whether the next entry of the row starts another
// element of the repeated group at level rep.
func (l *Leaf) Continues(rep int) bool {
	return l.Pos < l.RowEnd && int(l.Cur.Rep[l.Pos]) == rep
}

// Consume moves past the entry at pos.
func (l *Leaf) Consume() {
	if l.defined(l.Cur, l.Pos) {
		l.VPos++
	}
	l.Pos++
}

// Skip consumes one instance of a node that starts at repetition level rep:
// its first entry and every entry nested deeper.
func (l *Leaf) Skip(rep int) {
	l.Consume()
	for l.Pos < l.RowEnd && int(l.Cur.Rep[l.Pos]) > rep {
		l.Consume()
	}
}

// AppendEntry appends an entry at definition level def and repetition level rep
// to the leaf's batch; its value, if def says it has one, is appended by
// the caller.
func (l *Leaf) AppendEntry(def, rep int) {
	b := &l.Batch
	if l.MaxDef > 0 {
		b.Def = append(b.Def, uint8(def))
	}
	if l.MaxRep > 0 {
		b.Rep = append(b.Rep, uint8(rep))
	}
	b.N++
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
