package reader_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// The corruptions FuzzCorruptParquet makes (op modulo opCount).
const (
	// opTruncate cuts the file at off; the split still gives the planned
	// size, as a file truncated after planning would.
	opTruncate = iota
	// opTruncateSized cuts the file at off and gives the cut size in the
	// split too, so that only the file's own structure can tell.
	opTruncateSized
	// opFlipBit flips bit arg%8 of the byte at off.
	opFlipBit
	// opSetByte sets the byte at off to arg.
	opSetByte
	// opPageSize changes a size or count field of the header of page
	// off%pages (arg%4 picks compressed_page_size, uncompressed_page_size,
	// the data or dictionary page's num_values, or the crc) by flipping
	// bit arg/4%6 of its value, re-encoded in place.
	opPageSize
	opCount
)

// FuzzCorruptParquet corrupts one file of a real split (a data file or one
// of its delete files, from the engine-written fixtures in testdata/fixtures
// and the tables internal/tablegen writes) and reads the split. The read
// must end in an error the handlers map to a status (ErrCorruptFile and the
// reader's other sentinels) or in exactly the rows of the intact file —
// never a panic, a hang, or other rows served as if they were the file's.
//
// Parquet has one checksum, an optional CRC over each page's data that not
// every engine writes, and none over page headers or the footer, so some
// changes are invisible to any reader: a byte inside the payload of a page
// without a CRC, and the header and footer fields that sameHeader and
// sameFooter list. For those alone the output need only be well-formed rows
// of the table's schema. Every read, whatever the damage, must also stay
// within readAllocBound of allocation: no size or count in a damaged page
// may make the reader allocate for it.
//
//	go test ./reader -run '^$' -fuzz '^FuzzCorruptParquet$' -fuzztime 60s
func FuzzCorruptParquet(f *testing.F) {
	targets := corruptTargets(f)
	// The seeds are each table's first file with each corruption: the
	// fuzzer reaches the other files by mutating which, and
	// TestCorruptParquetEveryFile runs every file's seeds without the
	// fuzzer's per-input cost (thousands of seeds would not get through
	// the fuzzer's baseline in the time .ci/run gives it).
	seeded := map[string]bool{}
	for i, tg := range targets {
		if table := tg.tableName(); !seeded[table] {
			seeded[table] = true
			for _, s := range corruptSeeds(tg, i) {
				f.Add(uint16(i), s.op, s.off, s.arg)
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, op uint8, off, arg uint32) {
		checkCorruption(t, targets[int(which)%len(targets)], op, off, arg)
	})
}

// TestCorruptParquetEveryFile makes FuzzCorruptParquet's seed corruptions
// to every file of every target split.
func TestCorruptParquetEveryFile(t *testing.T) {
	targets := corruptTargets(t)
	for i, tg := range targets {
		for _, s := range corruptSeeds(tg, i) {
			checkCorruption(t, tg, s.op, s.off, s.arg)
		}
	}
}

// corruptSeed is one corruption of a target, as FuzzCorruptParquet's
// arguments.
type corruptSeed struct {
	op       uint8
	off, arg uint32
}

// corruptSeeds gives each corruption at a spot that matters for the i-th
// target: the footer length, the middle, a page header.
func corruptSeeds(tg *corruptTarget, i int) []corruptSeed {
	size := uint32(len(tg.intact))
	return []corruptSeed{
		{opTruncate, size - 4, 0},
		{opFlipBit, size / 2, uint32(i)},
		{opPageSize, uint32(i), uint32(i)},
	}
}

// checkCorruption reads tg's split with its file corrupted by op and fails
// t unless the read ends in a clear error or in the intact rows.
func checkCorruption(t *testing.T, tg *corruptTarget, op uint8, off, arg uint32) {
	t.Helper()
	m := tg.corrupt(op%opCount, off, arg)
	out, err := tg.read(t, m)
	switch {
	case err != nil:
		if !clearError(err) {
			t.Fatalf("%s, %s: an error without a reader sentinel (the handlers would answer 500): %v", tg.name, m.what, err)
		}
	case bytes.Equal(out, tg.want):
	case m.unchecked:
		checkNDJSON(t, out, tg.table)
	default:
		t.Fatalf("%s, %s: %d bytes of rows served, not the intact file's %d:\n%s",
			tg.name, m.what, len(out), len(tg.want), firstDiff(out, tg.want))
	}
}

// clearError reports whether err carries one of the reader's sentinels (or
// the missing-file cause), which the handlers map to a status.
func clearError(err error) bool {
	for _, s := range []error{reader.ErrCorruptFile, reader.ErrSchemaMismatch, reader.ErrNoFieldIDs, reader.ErrUnsupported, fs.ErrNotExist} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// corruptTarget is one file of one split to corrupt.
type corruptTarget struct {
	name   string
	split  token.Split
	table  token.TableSchema
	fs     icebergio.IO
	path   string // the file to corrupt, as the split spells it
	intact []byte
	want   []byte // the split's rows with the file intact
	pages  []pageSpan
	files  int64 // the bytes of the split's files
}

// allocBound is the most a read of the target's split may allocate,
// damaged or not: readAllocBound for the split's files and its rows.
func (tg *corruptTarget) allocBound() uint64 {
	return readAllocBound(tg.files, int64(len(tg.want)))
}

// readAllocBound is the allocation FuzzCorruptParquet allows one read of
// a split whose files hold files bytes and whose intact rows take out
// bytes: 64 MiB, plus 16 times the files and the rows. parquetpage sizes
// nothing from a page before holding it to the file's bytes, so that even
// a damaged page asks for little beyond what its bytes decompress to.
func readAllocBound(files, out int64) uint64 {
	return 64<<20 + 16*uint64(files+out)
}

// pageSpan locates one page of a Parquet file.
type pageSpan struct {
	header  int64 // offset of the page header
	payload int64 // offset of the page data, after the header
	end     int64
	crc     bool
	// repeated is set for a column under a repeated field (list, map).
	repeated bool
}

// tableName is the name of the table the target's split belongs to.
func (tg *corruptTarget) tableName() string {
	table, _, _ := strings.Cut(tg.name, ":")
	return table
}

// mutation is one corrupted copy of a target's file.
type mutation struct {
	data []byte
	// size is the file size the split gives.
	size int64
	what string
	// unchecked is set when only bytes that no checksum covers changed.
	unchecked bool
}

func (tg *corruptTarget) corrupt(op uint8, off, arg uint32) mutation {
	data := bytes.Clone(tg.intact)
	n := int64(len(data))
	at := int64(off) % n
	m := mutation{size: n}
	switch op {
	case opTruncate, opTruncateSized:
		m.data = data[:at]
		m.what = fmt.Sprintf("truncated to %d of %d bytes", at, n)
		if op == opTruncateSized {
			m.size = at
			m.what += ", sized so in the split"
		}
		return m
	case opFlipBit:
		data[at] ^= 1 << (arg % 8)
		m.what = fmt.Sprintf("bit %d of byte %d flipped", arg%8, at)
		m.unchecked = tg.unverifiable(at, data)
	case opSetByte:
		data[at] = byte(arg)
		m.what = fmt.Sprintf("byte %d set to %#x", at, byte(arg))
		m.unchecked = tg.unverifiable(at, data)
	case opPageSize:
		if len(tg.pages) == 0 {
			m.what = "unchanged (no pages)"
			break
		}
		p := tg.pages[int(off)%len(tg.pages)]
		m.what = changePageHeader(data, p, arg)
		m.unchecked = sameHeader(tg.intact[p.header:p.payload], data[p.header:p.payload], p.repeated)
	}
	m.data = data
	return m
}

// unverifiable reports whether the change at off, which made data, is one
// that no reader can notice: inside the payload of a page without a CRC, or
// only in page header or footer fields that nothing else in the file or the
// split confirms.
func (tg *corruptTarget) unverifiable(off int64, data []byte) bool {
	for _, p := range tg.pages {
		switch {
		case off >= p.payload && off < p.end:
			return !p.crc
		case off >= p.header && off < p.payload:
			return sameHeader(tg.intact[p.header:p.payload], data[p.header:p.payload], p.repeated)
		}
	}
	n := int64(len(data))
	if !bytes.HasPrefix(data, []byte("PAR1")) || n < 12 {
		return false
	}
	footerLen := int64(binary.LittleEndian.Uint32(tg.intact[n-8:]))
	start := n - 8 - footerLen
	if off < start || off >= n-8 || start < 4 {
		return false
	}
	var intact, changed format.FileMetaData
	proto := &thrift.CompactProtocol{}
	if thrift.Unmarshal(proto, tg.intact[start:n-8], &intact) != nil || thrift.Unmarshal(proto, data[start:n-8], &changed) != nil {
		return false
	}
	return sameFooter(&intact, &changed)
}

// sameFooter reports whether two footers differ only in what clearFooter
// clears; a change to any field id or name makes them the same, since the
// file's columns then legitimately read as other fields, or as none,
// whatever else changed with it.
func sameFooter(a, b *format.FileMetaData) bool {
	if len(a.Schema) == len(b.Schema) {
		for i := range a.Schema {
			if a.Schema[i].FieldID != b.Schema[i].FieldID || a.Schema[i].Name != b.Schema[i].Name {
				return true
			}
		}
	}
	clearFooter(a)
	clearFooter(b)
	return reflect.DeepEqual(a, b)
}

// clearFooter clears the footer fields whose change no reader can notice,
// so that two footers that differ only there compare equal:
//   - a column's field id: Iceberg resolves columns by id, and a file
//     column whose id changed reads as another field, or as none (null, as
//     for a field added after the file was written, which Iceberg's Java
//     reader does alike);
//   - a column's name: only a name mapping reads it, for files without ids;
//   - a column's decimal precision: values decode the same whatever it says
//     (the scale, which they do depend on, is held to the table's);
//   - required against optional (or no repetition type, which parquet-go
//     reads as required): both are valid for any Iceberg field (a field
//     made optional keeps its required columns in older files), and a page
//     read the other way decodes its levels as values or the reverse, which
//     parquet-go does not notice (it reports no unread page bytes);
//   - the unit of a timestamp or time (and whether it is adjusted to UTC):
//     every unit is valid on the same physical type, and the values scale
//     with it;
//   - the length of a fixed-length decimal: any length that holds the
//     precision is valid (writers differ: most use the fewest bytes, DuckDB
//     16 for every wide decimal), and the values are cut differently;
//   - the annotation of a shredded variant's typed_value (and a decimal's
//     scale there): it picks the variant type the column stands for (a
//     BYTE_ARRAY is a string with STRING, binary without), and each is a
//     valid shredding;
//   - a scale on a column that is not a decimal, which readers ignore.
func clearFooter(md *format.FileMetaData) {
	for i := range md.Schema {
		se := &md.Schema[i]
		_, dec := se.LogicalType.Value.(*format.DecimalType)
		dec = dec || (se.ConvertedType.Valid && se.ConvertedType.V == deprecated.Decimal)
		if se.Name == "typed_value" {
			se.LogicalType = format.LogicalType{}
			se.ConvertedType.V, se.ConvertedType.Valid = 0, false
			se.Scale.V, se.Scale.Valid = 0, false
		}
		if dec && se.Type.V == format.FixedLenByteArray {
			se.TypeLength.V = 0
		}
		if !dec {
			se.Scale.V, se.Scale.Valid = 0, false
		}
		se.FieldID, se.Name = 0, ""
		se.Precision.V, se.Precision.Valid = 0, false
		if rt := &se.RepetitionType; i > 0 && (!rt.Valid || rt.V == format.Required) {
			rt.V, rt.Valid = format.Optional, true
		}
		switch lt := se.LogicalType.Value.(type) {
		case *format.TimestampType:
			*lt = format.TimestampType{}
		case *format.TimeType:
			*lt = format.TimeType{}
		}
		switch ct := &se.ConvertedType.V; *ct {
		case deprecated.TimestampMicros:
			*ct = deprecated.TimestampMillis
		case deprecated.TimeMicros:
			*ct = deprecated.TimeMillis
		}
	}
}

// sameHeader reports whether two encoded page headers differ only in the
// fields whose change no reader can notice (the CRC covers the page data,
// not its header):
//   - the encodings of the values and of the levels: a page decoded with
//     another encoding than it was written with can still decode, to other
//     values or nulls;
//   - how a v2 page splits into levels and values (the levels' byte
//     lengths, whether the values are compressed) and its null count: read
//     with another split, levels decode as values or the reverse;
//   - in a column under a repeated field, the value counts: values lost or
//     gained inside a list change the list, not the number of rows, which is
//     all the row group pins (in a flat column one value is one row, and a
//     wrong count shifts the column against the others: that must fail).
func sameHeader(a, b []byte, repeated bool) bool {
	var ha, hb format.PageHeader
	proto := &thrift.CompactProtocol{}
	if thrift.Unmarshal(proto, a, &ha) != nil || thrift.Unmarshal(proto, b, &hb) != nil {
		return false
	}
	clearHeader(&ha, repeated)
	clearHeader(&hb, repeated)
	return reflect.DeepEqual(ha, hb)
}

func clearHeader(h *format.PageHeader, repeated bool) {
	d, v2, dict := &h.DataPageHeader.V, &h.DataPageHeaderV2.V, &h.DictionaryPageHeader.V
	d.Encoding, d.DefinitionLevelEncoding, d.RepetitionLevelEncoding = 0, 0, 0
	v2.Encoding, dict.Encoding = 0, 0
	v2.RepetitionLevelsByteLength, v2.DefinitionLevelsByteLength, v2.NumNulls = 0, 0, 0
	v2.IsCompressed.V, v2.IsCompressed.Valid = false, false
	if repeated {
		d.NumValues, v2.NumValues, dict.NumValues = 0, 0, 0
	}
}

// changePageHeader flips a low bit of a size or count field of the page
// header at p and writes the header back in place when it re-encodes to the
// same length (a flip below bit 6 never changes a varint's length).
func changePageHeader(data []byte, p pageSpan, arg uint32) string {
	var h format.PageHeader
	proto := &thrift.CompactProtocol{}
	if err := thrift.Unmarshal(proto, data[p.header:p.payload], &h); err != nil {
		return "unchanged (page header does not decode)"
	}
	bit := int32(1) << (arg / 4 % 6)
	field := ""
	switch arg % 4 {
	case 0:
		h.CompressedPageSize ^= bit
		field = "compressed_page_size"
	case 1:
		h.UncompressedPageSize ^= bit
		field = "uncompressed_page_size"
	case 2:
		switch {
		case h.DataPageHeader.Valid:
			h.DataPageHeader.V.NumValues ^= bit
		case h.DataPageHeaderV2.Valid:
			h.DataPageHeaderV2.V.NumValues ^= bit
		case h.DictionaryPageHeader.Valid:
			h.DictionaryPageHeader.V.NumValues ^= bit
		}
		field = "num_values"
	case 3:
		if h.CRC == 0 {
			return "unchanged (page has no crc)"
		}
		h.CRC ^= bit
		field = "crc"
	}
	b, err := thrift.Marshal(proto, &h)
	if err != nil || int64(len(b)) != p.payload-p.header {
		return "unchanged (page header re-encodes to another length)"
	}
	copy(data[p.header:], b)
	return fmt.Sprintf("%s of the page at %d xor %d", field, p.header, bit)
}

// read reads the split with the corrupted file in place of the target's,
// failing the test when the read does not end in time.
func (tg *corruptTarget) read(t *testing.T, m mutation) ([]byte, error) {
	sp := tg.split
	sp.Deletes = slices.Clone(sp.Deletes)
	if sp.Data.Path == tg.path {
		sp.Data.Size = m.size
	}
	for i := range sp.Deletes {
		if sp.Deletes[i].Path == tg.path {
			sp.Deletes[i].Size = m.size
		}
	}
	fsys := &overlayIO{IO: tg.fs, path: tg.path, data: m.data}
	return readWithin(t, fsys, sp, tg.table, tg.allocBound(), tg.name+", "+m.what)
}

// readWithin reads sp through fsys, failing t (naming what was read) on a
// panic, a read past its deadline or one that ignores it, or an
// allocation over bound.
func readWithin(t *testing.T, fsys icebergio.IO, sp token.Split, ts token.TableSchema, bound uint64, what string) ([]byte, error) {
	out, allocated, err := readMeasured(t, fsys, sp, ts, what)
	if allocated > bound {
		t.Fatalf("%s: the read allocated %d MiB, more than the %d MiB bound for its files", what, allocated>>20, bound>>20)
	}
	return out, err
}

// readMeasured reads sp through fsys and gives what the read allocated,
// failing t (naming what was read) on a panic, or a read past its
// deadline or one that ignores it.
func readMeasured(t *testing.T, fsys icebergio.IO, sp token.Split, ts token.TableSchema, what string) ([]byte, uint64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		out       []byte
		err       error
		panic     string
		allocated uint64
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: fmt.Sprintf("%v\n%s", p, debug.Stack())}
			}
		}()
		var out bytes.Buffer
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := readSplit(ctx, newReader(fsys), sp, ts, &out)
		runtime.ReadMemStats(&after)
		done <- result{out: out.Bytes(), err: err, allocated: after.TotalAlloc - before.TotalAlloc}
	}()
	select {
	case r := <-done:
		if r.panic != "" {
			t.Fatalf("%s: the reader panicked: %s", what, r.panic)
		}
		if errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("%s: the read ran past its deadline", what)
		}
		return r.out, r.allocated, r.err
	case <-time.After(time.Minute):
		t.Fatalf("%s: the read hangs: it ignored its context for a minute", what)
		return nil, 0, nil
	}
}

// readSplit opens and runs a split into w.
func readSplit(ctx context.Context, r fsReader, sp token.Split, ts token.TableSchema, w *bytes.Buffer) (err error) {
	st, err := r.Open(ctx, sp, ts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	return st.Run(ctx, w, nil)
}

// checkNDJSON holds out to the row stream's framing (one JSON object per
// line, every line ended) and each object to the schema's top-level names,
// in order.
func checkNDJSON(t *testing.T, out []byte, ts token.TableSchema) {
	t.Helper()
	var names []string
	for _, f := range ts.Schema.Fields() {
		names = append(names, f.Name)
	}
	for line := range bytes.Lines(out) {
		if !bytes.HasSuffix(line, []byte("\n")) || !json.Valid(line) || line[0] != '{' {
			t.Fatalf("bad NDJSON line %q", line)
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		var keys []string
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(keys, names) {
			t.Fatalf("row %q has the keys %q, want %q", line, keys, names)
		}
	}
}

// firstDiff shows where two outputs part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d\n got  %q\n want %q", i, got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
}

// corruptTargets collects every Parquet and puffin file of the current
// snapshot's splits of the fixture tables and of tables written with
// internal/tablegen, each with the rows its split reads as intact.
func corruptTargets(f testing.TB) []*corruptTarget {
	f.Helper()
	if builtTargets != nil {
		return builtTargets
	}
	ctx := context.Background()
	var targets []*corruptTarget
	add := func(name string, tbl *table.Table, fsys icebergio.IO) {
		snap := tbl.CurrentSnapshot()
		schema := tbl.Schema()
		if snap.SchemaID != nil {
			schema = tbl.Schemas()[*snap.SchemaID]
		}
		ts := token.TableSchema{Schema: schema, NameMapping: tbl.Metadata().NameMapping()}
		tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			f.Fatalf("plan %s: %v", name, err)
		}
		for _, task := range tasks {
			sp, err := splits.FromTask(tbl.Metadata(), tbl.MetadataLocation(), snap.SnapshotID, schema.ID, task)
			if err != nil {
				f.Fatal(err)
			}
			var want bytes.Buffer
			if err := readSplit(ctx, newReader(fsys), sp, ts, &want); err != nil {
				f.Fatalf("read %s intact: %v", sp.Data.Path, err)
			}
			files := []string{sp.Data.Path}
			for _, d := range sp.Deletes {
				if !slices.Contains(files, d.Path) {
					files = append(files, d.Path)
				}
			}
			total := sp.Data.Size
			for _, d := range sp.Deletes {
				total += d.Size
			}
			for _, p := range files {
				intact, err := readAllIO(fsys, p)
				if err != nil {
					f.Fatal(err)
				}
				targets = append(targets, &corruptTarget{
					name:  name + ":" + filepath.Base(sp.Data.Path) + ":" + filepath.Base(p),
					split: sp, table: ts, fs: fsys, path: p,
					intact: intact, want: want.Bytes(), pages: parquetPages(intact), files: total,
				})
			}
		}
	}

	// The engine-written fixtures.
	dirs, err := filepath.Glob(filepath.Join(fixturesDir, "*", "expected.json"))
	if err != nil || len(dirs) == 0 {
		f.Fatalf("no fixtures under %s: %v", fixturesDir, err)
	}
	sort.Strings(dirs)
	for _, exp := range dirs {
		dir, err := filepath.Abs(filepath.Dir(exp))
		if err != nil {
			f.Fatal(err)
		}
		var fx fixture
		raw, err := os.ReadFile(exp)
		if err != nil {
			f.Fatal(err)
		}
		if err := json.Unmarshal(raw, &fx); err != nil {
			f.Fatal(err)
		}
		var maps []catalog.Mapping
		for _, p := range fx.LocationPrefixes {
			maps = append(maps, catalog.Mapping{From: p, To: dir})
		}
		fsys := catalog.NewFS(nil, maps)
		tbl, err := table.NewFromLocation(ctx, table.Identifier{"fixtures", filepath.Base(dir)},
			filepath.Join(dir, fx.Metadata), func(context.Context) (icebergio.IO, error) { return fsys, nil }, nil)
		if err != nil {
			f.Fatalf("load fixture %s: %v", dir, err)
		}
		add(filepath.Base(dir), tbl, fsys)
	}

	// Tables written with iceberg-go's writers (arrow-go: no page CRCs)
	// and parquet-go (page CRCs), with every kind of delete file.
	wh, err := os.MkdirTemp(testRoot, "corrupt-")
	if err != nil {
		f.Fatal(err)
	}
	cat, err := hadoop.NewCatalog("sidecar", wh, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer cat.Close()
	fsys := catalog.NewFS(nil, nil)
	bench, err := tablegen.Bench(ctx, cat, table.Identifier{"gen", "bench"}, 3000, 1, 0.05, 0.02)
	if err != nil {
		f.Fatal(err)
	}
	add("bench", bench, fsys)
	for name, build := range map[string]func(context.Context, *hadoop.Catalog, table.Identifier) (*tablegen.Built, error){
		"alltypes": func(ctx context.Context, c *hadoop.Catalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.AllTypes(ctx, c, id)
		},
		"partitioned": func(ctx context.Context, c *hadoop.Catalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.IdentityPartitioned(ctx, c, id)
		},
		"migrated": func(ctx context.Context, c *hadoop.Catalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.Migrated(ctx, c, id, true)
		},
		"v3types": func(ctx context.Context, c *hadoop.Catalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.V3Types(ctx, c, id)
		},
	} {
		b, err := build(ctx, cat, table.Identifier{"gen", name})
		if err != nil {
			f.Fatalf("write %s: %v", name, err)
		}
		add(name, b.Table, fsys)
	}
	for _, sc := range tablegen.Scenarios() {
		tbl, err := sc.Build(ctx, cat, table.Identifier{"gen", sc.Name})
		if err != nil {
			f.Fatalf("write %s: %v", sc.Name, err)
		}
		add(sc.Name, tbl, fsys)
	}
	// A fixed order, so that a saved input names the same target on
	// every run (the tablegen tables live under a new temp dir each time).
	sort.SliceStable(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	builtTargets = targets
	return targets
}

// builtTargets are corruptTargets' targets once built: the test and the
// fuzz target's seed run corrupt copies of the same files, so the tables
// are written once per run of the package, under testRoot.
var builtTargets []*corruptTarget

// readAllIO reads a whole file through fsys.
func readAllIO(fsys icebergio.IO, path string) ([]byte, error) {
	fl, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer fl.Close()
	st, err := fl.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	b := make([]byte, st.Size())
	if _, err := fl.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// parquetPages walks the pages of every column chunk of a Parquet file; it
// returns nil for anything else (a puffin file).
func parquetPages(data []byte) []pageSpan {
	if !bytes.HasPrefix(data, []byte("PAR1")) {
		return nil
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil
	}
	proto := &thrift.CompactProtocol{}
	var repeated []bool // by leaf column index
	var walk func(c *parquet.Column, rep bool)
	walk = func(c *parquet.Column, rep bool) {
		rep = rep || c.Repeated()
		if c.Leaf() {
			repeated = append(repeated, rep)
			return
		}
		for _, child := range c.Columns() {
			walk(child, rep)
		}
	}
	walk(pf.Root(), false)
	var pages []pageSpan
	for _, rg := range pf.Metadata().RowGroups {
		for j, cc := range rg.Columns {
			md := cc.MetaData
			pos := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < pos {
				pos = md.DictionaryPageOffset
			}
			end := pos + md.TotalCompressedSize
			for pos < end && pos < int64(len(data)) {
				br := bytes.NewReader(data[pos:])
				var h format.PageHeader
				if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
					break
				}
				payload := int64(len(data)) - int64(br.Len())
				next := payload + int64(h.CompressedPageSize)
				pages = append(pages, pageSpan{header: pos, payload: payload, end: next, crc: h.CRC != 0,
					repeated: j < len(repeated) && repeated[j]})
				pos = next
			}
		}
	}
	return pages
}

// overlayIO serves one path from memory and every other through IO.
type overlayIO struct {
	icebergio.IO
	path string
	data []byte
}

func (o *overlayIO) Open(name string) (icebergio.File, error) {
	if name != o.path {
		return o.IO.Open(name)
	}
	return &memFile{Reader: bytes.NewReader(o.data), name: name}, nil
}

// memFile is an icebergio.File over bytes.
type memFile struct {
	*bytes.Reader
	name string
}

func (m *memFile) Stat() (fs.FileInfo, error) { return memInfo{m}, nil }
func (m *memFile) Close() error               { return nil }

type memInfo struct{ f *memFile }

func (i memInfo) Name() string       { return filepath.Base(i.f.name) }
func (i memInfo) Size() int64        { return i.f.Size() }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
