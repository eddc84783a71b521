package reader

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"

	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/splits/split"
)

// Avro data and delete files (Object Container Files) are decoded by
// github.com/twmb/avro, which iceberg-go already uses for manifests: it
// bounds what a damaged file can make it allocate (a block's compressed
// and decompressed size, the counts of arrays and maps against the bytes
// left, the nesting of the schema), which is the reader's memory bound for
// Avro. Each record is shredded into the leaves of the Parquet schema that
// avroColumns makes of the file's schema, a chunk of records at a time, so
// that everything past the decoding (column resolution, deletes, residual
// filters, value encoding) is the Parquet path's own and the two formats
// give the same bytes for the same values.

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

// avroFile is an Avro file opened for reading: its decoder, its columns as
// a Parquet root column, and the plan that shreds its records into them.
type avroFile struct {
	what, path string
	fs         *watchedIO
	file       icebergio.File
	dec        *ocf.Reader
	root       *parquet.Column
	fields     []*avroNode
	// sinks are the leaves records are shredded into, by column index;
	// a column no leaf reads is skipped.
	sinks map[int]*leaf
	// rows counts the records decoded; records is the manifest's count
	// (0 when unknown), which the file must match.
	rows, records int64
	rec           any
	keys          []string
	eof           bool
}

// avroLogicalTypes are the logical types whose values the decoder hands
// over as their Avro carrier (int, long, bytes or fixed) rather than as Go
// times and big numbers: the leaves take the stored values.
var avroLogicalTypes = []string{"date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros",
	"timestamp-nanos", "local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos", "decimal", "uuid"}

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
		if r := recover(); r != nil {
			err = fmt.Errorf("read %s %s: %w: the Avro decoder failed: %v", what, path, ErrCorruptFile, r)
		}
		if err != nil {
			_ = f.Close()
		}
	}()
	opts := make([]avro.SchemaOpt, len(avroLogicalTypes))
	for i, lt := range avroLogicalTypes {
		opts[i] = avro.CustomType{LogicalType: lt}
	}
	lim := &headerLimit{r: io.NewSectionReader(f, 0, size), max: maxAvroHeaderBytes}
	r := bufio.NewReaderSize(lim, readBufferSize)
	dec, err := ocf.NewReader(r, ocf.WithSchemaOpts(opts...), ocf.WithCodec(avroZstd{}),
		// ocf allocates a block of the size its header declares, up to
		// this bound, before reading it: no block is larger than its file.
		ocf.WithMaxBlockBytes(max(1, min(maxAvroBlockBytes, size))), ocf.WithMaxDecompressedBlockBytes(maxAvroBlockBytes))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, fs.classify(err))
	}
	lim.max = 0
	root, fields, err := avroColumns(dec.Schema())
	if err != nil {
		_ = dec.Close()
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return &avroFile{what: what, path: path, fs: fs, file: f, dec: dec, root: root, fields: fields,
		records: records, sinks: map[int]*leaf{}}, nil
}

// maxAvroHeaderBytes bounds the header of an Avro file, its schema above
// all: decoding a schema and making its columns allocates 130 to 270 bytes
// for each of its bytes (a record of 220,000 fields in 10 MiB cost 1.3 GiB,
// and ocf alone allows a schema of 64 MiB). 1 MiB holds the schema of a
// table of 15,000 to 20,000 columns.
const maxAvroHeaderBytes = 1 << 20

// headerLimit reads an Avro file and fails a read past max bytes while max
// is not 0: NewReader reads the header through it, then max is cleared.
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

// avroZstd decodes the zstandard blocks of an Avro file with the reader's
// bounded decoder (decodeZstd): ocf's own appends each zstd block to its
// output, so a block that expands to its cap of maxAvroBlockBytes made it
// allocate over five times that.
type avroZstd struct{}

func (avroZstd) Name() string { return "zstandard" }

func (avroZstd) Compress([]byte) ([]byte, error) {
	return nil, errors.New("the reader does not write Avro files")
}

func (c avroZstd) Decompress(src []byte) ([]byte, error) {
	return c.DecompressBounded(src, maxAvroBlockBytes)
}

// DecompressBounded decodes the block src into at most limit bytes.
func (avroZstd) DecompressBounded(src []byte, limit int64) ([]byte, error) {
	out, err := decodeZstd(nil, src, int(min(limit, maxAvroBlockBytes)))
	if err != nil {
		return nil, fmt.Errorf("zstandard block: %w", err)
	}
	return out, nil
}

func (avroZstd) Close() error { return nil }

// Close releases the decoder and closes the file.
func (a *avroFile) Close() error {
	return errors.Join(a.dec.Close(), a.file.Close())
}

// read makes the leaves the ones records are shredded into.
func (a *avroFile) read(leaves []*leaf) {
	for _, l := range leaves {
		a.sinks[l.index] = l
		l.whole = true
		// A row carried over from the end of a chunk is copied by the
		// column's physical type (see leaf.advance).
		if pt := leafColumn(a.root, l.index); pt != nil {
			if t := pt.Type().PhysicalType(); t != nil {
				l.col = parquetpage.Column{Type: *t, Length: l.length, MaxDef: l.maxDef, MaxRep: l.maxRep}
			}
		}
	}
}

// fill decodes the next chunk of records into the leaves, which it resets
// first, and returns how many; 0 at the end of the file. Every leaf's
// batch then holds the chunk's rows whole.
func (a *avroFile) fill() (n int, err error) {
	for _, l := range a.sinks {
		resetValues(&l.batch)
		l.next, l.nextV, l.eof, l.pos, l.rowEnd, l.vpos = 0, 0, false, 0, 0, 0
		l.cur = &l.batch
	}
	if a.eof {
		return 0, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the Avro decoder failed: %v", ErrCorruptFile, r)
		}
	}()
	var bytes int
	for n < avroChunkRows && bytes < avroChunkBytes {
		err := a.dec.Decode(&a.rec)
		if errors.Is(err, io.EOF) {
			a.eof = true
			if a.records > 0 && a.rows != a.records {
				return n, fmt.Errorf("%w: it holds %d records, its manifest says %d", ErrCorruptFile, a.rows, a.records)
			}
			break
		}
		if err != nil {
			return n, a.fs.classify(err)
		}
		if a.rows++; a.records > 0 && a.rows > a.records {
			return n, fmt.Errorf("%w: it holds more records than the %d its manifest says", ErrCorruptFile, a.records)
		}
		rec, ok := a.rec.(map[string]any)
		if !ok {
			return n, fmt.Errorf("%w: record %d is not a record", ErrCorruptFile, a.rows-1)
		}
		for _, f := range a.fields {
			if err := a.shred(f, rec[f.name], 0); err != nil {
				return n, fmt.Errorf("record %d: %w", a.rows-1, err)
			}
		}
		n++
		for _, l := range a.sinks {
			bytes = max(bytes, len(l.batch.Bytes))
		}
	}
	return n, nil
}

// shred appends the value v of node n to its leaves, at repetition level
// rep (0 for a row's first entry).
func (a *avroFile) shred(n *avroNode, v any, rep int) error {
	if v == nil {
		if !n.optional {
			return fmt.Errorf("%w: a null in the required column %s", ErrCorruptFile, n.what)
		}
		a.nulls(n.leaves, n.def-1, rep)
		return nil
	}
	switch n.kind {
	case avroLeaf:
		return a.put(n, v, rep)
	case avroRecord:
		rec, ok := v.(map[string]any)
		if !ok {
			return a.mismatch(n, v)
		}
		for _, c := range n.children {
			if err := a.shred(c, rec[c.name], rep); err != nil {
				return err
			}
		}
		return nil
	case avroList, avroKVList:
		xs, ok := v.([]any)
		if !ok {
			return a.mismatch(n, v)
		}
		if len(xs) == 0 {
			a.nulls(n.leaves, n.def, rep)
			return nil
		}
		for i, x := range xs {
			r := rep
			if i > 0 {
				r = n.elemRep
			}
			if n.kind == avroList {
				if err := a.shred(n.children[0], x, r); err != nil {
					return err
				}
				continue
			}
			kv, ok := x.(map[string]any)
			if !ok {
				return a.mismatch(n, x)
			}
			for _, c := range n.children {
				if err := a.shred(c, kv[c.name], r); err != nil {
					return err
				}
			}
		}
		return nil
	case avroMap:
		m, ok := v.(map[string]any)
		if !ok {
			return a.mismatch(n, v)
		}
		if len(m) == 0 {
			a.nulls(n.leaves, n.def, rep)
			return nil
		}
		// The decoder keeps a map's entries in a Go map, whose order is
		// random: key order makes the stream deterministic.
		a.keys = a.keys[:0]
		for k := range m {
			a.keys = append(a.keys, k)
		}
		slices.Sort(a.keys)
		keys := a.keys
		for i, k := range keys {
			r := rep
			if i > 0 {
				r = n.elemRep
			}
			if err := a.put(n.children[0], k, r); err != nil {
				return err
			}
			if err := a.shred(n.children[1], m[k], r); err != nil {
				return err
			}
		}
		return nil
	}
	// avroNullOnly: a value where only null can be.
	return a.mismatch(n, v)
}

// nulls appends an entry without a value, at definition level def, to each
// of the leaves.
func (a *avroFile) nulls(leaves []int, def, rep int) {
	for _, i := range leaves {
		if l := a.sinks[i]; l != nil {
			l.entry(def, rep)
		}
	}
}

// put appends the value v of the leaf node n.
func (a *avroFile) put(n *avroNode, v any, rep int) error {
	l := a.sinks[n.leaves[0]]
	if l == nil {
		return nil
	}
	b := &l.batch
	ok := true
	switch n.phys {
	case parquet.Boolean:
		ok = appendAs(&b.Bool, v)
	case parquet.Int32:
		ok = appendAs(&b.Int32, v)
	case parquet.Int64:
		ok = appendAs(&b.Int64, v)
	case parquet.Float:
		ok = appendAs(&b.Float, v)
	case parquet.Double:
		ok = appendAs(&b.Double, v)
	default:
		var raw []byte
		switch x := v.(type) {
		case []byte:
			raw = x
		case string:
			raw = []byte(x)
		default:
			return a.mismatch(n, v)
		}
		if len(b.Bytes)+len(raw) > math.MaxUint32 {
			return fmt.Errorf("%w: column %s: values larger than 4 GiB in one chunk", ErrCorruptFile, n.what)
		}
		b.Refs = append(b.Refs, parquetpage.Ref{Off: uint32(len(b.Bytes)), Len: uint32(len(raw))})
		b.Bytes = append(b.Bytes, raw...)
	}
	if !ok {
		return a.mismatch(n, v)
	}
	l.entry(l.maxDef, rep)
	return nil
}

// appendAs appends v to dst when it is a T, and reports whether it was.
func appendAs[T any](dst *[]T, v any) bool {
	x, ok := v.(T)
	if ok {
		*dst = append(*dst, x)
	}
	return ok
}

func (a *avroFile) mismatch(n *avroNode, v any) error {
	return fmt.Errorf("%w: column %s holds a %T", ErrCorruptFile, n.what, v)
}

// scan reads every record of the file through the leaves (flat columns
// only) and calls row after each row is loaded.
func (a *avroFile) scan(leaves []*leaf, row func() error) error {
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
				if err := l.advance(); err != nil {
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
				if err := l.advance(); err != nil {
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

// entry appends an entry at definition level def and repetition level rep
// to the leaf's batch; its value, if def says it has one, is appended by
// the caller.
func (l *leaf) entry(def, rep int) {
	b := &l.batch
	if l.maxDef > 0 {
		b.Def = append(b.Def, uint8(def))
	}
	if l.maxRep > 0 {
		b.Rep = append(b.Rep, uint8(rep))
	}
	b.N++
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
func (c *columnFile) scan(fs *watchedIO, leaves []*leaf, row func() error) error {
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
