// Package reader turns one split (a Parquet or Avro data file and the
// delete files the planner matched to it, or several such files packed into
// one split) into its live rows, encoded as NDJSON the way Druid's Parquet
// reader would present the same values.
//
// OpenAll (Open for a split of one file) does everything that can fail
// before the first byte, for the split's first file, with the FileIO of the
// split's table that the caller hands it: it opens the data file and checks
// its footer (reader/storage), picks the split's row groups, resolves the
// Iceberg schema against the file's columns by field id, or by name through
// the table's name mapping (reader/schema), and loads every delete set
// (reader/deletes: positional deletes and deletion vectors into one position
// bitmap, equality deletes into one key set per list of equality ids),
// through a deletes.Cache when the Reader has one (WithDeleteCache), so that
// a delete file shared by many splits is decoded once. Stream.Run then
// streams the file row group by row group (only the row groups of the
// split's range when the planner split the file, see token.RowGroupRange;
// row positions stay file-absolute), reading each leaf column through a
// column.Leaf that parquetpage (or reader/avro, whose records fill the
// leaves of the Parquet schema their Avro schema stands for) decodes,
// skipping deleted rows and the rows that fail the split's residual filter
// (evaluated by iceberg-go), and encodes straight from the decoded values
// into a reused buffer (reader/encode); memory is bounded by the delete sets
// and one batch, never by the data file. The later files of a packed split
// are opened as Run reaches them.
//
// A typical use, in an HTTP handler:
//
//	st, err := r.OpenAll(ctx, fs, parts, tableSchema)
//	if err != nil {
//		return err // nothing written yet: map it to a status
//	}
//	defer st.Close()
//	err = st.Run(ctx, w, rc.Flush) // an error now must abort the response
//
// The package and its subpackages never log; errors wrap their cause and
// the package's sentinels (ErrCorruptFile, ErrNoFieldIDs, ErrSchemaMismatch,
// ErrUnsupported, the values of package readerr that the subpackages wrap),
// and a missing file keeps fs.ErrNotExist in the chain.
package reader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader/avro"
	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/reader/schema"
	"github.com/druidiceberg/sidecar/reader/storage"
	"github.com/druidiceberg/sidecar/token"
)

// DefaultBatchRows is the number of rows per flush when WithBatchRows is
// not given.
const DefaultBatchRows = 4096

// maxBatchBytes ends a batch early when its rows are large, so one batch
// stays small whatever the row width. With two buffers a stream (see
// batchWriter), 256 KiB kept 8 concurrent streams' buffers in cache:
// cmd/sidecar-bench served 8 streams at 2.23 M rows/s with it against
// 1.8 M with 1 MiB, and one stream at 1.53-1.58 M against 1.22-1.44 M;
// smaller batches cost more write calls (64 KiB: 1.2 M for one stream).
const maxBatchBytes = 256 << 10

// Reader opens splits, each through the FileIO of its table that the
// caller hands it. It holds no per-split state and is safe for concurrent
// use.
type Reader struct {
	batchRows int
	enc       encode.Options
	cache     *deletes.Cache // nil: every Open reads its delete files
	space     uint64         // the Reader's namespace in cache
	// budget is the memory that decoded delete files reserve as they
	// decode (nil: none); deleteBound bounds one file's (0: the budget's).
	budget          *memory.Budget
	deleteBound     int64
	deleteBoundName string
	entries         int // entries a leaf decodes at a time; 0: batchEntries
	metrics         *collectors
}

// Option configures a Reader.
type Option func(*Reader)

// WithBatchRows sets how many rows are written between flushes; n <= 0
// keeps the default.
func WithBatchRows(n int) Option {
	return func(r *Reader) {
		if n > 0 {
			r.batchRows = n
		}
	}
}

// WithISOTimestamps writes timestamps as RFC 3339 UTC strings with Z and
// the fraction digits of the type (6 for micros, 9 for nanos) instead of
// integer epoch milliseconds.
func WithISOTimestamps(iso bool) Option {
	return func(r *Reader) { r.enc.ISOTimestamps = iso }
}

// WithBinaryAsString writes binary and fixed values as UTF-8 text (invalid
// bytes become U+FFFD) instead of standard base64.
func WithBinaryAsString(asString bool) Option {
	return func(r *Reader) { r.enc.BinaryAsString = asString }
}

// WithDeleteCache decodes delete files through c, which any number of
// Readers may share (they share its bound, never its entries: each Reader's
// FileIO decides what a path names). Without it, or with a nil c, every
// Open reads and decodes its split's delete files.
func WithDeleteCache(c *deletes.Cache) Option {
	return func(r *Reader) { r.cache = c }
}

// WithMemory has delete files reserve from b the memory they hold as they
// are decoded, and keep it while they are used or cached; bound, when > 0,
// is the most one decoded delete file may hold, and boundName what sets it
// (for the error). A file that would hold more than bound (or than the
// budget) fails Open with an error that names it and wraps
// memory.ErrTooLarge; one that does not fit while others hold the budget
// fails with memory.ErrBusy. The DeleteCache gives idle entries back when
// b asks (DeleteCache.Reclaim).
func WithMemory(b *memory.Budget, bound int64, boundName string) Option {
	return func(r *Reader) { r.budget, r.deleteBound, r.deleteBoundName = b, bound, boundName }
}

// New returns a Reader that counts the rows and delete files of its
// streams on reg (nil: not exported). Readers and a DeleteCache built on
// one registry count into the same series.
func New(reg prometheus.Registerer, opts ...Option) *Reader {
	r := &Reader{batchRows: DefaultBatchRows, metrics: newCollectors(reg)}
	for _, o := range opts {
		o(r)
	}
	if r.cache != nil {
		r.space = r.cache.Space()
	}
	return r
}

// Stats counts the rows of one stream.
type Stats struct {
	// RowsRead counts the rows of the data file that were passed, deleted
	// or not.
	RowsRead int64
	// RowsEmitted counts the rows written.
	RowsEmitted int64
	// RowsDeleted counts deleted rows by the kind of delete that removed
	// them; a row deleted by two kinds counts once, under position or
	// deletion vector before equality.
	RowsDeleted map[token.DeleteKind]int64
	// RowsFiltered counts the rows that no delete removed but the split's
	// residual filter did (see token.Split.Filter), so that RowsRead is
	// the sum of RowsEmitted, RowsFiltered and every RowsDeleted.
	RowsFiltered int64
	// InvalidUTF8 counts the values written that held invalid UTF-8, which
	// was replaced by U+FFFD: strings, and binary or fixed values written
	// as text with binaryAsString.
	InvalidUTF8 int64
	// DeleteFilesLoaded counts, by kind, the delete files that Open read
	// from storage itself: not those the Reader's DeleteCache held, nor
	// those another stream was loading when this one asked for them.
	DeleteFilesLoaded map[token.DeleteKind]int64
}

// Stream is one opened split, ready to Run once. Close it in every case.
//
// A split covers one data file or several, packed (see OpenAll): the
// stream reads them one after the other into one row stream. Open opens
// the first before anything is written; the others are opened as the
// stream reaches them, so memory holds one file's footer and delete sets
// at a time, and a failure to open one of them comes after the first
// byte, like any read error.
type Stream struct {
	r         *Reader
	fs        icebergio.IO // the table's FileIO
	parts     []token.Split
	table     token.TableSchema
	name      string // names the split in errors: its first file, and how many follow
	cur       *fileStream
	path      string // the file being read, for errors
	next      int    // the index in parts of the file after cur
	loader    *deletes.Loader
	scratch   parquetpage.Scratch // the page buffers the files' columns share
	batchRows int

	used   bool
	closed bool

	// local holds Run's running counts; publish copies them into published
	// for Stats once per batch, so counting costs no atomics per row, and
	// adds them to the metrics, which have recorded of them so far.
	local     counts
	recorded  tally
	published struct {
		read, emitted, position, dv, equality, filtered, invalid atomic.Int64
		loads                                                    [3]atomic.Int64 // by deleteKinds
	}
}

// fileStream is one data file of a stream, opened: its footer, the row
// groups read, the columns resolved, its delete sets and residual filter.
type fileStream struct {
	path      string
	fs        *storage.Watched
	file      icebergio.File
	pf        *parquet.File
	avro      *avro.File // instead of pf for an Avro data file
	leaves    []*column.Leaf
	groups    []rowGroup // the row groups the split reads
	rows      rowEncoder
	positions *deletes.Positions
	eq        []*deletes.EqualitySet
	filter    *residual // nil without a residual filter
	kb        []byte    // scratch for equality keys
}

// counts are the row counts of a stream; invalid counts the invalid UTF-8
// values of the files closed so far (the open one's encoder keeps its own).
type counts struct{ read, emitted, position, dv, equality, filtered, invalid int64 }

// Open prepares the live rows of split s in the top-level fields of t's
// schema that the split projects (all of them when s.Columns is empty),
// encoded as the split's Encoding ORed with the Reader's options. Every
// failure that can happen before the first byte happens here: the data
// file and its footer, the column resolution (by field id, or through t's
// name mapping for a file without ids), the identity partition values and
// initial defaults of the fields the file lacks, every delete file, and the
// split's residual filter (s.Filter), whose columns are read even when they
// are not emitted. fs is the FileIO of the split's table (the catalog's,
// with its credentials and location map), which opens every file with the
// path its manifest spells.
func (r *Reader) Open(ctx context.Context, fs icebergio.IO, s token.Split, t token.TableSchema) (*Stream, error) {
	return r.OpenAll(ctx, fs, []token.Split{s}, t)
}

// OpenAll prepares the rows of a split that packs several files, parts
// (each a data file, or a range of its row groups, with its delete files
// and residual filter), read in order into one stream. Every part must
// share the first's snapshot, schema, projection and encoding. Open's
// checks happen here for the first part; the others are opened when Run
// reaches them.
func (r *Reader) OpenAll(ctx context.Context, fs icebergio.IO, parts []token.Split, t token.TableSchema) (_ *Stream, err error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: a split with no data file", ErrUnsupported)
	}
	first := parts[0]
	for _, p := range parts[1:] {
		if p.MetadataLocation != first.MetadataLocation || p.SnapshotID != first.SnapshotID || p.SchemaID != first.SchemaID ||
			!slices.Equal(p.Columns, first.Columns) || p.Encoding != first.Encoding || p.Meta != first.Meta {
			return nil, fmt.Errorf("%w: data file %s is packed with %s but planned from another snapshot, schema, projection, encoding or metadata columns",
				token.ErrMalformedToken, p.Data.Path, first.Data.Path)
		}
	}
	st := &Stream{
		r: r, fs: fs, parts: parts, table: t, name: first.Data.Path, batchRows: r.batchRows,
		loader: deletes.NewLoader(deletes.Config{Cache: r.cache, Space: r.space, Budget: r.budget, Bound: r.deleteBound, BoundName: r.deleteBoundName},
			fs, parts),
	}
	if len(parts) > 1 {
		st.name = fmt.Sprintf("%s and %d more data files", first.Data.Path, len(parts)-1)
	}
	if st.cur, err = st.open(ctx, first); err != nil {
		st.loader.Release()
		return nil, err
	}
	st.next = 1
	st.publish()
	return st, nil
}

// open opens one part of the stream.
func (s *Stream) open(ctx context.Context, sp token.Split) (_ *fileStream, err error) {
	r, t := s.r, s.table
	s.path = sp.Data.Path
	ts := t.Schema
	if ts == nil {
		return nil, fmt.Errorf("open split of %s: %w: no schema", sp.Data.Path, ErrUnsupported)
	}
	fields, err := projection(ts, sp.Columns)
	if err != nil {
		return nil, fmt.Errorf("open split of %s: %w", sp.Data.Path, err)
	}
	if err := storage.CheckFormat("data file", sp.Data.Path, sp.Data.Format); err != nil {
		return nil, err
	}
	filter, filterIDs, err := parseResidual(sp.Filter, ts)
	if err != nil {
		return nil, fmt.Errorf("open split of %s: %w", sp.Data.Path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fs := storage.Watch(s.fs, sp)
	st := &fileStream{path: sp.Data.Path, fs: fs}
	var root *parquet.Column
	if storage.IsAvro(sp.Data.Format) {
		if st.avro, err = storage.OpenAvroData(fs, sp.Data); err != nil {
			return nil, err
		}
		root = st.avro.Root
	} else {
		if st.pf, st.file, err = storage.OpenParquet(fs, "data file", sp.Data.Path, sp.Data.Size); err != nil {
			return nil, err
		}
		root = st.pf.Root()
	}
	st.rows.enc = encode.Options{
		ISOTimestamps:  r.enc.ISOTimestamps || sp.Encoding.ISOTimestamps,
		BinaryAsString: r.enc.BinaryAsString || sp.Encoding.BinaryAsString,
		GeoWKB:         sp.Encoding.GeoWKB,
	}
	defer func() {
		if err != nil {
			_ = st.close()
		}
	}()
	if st.pf != nil {
		if st.groups, err = selectRowGroups(st.pf, sp.Data); err != nil {
			return nil, err
		}
	}

	res, err := schema.NewResolver(sp.Data.Path, root, t.NameMapping)
	if err != nil {
		return nil, err
	}
	res.Enc = st.rows.enc
	if len(sp.Data.Identity) > 0 {
		res.Identity = make(map[int]json.RawMessage, len(sp.Data.Identity))
		for _, iv := range sp.Data.Identity {
			res.Identity[iv.FieldID] = iv.Value
		}
	}
	for _, field := range fields {
		n, err := res.ResolveMember(field, res.Child(root, field.ID))
		if err != nil {
			return nil, fmt.Errorf("resolve columns: %w", err)
		}
		st.rows.fields = append(st.rows.fields, n)
	}
	if sp.Meta != 0 {
		if st.rows.meta, err = res.ResolveMeta(sp, t.PartitionType, root); err != nil {
			return nil, err
		}
	}

	if st.positions, err = deletes.LoadPositions(s.loader, sp); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if st.eq, err = deletes.LoadEqualitySets(s.loader, sp, t, root, res); err != nil {
		return nil, err
	}
	if filter != nil {
		if err := resolveResidual(res, filter, ts, root, filterIDs); err != nil {
			return nil, fmt.Errorf("resolve residual filter of %s: %w", sp.Data.Path, err)
		}
		st.filter = filter
	}
	st.leaves = res.Order
	if st.avro != nil {
		st.avro.DecodeInto(st.leaves)
	}
	if r.entries > 0 {
		for _, l := range st.leaves {
			l.Entries = r.entries
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return st, nil
}

// projection returns the top-level fields of ts whose ids are in
// columns, in schema order; every field when columns is empty.
func projection(ts *iceberg.Schema, columns []int) ([]iceberg.NestedField, error) {
	all := ts.Fields()
	if len(columns) == 0 {
		return all, nil
	}
	var out []iceberg.NestedField
	for _, f := range all {
		if slices.Contains(columns, f.ID) {
			out = append(out, f)
		}
	}
	for _, id := range columns {
		if !slices.ContainsFunc(all, func(f iceberg.NestedField) bool { return f.ID == id }) {
			return nil, fmt.Errorf("%w: projected field id %d is not a top-level field of schema %d",
				ErrSchemaMismatch, id, ts.ID)
		}
	}
	return out, nil
}

// batch is the output side of Run: the rows encoded since the last write,
// and the writer they go to.
type batch struct {
	s          *Stream
	ctx        context.Context
	out        *batchWriter
	buf        []byte
	rows       int // rows in buf
	sinceCheck int // rows passed since ctx was last checked
}

// emit hands the batch to the writer, publishes the counts and checks ctx.
func (b *batch) emit() error {
	if len(b.buf) > 0 {
		var err error
		if b.buf, err = b.out.write(b.buf); err != nil {
			return err
		}
	}
	b.rows, b.sinceCheck = 0, 0
	b.s.publish()
	return b.ctx.Err()
}

// Run writes the surviving rows of the split's files, one after the other,
// to w as NDJSON, one object per line in file order, calling flush (when
// non-nil) after each batch and checking ctx between batches. Batches run
// on across the files of a packed split. Run can be called once. An error
// returned after bytes were written leaves w with a partial stream: the
// caller must abort it rather than end it cleanly.
func (s *Stream) Run(ctx context.Context, w io.Writer, flush func() error) (err error) {
	if s.used || s.closed {
		return ErrStreamUsed
	}
	s.used = true
	// A panic here is a bug of the reader's own (third-party decoding is
	// guarded where it runs): it reaches the handler, which logs its
	// stack and aborts the stream.
	defer s.publish()

	// Batches are written by a goroutine of their own, so that decoding
	// the next batch overlaps writing this one (into a socket the client
	// drains at its own pace); two buffers take turns.
	out := startBatchWriter(w, flush, s.name)
	defer func() { err = errors.Join(err, out.close()) }()
	b := &batch{s: s, ctx: ctx, out: out, buf: make([]byte, 0, 64<<10)}
	for {
		if err := s.cur.run(b); err != nil {
			return err
		}
		if err := s.closeCurrent(); err != nil {
			return err
		}
		if s.next == len(s.parts) {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.cur, err = s.open(ctx, s.parts[s.next]); err != nil {
			return err
		}
		s.next++
	}
	return b.emit()
}

// closeCurrent closes the file being read and keeps its count of invalid
// UTF-8 values.
func (s *Stream) closeCurrent() error {
	f := s.cur
	if f == nil {
		return nil
	}
	s.cur = nil
	s.local.invalid += f.rows.scratch.Invalid
	return f.close()
}

// run writes the surviving rows of one file's row groups into b.
func (f *fileStream) run(b *batch) error {
	s := b.s
	dels := f.positions.Walk()
	defer dels.Stop()
	if f.avro != nil {
		return f.runAvro(b, dels)
	}
	meta := f.pf.Metadata().RowGroups
	for _, g := range f.groups {
		// base is file-absolute: the rows of every row group before this
		// one, also those of a range the split does not read.
		rg, base := &meta[g.index], g.base
		n := rg.NumRows
		if f.groupDeleted(s, base, n) {
			continue
		}
		for _, l := range f.leaves {
			l.Start(f.file, &rg.Columns[l.Index].MetaData, &s.scratch)
		}
		for i := range n {
			for _, l := range f.leaves {
				if l.MaxRep == 0 && l.Next < l.Batch.N {
					// The common case, inlined: a flat column inside a batch.
					b := &l.Batch
					l.Cur, l.Pos, l.RowEnd, l.VPos = b, l.Next, l.Next+1, l.NextV
					if b.Def == nil || int(b.Def[l.Next]) == l.MaxDef {
						l.NextV++
					}
					l.Next++
					continue
				}
				if err := l.Advance(); err != nil {
					return fmt.Errorf("read data file %s: %w", f.path, f.fs.Classify(err))
				}
			}
			if err := f.row(b, dels, base+i); err != nil {
				return err
			}
		}
		for _, l := range f.leaves {
			if err := l.End(); err != nil {
				return fmt.Errorf("read data file %s: %w", f.path, f.fs.Classify(err))
			}
		}
	}
	return nil
}

// runAvro writes the surviving rows of an Avro data file into b, a chunk
// of records at a time; positions count records from the file's first.
func (f *fileStream) runAvro(b *batch, dels *deletes.PositionWalk) error {
	var base int64
	for {
		n, err := f.avro.Fill()
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

// row writes the row at position pos of the file, whose entries the
// leaves are at, into b unless a delete or the residual filter removes it.
func (f *fileStream) row(b *batch, dels *deletes.PositionWalk, pos int64) error {
	s := b.s
	s.local.read++
	if b.sinceCheck++; b.sinceCheck >= s.batchRows {
		// Many deleted rows in a row: still notice a cancel.
		b.sinceCheck = 0
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	if p := uint64(pos); p >= dels.Next {
		if dels.Deleted(p) {
			s.countPositional(f.positions.KindOf(p))
			return nil
		}
	}
	deleted := false
	for _, e := range f.eq {
		if f.kb, deleted = e.Contains(f.kb); deleted {
			break
		}
	}
	if deleted {
		s.local.equality++
		return nil
	}
	if f.filter != nil {
		ok, err := f.filter.match()
		if err != nil {
			return fmt.Errorf("apply residual filter to row %d of data file %s: %w", pos, f.path, err)
		}
		if !ok {
			s.local.filtered++
			return nil
		}
	}
	f.rows.pos = pos
	b.buf = f.rows.appendRow(b.buf)
	if f.rows.scratch.Err != nil {
		return fmt.Errorf("encode row %d of data file %s: %w", pos, f.path, f.rows.scratch.Err)
	}
	s.local.emitted++
	if b.rows++; b.rows >= s.batchRows || len(b.buf) >= maxBatchBytes {
		return b.emit()
	}
	return nil
}

// groupDeleted reports whether every row of the row group [base, base+n)
// is a deleted position, and if so counts them without decoding a page.
func (f *fileStream) groupDeleted(s *Stream, base, n int64) bool {
	d := f.positions
	if d.All == nil || d.Count < n {
		return false
	}
	for p := base; p < base+n; p++ {
		if !d.All.Contains(uint64(p)) {
			return false
		}
	}
	for p := base; p < base+n; p++ {
		s.local.read++
		s.countPositional(d.KindOf(uint64(p)))
	}
	return true
}

func (s *Stream) countPositional(k token.DeleteKind) {
	if k == token.DeletePosition {
		s.local.position++
	} else {
		s.local.dv++
	}
}

// publish makes the running counts visible to Stats.
func (s *Stream) publish() {
	p := &s.published
	p.read.Store(s.local.read)
	p.emitted.Store(s.local.emitted)
	p.position.Store(s.local.position)
	p.dv.Store(s.local.dv)
	p.equality.Store(s.local.equality)
	p.filtered.Store(s.local.filtered)
	invalid := s.local.invalid
	if s.cur != nil {
		invalid += s.cur.rows.scratch.Invalid
	}
	p.invalid.Store(invalid)
	now := tally{read: s.local.read, emitted: s.local.emitted, filtered: s.local.filtered, invalid: invalid,
		deleted: [3]int64{s.local.position, s.local.equality, s.local.dv}}
	for i, k := range deleteKinds {
		p.loads[i].Store(s.loader.Loaded[k])
		now.loads[i] = s.loader.Loaded[k]
	}
	if s.used {
		// The metrics follow the stream batch by batch once it runs: a
		// split opened and never run (a HEAD) is not a stream served.
		s.r.metrics.record(now, s.recorded)
		s.recorded = now
	}
}

// Stats returns the counts so far; it is safe to call while Run runs (the
// counts move once per batch), and is exact once Run has returned.
// DeleteFilesLoaded counts the delete files loaded by Open and, for a
// packed split, by Run as it opened the files after the first.
func (s *Stream) Stats() Stats {
	p := &s.published
	loaded := map[token.DeleteKind]int64{}
	for i, k := range deleteKinds {
		if n := p.loads[i].Load(); n > 0 {
			loaded[k] = n
		}
	}
	return Stats{
		RowsRead:    p.read.Load(),
		RowsEmitted: p.emitted.Load(),
		RowsDeleted: map[token.DeleteKind]int64{
			token.DeletePosition:       p.position.Load(),
			token.DeleteDeletionVector: p.dv.Load(),
			token.DeleteEquality:       p.equality.Load(),
		},
		RowsFiltered:      p.filtered.Load(),
		InvalidUTF8:       p.invalid.Load(),
		DeleteFilesLoaded: loaded,
	}
}

// Close releases the stream's pages and closes the file being read. It is
// safe to call more than once and after any error.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	defer s.loader.Release()
	return s.closeCurrent()
}

// close releases the file's pages and closes it.
func (f *fileStream) close() error {
	var errs []error
	for _, l := range f.leaves {
		l.Stop()
	}
	if f.file != nil {
		if err := f.file.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close data file %s: %w", f.path, err))
		}
	}
	if f.avro != nil {
		if err := f.avro.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close data file %s: %w", f.path, err))
		}
	}
	return errors.Join(errs...)
}
