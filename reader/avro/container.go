// Package avro reads Avro data and delete files (Object Container Files)
// into the same leaf columns as a Parquet file: the file's Avro schema
// becomes the Parquet schema it stands for (avroschema.go), so that schema
// resolution, delete sets, residual filters and value encoding are the
// Parquet path's own and the two formats give the same bytes for the same
// values. File reads the blocks one by one (avroblocks.go), decompressed
// by the bounded codecs of reader/codec, and decodes their records with a
// program compiled from the schema for the leaves a stream reads
// (avrodecode.go), filling each leaf's batch with whole rows, a chunk of
// records at a time.
//
// Everything it reads is held to bounds the file's bytes cannot move: the
// header (the schema) to 1 MiB and 64 levels of nesting, a block to 64 MiB
// compressed and decompressed, array and map counts to the block's bytes,
// and the record count to the manifest's. A file it cannot decode wraps
// readerr.ErrCorruptFile; a codec or schema it does not read,
// readerr.ErrUnsupported. It owns decoding only: opening the file through
// the table's FileIO, and telling a storage failure from damage (Open's
// classify), are the caller's.
package avro

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// The limits on one block of an Avro file: a writer cuts blocks at about
// 64 KiB (Avro's default sync interval), 1024 times less.
const (
	maxAvroBlockBytes = 64 << 20
	// avroChunkRows is how many records a chunk holds at most; a chunk of
	// large records ends earlier, at avroChunkBytes of byte-array values.
	avroChunkRows  = 1024
	avroChunkBytes = 4 << 20
)

// File is an Avro file opened for reading: its blocks, its columns as
// a Parquet root column, and the program that decodes its records into
// them.
type File struct {
	what, path string
	classify   func(error) error
	file       icebergio.File
	blocks     *avroBlocks
	Root       *parquet.Column
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

// Open reads the header of the Avro file f, opened from path; what
// names it in errors ("data file"). records is the manifest's row count, 0
// when unknown; classify gives a read error of the storage's its cause.
// The file is f's until Close.
func Open(f icebergio.File, what, path string, size, records int64, classify func(error) error) (*File, error) {
	if st, serr := f.Stat(); serr == nil && st.Size() > 0 {
		size = st.Size()
	}
	lim := &headerLimit{r: io.NewSectionReader(f, 0, size), max: maxAvroHeaderBytes}
	// A block is read whole before it is decoded: none is larger than its
	// file.
	blocks, err := readAvroHeader(bufio.NewReaderSize(lim, bufferSize), max(1, min(maxAvroBlockBytes, size)))
	if err != nil {
		if errors.Is(err, readerr.ErrUnsupported) {
			return nil, fmt.Errorf("read %s %s: %w", what, path, err)
		}
		return nil, fmt.Errorf("read %s %s: %w", what, path, classify(err))
	}
	lim.max = 0
	root, fields, err := avroColumns(blocks.schema)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return &File{what: what, path: path, classify: classify, file: f, blocks: blocks, Root: root, fields: fields,
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
func (a *File) Close() error {
	return a.file.Close()
}

// DecodeInto makes the leaves the ones records are decoded into, and compiles
// the program that does it.
func (a *File) DecodeInto(leaves []*column.Leaf) {
	for _, l := range leaves {
		if a.sinks[l.Index] == nil {
			a.leaves = append(a.leaves, l)
		}
		a.sinks[l.Index] = l
		l.Whole = true
		// A row carried over from the end of a chunk is copied by the
		// column's physical type (see leaf.advance).
		if pt := leafColumn(a.Root, l.Index); pt != nil {
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

// Fill decodes the next chunk of records into the leaves, which it resets
// first, and returns how many; 0 at the end of the file. Every leaf's
// batch then holds the chunk's rows whole.
func (a *File) Fill() (n int, err error) {
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
			return n, fmt.Errorf("%w: it holds more records than the %d its manifest says", readerr.ErrCorruptFile, a.records)
		}
		start := d.pos
		if err := d.record(a.prog); err != nil {
			return n, fmt.Errorf("%w: record %d: %w", readerr.ErrCorruptFile, a.rows-1, err)
		}
		// A record of nulls takes no bytes: a block's count may not make
		// many of them out of nothing (ocf's rule).
		if d.pos == start {
			if a.zeroRun++; a.zeroRun > maxAvroZeroByteRecords {
				return n, fmt.Errorf("%w: a block yields more than %d records of no bytes", readerr.ErrCorruptFile, maxAvroZeroByteRecords)
			}
		} else {
			a.zeroRun = 0
		}
		if a.remain--; a.remain == 0 && d.pos != len(d.buf) {
			return n, fmt.Errorf("%w: %d bytes after the last record of a block", readerr.ErrCorruptFile, len(d.buf)-d.pos)
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
func (a *File) nextBlock() error {
	block, count, err := a.blocks.next()
	if errors.Is(err, io.EOF) {
		a.eof = true
		if a.records > 0 && a.rows != a.records {
			return fmt.Errorf("%w: it holds %d records, its manifest says %d", readerr.ErrCorruptFile, a.rows, a.records)
		}
		return nil
	}
	if err != nil {
		if errors.Is(err, readerr.ErrUnsupported) {
			return err
		}
		return a.classify(err)
	}
	a.dec.buf, a.dec.pos, a.remain, a.zeroRun = block, 0, count, 0
	return nil
}

// Scan reads every record of the file through the leaves (flat columns
// only) and calls row after each row is loaded.
func (a *File) Scan(leaves []*column.Leaf, row func() error) error {
	a.DecodeInto(leaves)
	for {
		n, err := a.Fill()
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

// bufferSize is the buffer an Avro file's header and blocks are read
// through: as for Parquet pages, large enough that an object store sees few
// requests per block.
const bufferSize = 256 << 10
