package reader

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/reader/column"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/splits/split"
)

// Avro data and delete files (Object Container Files) are read block by
// block (avroblocks.go) and their records decoded by a program compiled
// from the file's schema for the leaves a stream reads (avrodecode.go):
// the leaves of the Parquet schema that avroColumns makes of the file's
// schema, filled a chunk of records at a time, so that everything past the
// decoding (column resolution, deletes, residual filters, value encoding)
// is the Parquet path's own and the two formats give the same bytes for
// the same values.

// The limits on one block of an Avro file: a writer cuts blocks at about
// 64 KiB (Avro's default sync interval), 1024 times less.
const (
	maxAvroBlockBytes = 64 << 20
	// avroChunkRows is how many records a chunk holds at most; a chunk of
	// large records ends earlier, at avroChunkBytes of byte-array values.
	avroChunkRows  = 1024
	avroChunkBytes = 4 << 20
)

// isAvro reports whether a file format, as a split spells it, is Avro.
func isAvro(format string) bool { return strings.EqualFold(format, string(iceberg.AvroFile)) }

// checkFormat refuses a data or delete file in a format the reader does not
// read (ORC); what names the file ("data file").
func checkFormat(what, path, format string) error {
	if format == "" || strings.EqualFold(format, string(iceberg.ParquetFile)) || isAvro(format) {
		return nil
	}
	return fmt.Errorf("%w: %s %s is %s; only Parquet and Avro files are read", ErrUnsupported, what, path, format)
}

// avroFile is an Avro file opened for reading: its blocks, its columns as
// a Parquet root column, and the program that decodes its records into
// them.
type avroFile struct {
	what, path string
	fs         *watchedIO
	file       icebergio.File
	blocks     *avroBlocks
	root       *parquet.Column
	fields     []*avroNode
	// sinks are the leaves records are decoded into, by column index; a
	// column no leaf reads is skipped. byteLeaves are those of byte-array
	// values, which end a chunk at avroChunkBytes.
	sinks      map[int]*column.Leaf
	leaves     []*column.Leaf
	byteLeaves []*column.Leaf
	prog       []avroOp
	// dec holds the block being decoded, of which remain records are
	// left; zeroRun counts the records in a row that took no bytes.
	dec     avroDecoder
	remain  int64
	zeroRun int
	// rows counts the records decoded; records is the manifest's count
	// (0 when unknown), which the file must match.
	rows, records int64
	eof           bool
}

// openAvro opens the Avro file at path through fs and reads its header;
// what names it in errors ("data file"). records is the manifest's row
// count, 0 when unknown.
func openAvro(fs *watchedIO, what, path string, size, records int64) (_ *avroFile, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	if st, serr := f.Stat(); serr == nil && st.Size() > 0 {
		size = st.Size()
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	lim := &headerLimit{r: io.NewSectionReader(f, 0, size), max: maxAvroHeaderBytes}
	// A block is read whole before it is decoded: none is larger than its
	// file.
	blocks, err := readAvroHeader(bufio.NewReaderSize(lim, readBufferSize), max(1, min(maxAvroBlockBytes, size)))
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return nil, fmt.Errorf("read %s %s: %w", what, path, err)
		}
		return nil, fmt.Errorf("read %s %s: %w", what, path, fs.classify(err))
	}
	lim.max = 0
	root, fields, err := avroColumns(blocks.schema)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return &avroFile{what: what, path: path, fs: fs, file: f, blocks: blocks, root: root, fields: fields,
		records: records, sinks: map[int]*column.Leaf{}}, nil
}

// maxAvroHeaderBytes bounds the header of an Avro file, its schema above
// all: decoding a schema and making its columns allocates 130 to 270 bytes
// for each of its bytes (a record of 220,000 fields in 10 MiB cost 1.3 GiB,
// and ocf alone allows a schema of 64 MiB). 1 MiB holds the schema of a
// table of 15,000 to 20,000 columns.
const maxAvroHeaderBytes = 1 << 20

// headerLimit reads an Avro file and fails a read past max bytes while max
// is not 0: the header is read through it, then max is cleared.
type headerLimit struct {
	r   io.Reader
	n   int64 // the bytes read so far
	max int64
}

func (h *headerLimit) Read(p []byte) (int, error) {
	if h.max > 0 {
		if h.n >= h.max {
			return 0, fmt.Errorf("the file's Avro header (its schema) passes %d bytes, the most the reader reads", h.max)
		}
		p = p[:min(int64(len(p)), h.max-h.n)]
	}
	n, err := h.r.Read(p)
	h.n += int64(n)
	return n, err
}

// Close closes the file.
func (a *avroFile) Close() error {
	return a.file.Close()
}

// read makes the leaves the ones records are decoded into, and compiles
// the program that does it.
func (a *avroFile) read(leaves []*column.Leaf) {
	for _, l := range leaves {
		if a.sinks[l.Index] == nil {
			a.leaves = append(a.leaves, l)
		}
		a.sinks[l.Index] = l
		l.Whole = true
		// A row carried over from the end of a chunk is copied by the
		// column's physical type (see leaf.advance).
		if pt := leafColumn(a.root, l.Index); pt != nil {
			if t := pt.Type().PhysicalType(); t != nil {
				l.Col = parquetpage.Column{Type: *t, Length: l.Length, MaxDef: l.MaxDef, MaxRep: l.MaxRep}
				switch *t {
				case format.ByteArray, format.FixedLenByteArray:
					a.byteLeaves = append(a.byteLeaves, l)
				}
			}
		}
	}
	a.prog = make([]avroOp, 0, len(a.fields))
	for _, f := range a.fields {
		a.prog = append(a.prog, compileAvro(f, a.sinks))
	}
}

// fill decodes the next chunk of records into the leaves, which it resets
// first, and returns how many; 0 at the end of the file. Every leaf's
// batch then holds the chunk's rows whole.
func (a *avroFile) fill() (n int, err error) {
	for _, l := range a.leaves {
		resetValues(&l.Batch)
		l.Next, l.NextV, l.EOF, l.Pos, l.RowEnd, l.VPos = 0, 0, false, 0, 0, 0
		l.Cur = &l.Batch
	}
	if a.eof {
		return 0, nil
	}
	d := &a.dec
	bytes := 0
	for n < avroChunkRows && bytes < avroChunkBytes {
		if a.remain == 0 {
			if err := a.nextBlock(); err != nil {
				return n, err
			}
			if a.eof {
				break
			}
		}
		if a.rows++; a.records > 0 && a.rows > a.records {
			return n, fmt.Errorf("%w: it holds more records than the %d its manifest says", ErrCorruptFile, a.records)
		}
		start := d.pos
		if err := d.record(a.prog); err != nil {
			return n, fmt.Errorf("%w: record %d: %w", ErrCorruptFile, a.rows-1, err)
		}
		// A record of nulls takes no bytes: a block's count may not make
		// many of them out of nothing (ocf's rule).
		if d.pos == start {
			if a.zeroRun++; a.zeroRun > maxAvroZeroByteRecords {
				return n, fmt.Errorf("%w: a block yields more than %d records of no bytes", ErrCorruptFile, maxAvroZeroByteRecords)
			}
		} else {
			a.zeroRun = 0
		}
		if a.remain--; a.remain == 0 && d.pos != len(d.buf) {
			return n, fmt.Errorf("%w: %d bytes after the last record of a block", ErrCorruptFile, len(d.buf)-d.pos)
		}
		n++
		for _, l := range a.byteLeaves {
			bytes = max(bytes, len(l.Batch.Bytes))
		}
	}
	return n, nil
}

// nextBlock reads the next block into the decoder; at the end of the file
// it sets eof and checks the count of records.
func (a *avroFile) nextBlock() error {
	block, count, err := a.blocks.next()
	if errors.Is(err, io.EOF) {
		a.eof = true
		if a.records > 0 && a.rows != a.records {
			return fmt.Errorf("%w: it holds %d records, its manifest says %d", ErrCorruptFile, a.rows, a.records)
		}
		return nil
	}
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return err
		}
		return a.fs.classify(err)
	}
	a.dec.buf, a.dec.pos, a.remain, a.zeroRun = block, 0, count, 0
	return nil
}

// scan reads every record of the file through the leaves (flat columns
// only) and calls row after each row is loaded.
func (a *avroFile) scan(leaves []*column.Leaf, row func() error) error {
	a.read(leaves)
	for {
		n, err := a.fill()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		for range n {
			for _, l := range leaves {
				if err := l.Advance(); err != nil {
					return err
				}
			}
			if err := row(); err != nil {
				return err
			}
		}
	}
}

// openAvroData opens the Avro data file d.
func openAvroData(fs *watchedIO, d split.DataFile) (*avroFile, error) {
	if d.Range != nil {
		return nil, fmt.Errorf("read data file %s: %w: a range of row groups of an Avro file", d.Path, split.ErrMalformedToken)
	}
	return openAvro(fs, "data file", d.Path, d.Size, d.Records)
}

// runAvro writes the surviving rows of an Avro data file into b, a chunk
// of records at a time; positions count records from the file's first.
func (f *fileStream) runAvro(b *batch, dels *positionWalk) error {
	var base int64
	for {
		n, err := f.avro.fill()
		if err != nil {
			return fmt.Errorf("read data file %s: %w", f.path, err)
		}
		if n == 0 {
			return nil
		}
		for i := range n {
			for _, l := range f.leaves {
				if l.MaxRep == 0 {
					// A flat column: its row is the next entry (as in run).
					l.Cur, l.Pos, l.RowEnd, l.VPos = &l.Batch, l.Next, l.Next+1, l.NextV
					if l.Batch.Def == nil || int(l.Batch.Def[l.Next]) == l.MaxDef {
						l.NextV++
					}
					l.Next++
					continue
				}
				if err := l.Advance(); err != nil {
					return fmt.Errorf("read data file %s: %w", f.path, err)
				}
			}
			if err := f.row(b, dels, base+int64(i)); err != nil {
				return err
			}
		}
		base += int64(n)
	}
}

// resetValues empties v and keeps its storage.
func resetValues(v *parquetpage.Values) {
	*v = parquetpage.Values{Def: v.Def[:0], Rep: v.Rep[:0], Bool: v.Bool[:0], Int32: v.Int32[:0], Int64: v.Int64[:0],
		Float: v.Float[:0], Double: v.Double[:0], Refs: v.Refs[:0], Bytes: v.Bytes[:0]}
}

// leafColumn returns the leaf column under c with the given index, or nil.
func leafColumn(c *parquet.Column, index int) *parquet.Column {
	if c.Leaf() {
		if c.Index() == index {
			return c
		}
		return nil
	}
	for _, child := range c.Columns() {
		if l := leafColumn(child, index); l != nil {
			return l
		}
	}
	return nil
}

// columnFile is a delete file opened for reading by columns: a Parquet
// file, or an Avro file shredded into the same leaves.
type columnFile struct {
	root *parquet.Column
	pf   *parquet.File
	file icebergio.File
	avro *avroFile
}

// openColumns opens the delete file d, Parquet or Avro; what names it in
// errors ("equality delete file").
func openColumns(fs *watchedIO, what string, d split.DeleteFile) (*columnFile, error) {
	if err := checkFormat(what, d.Path, d.Format); err != nil {
		return nil, err
	}
	if isAvro(d.Format) {
		a, err := openAvro(fs, what, d.Path, d.Size, d.Records)
		if err != nil {
			return nil, err
		}
		return &columnFile{root: a.root, avro: a}, nil
	}
	pf, f, err := openParquet(fs, what, d.Path, d.Size)
	if err != nil {
		return nil, err
	}
	return &columnFile{root: pf.Root(), pf: pf, file: f}, nil
}

// scan reads every row of the file through the leaves (flat columns only)
// and calls row after each row is loaded.
func (c *columnFile) scan(fs *watchedIO, leaves []*column.Leaf, row func() error) error {
	if c.avro != nil {
		return c.avro.scan(leaves, row)
	}
	return scanRows(fs, c.pf, c.file, leaves, row)
}

// Close closes the file.
func (c *columnFile) Close() error {
	if c.avro != nil {
		return c.avro.Close()
	}
	return c.file.Close()
}
