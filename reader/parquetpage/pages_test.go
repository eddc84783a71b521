package parquetpage_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"
	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	pbrotli "github.com/parquet-go/parquet-go/compress/brotli"
	pgzip "github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	plz4 "github.com/pierrec/lz4/v4"

	"github.com/druidiceberg/sidecar/reader/codec"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
)

// fixturesDir holds the engine-written tables of the repository's
// testdata/fixtures.
const fixturesDir = "../../testdata/fixtures"

// TestPagesAgainstParquetGo decodes every page of every column chunk of
// every Parquet file of the fixtures (written by Spark, Trino, Flink, Hive,
// Impala, DuckDB and others) and of generated files (every encoding of
// every physical type, required, optional, repeated and in lists of one and
// two levels, data pages v1 and v2, every codec) with parquetpage and with
// parquet-go, and compares them entry by entry: levels, nulls and values.
func TestPagesAgainstParquetGo(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join(fixturesDir, "*", "*", "*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatalf("no Parquet files under %s", fixturesDir)
	}
	// The fixtures and each generated file are subtests of their own, run
	// in parallel (the shared codecs serialize their writers); the fixtures
	// subtest alone counts into encodings, the generated ones add to
	// generated under mu, and both are read once all have run.
	var mu sync.Mutex
	encodings, generated := map[string]int{}, map[string]int{}
	t.Run("all", func(t *testing.T) {
		t.Run("fixtures", func(t *testing.T) {
			t.Parallel()
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := comparePages(data, data, encodings); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
		for i, g := range pageGens() {
			g.seed = uint64(i)
			t.Run(g.String(), func(t *testing.T) {
				t.Parallel()
				data, oracle, err := g.files()
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				counted := map[string]int{}
				if err := comparePages(data, oracle, counted); err != nil {
					t.Error(err)
				}
				if v := "large v" + strconv.Itoa(1+boolInt(g.v2)) + " " + g.codec.CompressionCodec().String(); g.rows == largePageRows && counted[v] == 0 {
					t.Errorf("no page larger than the read-ahead (%s)", v)
				}
				mu.Lock()
				for k, n := range counted {
					generated[k] += n
				}
				mu.Unlock()
			})
		}
	})
	t.Logf("%d fixture files; pages by encoding: %v", len(files), encodings)
	t.Logf("generated files; pages by encoding: %v", generated)
	for _, want := range []string{"BOOLEAN/PLAIN", "BOOLEAN/RLE", "INT32/DELTA_BINARY_PACKED", "INT64/DELTA_BINARY_PACKED",
		"BYTE_ARRAY/DELTA_LENGTH_BYTE_ARRAY", "BYTE_ARRAY/DELTA_BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY/DELTA_BYTE_ARRAY",
		"DOUBLE/BYTE_STREAM_SPLIT", "FLOAT/BYTE_STREAM_SPLIT", "INT32/BYTE_STREAM_SPLIT", "INT64/BYTE_STREAM_SPLIT",
		"FIXED_LEN_BYTE_ARRAY/BYTE_STREAM_SPLIT", "INT96/PLAIN", "INT96/RLE_DICTIONARY", "BYTE_ARRAY/RLE_DICTIONARY",
		"v1", "v2", "large v1 UNCOMPRESSED", "large v2 UNCOMPRESSED", "large v1 ZSTD", "large v2 ZSTD", "large v2 SNAPPY"} {
		if generated[want] == 0 {
			t.Errorf("no generated page is %s", want)
		}
	}
}

// FuzzPagesAgainstParquetGo writes a file with parquet-go from the
// fuzzer's choice of type, encoding, shape of nesting, page size, page
// version, codec and values, and decodes it both ways, as
// TestPagesAgainstParquetGo does.
//
//	go test ./reader/parquetpage -run '^$' -fuzz '^FuzzPagesAgainstParquetGo$' -fuzztime 60s
func FuzzPagesAgainstParquetGo(f *testing.F) {
	gens := pageGens()
	for i := range gens {
		f.Add(uint16(i), uint64(i), uint16(300), uint16(512))
	}
	f.Fuzz(func(t *testing.T, which uint16, seed uint64, rows, pageSize uint16) {
		g := gens[int(which)%len(gens)]
		g.seed, g.rows, g.pageSize = seed, int(rows%3000), 64+int(pageSize%8192)
		data, oracle, err := g.files()
		if err != nil {
			t.Skipf("%s: parquet-go does not write it: %v", g, err)
		}
		if err := comparePages(data, oracle, nil); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
	})
}

// comparePages decodes every page of the Parquet file data with
// parquetpage and every page of oracle, a file of the same rows and row
// groups (most often data itself), with parquet-go, and compares them;
// counted (when not nil) counts data's pages by type and encoding.
func comparePages(data, oracle []byte, counted map[string]int) error {
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("parquet-go opens: %w", err)
	}
	of, err := parquet.OpenFile(bytes.NewReader(oracle), int64(len(oracle)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("parquet-go opens the oracle: %w", err)
	}
	if len(of.RowGroups()) != len(pf.RowGroups()) {
		return fmt.Errorf("%d row groups, the oracle %d", len(pf.RowGroups()), len(of.RowGroups()))
	}
	var leaves []*parquet.Column
	var walk func(c *parquet.Column)
	walk = func(c *parquet.Column) {
		if c.Leaf() {
			leaves = append(leaves, c)
			return
		}
		for _, child := range c.Columns() {
			walk(child)
		}
	}
	walk(pf.Root())
	for g, rg := range pf.RowGroups() {
		// The chunks of a row group are read side by side, a batch of
		// each in turn, sharing one scratch, as a stream reads them.
		var scratch parquetpage.Scratch
		var chunks []*chunkCheck
		for i := range rg.ColumnChunks() {
			md := &pf.Metadata().RowGroups[g].Columns[i].MetaData
			want, err := parquetGoValues(of.RowGroups()[g].ColumnChunks()[i])
			if err != nil {
				return fmt.Errorf("row group %d column %s: parquet-go: %w", g, md.PathInSchema, err)
			}
			if counted != nil {
				if err := countPages(data, md, counted); err != nil {
					return err
				}
				counted["entries"] += len(want)
			}
			c := &chunkCheck{col: parquetpage.ColumnOf(leaves[i], md), want: want,
				name: fmt.Sprintf("row group %d column %s", g, strings.Join(md.PathInSchema, "."))}
			c.pr.Reset(bytes.NewReader(data), c.col, parquetpage.ChunkOf(md), codec.Decompress, &scratch)
			chunks = append(chunks, c)
		}
		for batch := 0; ; batch++ {
			busy := false
			for _, c := range chunks {
				more, err := c.next(batch)
				if err != nil {
					return fmt.Errorf("%s (%s, def %d, rep %d): %w", c.name, c.col.Type, c.col.MaxDef, c.col.MaxRep, err)
				}
				busy = busy || more
			}
			if !busy {
				break
			}
		}
	}
	return nil
}

// chunkCheck reads one column chunk with parquetpage and compares it with
// parquet-go's values.
type chunkCheck struct {
	name string
	col  parquetpage.Column
	pr   parquetpage.Reader
	want []parquet.Value
	at   int
	done bool
}

// next compares the chunk's next batch, of a size that varies with the
// batch number so that every decoder stops and resumes mid-run; false
// once the chunk is done.
func (c *chunkCheck) next(batch int) (bool, error) {
	if c.done {
		return false, nil
	}
	var v parquetpage.Values
	err := c.pr.Read(&v, 1+(batch*37)%500)
	if errors.Is(err, io.EOF) {
		c.done = true
		if c.at != len(c.want) {
			return false, fmt.Errorf("%d entries, parquet-go %d", c.at, len(c.want))
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("entry %d: %w", c.at, err)
	}
	if v.N == 0 {
		return false, fmt.Errorf("entry %d: an empty batch", c.at)
	}
	vi := 0
	for e := range v.N {
		if c.at >= len(c.want) {
			return false, fmt.Errorf("more entries than parquet-go's %d", len(c.want))
		}
		w := c.want[c.at]
		rep, def := 0, 0
		if v.Rep != nil {
			rep = int(v.Rep[e])
		}
		if v.Def != nil {
			def = int(v.Def[e])
		}
		if rep != w.RepetitionLevel() || def != w.DefinitionLevel() {
			return false, fmt.Errorf("entry %d: levels rep %d def %d, parquet-go %d %d", c.at, rep, def, w.RepetitionLevel(), w.DefinitionLevel())
		}
		null := def < c.col.MaxDef
		if null != w.IsNull() {
			return false, fmt.Errorf("entry %d: null %t, parquet-go %t", c.at, null, w.IsNull())
		}
		if !null {
			if err := sameValue(&v, c.col, vi, w); err != nil {
				return false, fmt.Errorf("entry %d: %w", c.at, err)
			}
			vi++
		}
		c.at++
	}
	if n := v.Len(c.col.Type); n != vi {
		return false, fmt.Errorf("a batch of %d values for %d non-null entries", n, vi)
	}
	return true, nil
}

// countPages counts the data pages of a column chunk by type and encoding
// ("INT32/PLAIN") and by version ("v1").
func countPages(data []byte, md *format.ColumnMetaData, counted map[string]int) error {
	c := parquetpage.ChunkOf(md)
	proto := &thrift.CompactProtocol{}
	for pos := c.Offset; pos < c.Offset+c.Size; {
		br := bytes.NewReader(data[pos:])
		var h format.PageHeader
		if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
			return fmt.Errorf("page header at %d: %w", pos, err)
		}
		pos = int64(len(data)) - int64(br.Len()) + int64(h.CompressedPageSize)
		version := ""
		switch {
		case h.DataPageHeader.Valid:
			counted[md.Type.String()+"/"+h.DataPageHeader.V.Encoding.String()]++
			version = "v1"
		case h.DataPageHeaderV2.Valid:
			counted[md.Type.String()+"/"+h.DataPageHeaderV2.V.Encoding.String()]++
			version = "v2"
		}
		if version == "" {
			continue
		}
		counted[version]++
		if h.CompressedPageSize > parquetpage.ReadAhead {
			counted["large "+version+" "+md.Codec.String()]++
		}
	}
	return nil
}

// parquetGoValues reads a column chunk's values with parquet-go.
func parquetGoValues(chunk parquet.ColumnChunk) (_ []parquet.Value, err error) {
	ps := chunk.Pages()
	defer func() { err = errors.Join(err, ps.Close()) }()
	var out []parquet.Value
	buf := make([]parquet.Value, 256)
	for {
		p, err := ps.ReadPage()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				out = append(out, v.Clone())
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(p)
				return nil, err
			}
		}
		parquet.Release(p)
	}
}

// sameValue compares the i-th value of v with parquet-go's w.
func sameValue(v *parquetpage.Values, col parquetpage.Column, i int, w parquet.Value) error {
	var got, exp any
	switch w.Kind() {
	case parquet.Boolean:
		got, exp = v.Bool[i], w.Boolean()
	case parquet.Int32:
		got, exp = v.Int32[i], w.Int32()
	case parquet.Int64:
		got, exp = v.Int64[i], w.Int64()
	case parquet.Int96:
		got, exp = v.Int96[i], w.Int96()
	case parquet.Float:
		got, exp = math.Float32bits(v.Float[i]), math.Float32bits(w.Float())
	case parquet.Double:
		got, exp = math.Float64bits(v.Double[i]), math.Float64bits(w.Double())
	case parquet.ByteArray, parquet.FixedLenByteArray:
		got, exp = string(v.ByteArray(i)), string(w.ByteArray())
	default:
		return fmt.Errorf("parquet-go gives a %s value for a %s column", w.Kind(), col.Type)
	}
	if got != exp {
		return fmt.Errorf("value %v, parquet-go %v", got, exp)
	}
	return nil
}

// pageGen is one generated Parquet file: a column of each nesting shape of
// one physical type in one encoding.
type pageGen struct {
	kind     parquet.Kind
	enc      encoding.Encoding
	v2       bool
	codec    compress.Codec
	rows     int
	pageSize int
	// groupRows is the most rows a row group holds; 0 is half the rows.
	groupRows int
	seed      uint64
}

func (g pageGen) String() string {
	v := 1
	if g.v2 {
		v = 2
	}
	return fmt.Sprintf("%s/%s, data page v%d, %s, %d rows, pages of %d bytes, seed %d",
		g.kind, g.enc.Encoding(), v, g.codec.CompressionCodec(), g.rows, g.pageSize, g.seed)
}

// largePageRows is the row count of the generated files of large pages.
const largePageRows = 10_000

// pageGens lists every encoding of every physical type that parquet-go
// writes, each with pages v1 and v2, cycling through the codecs.
func pageGens() []pageGen {
	encs := map[parquet.Kind][]encoding.Encoding{
		parquet.Boolean:           {&parquet.Plain, &parquet.RLE},
		parquet.Int32:             {&parquet.Plain, &parquet.RLEDictionary, &parquet.DeltaBinaryPacked, &parquet.ByteStreamSplit},
		parquet.Int64:             {&parquet.Plain, &parquet.RLEDictionary, &parquet.DeltaBinaryPacked, &parquet.ByteStreamSplit},
		parquet.Int96:             {&parquet.Plain, &parquet.RLEDictionary},
		parquet.Float:             {&parquet.Plain, &parquet.RLEDictionary, &parquet.ByteStreamSplit},
		parquet.Double:            {&parquet.Plain, &parquet.RLEDictionary, &parquet.ByteStreamSplit},
		parquet.ByteArray:         {&parquet.Plain, &parquet.RLEDictionary, &parquet.DeltaLengthByteArray, &parquet.DeltaByteArray},
		parquet.FixedLenByteArray: {&parquet.Plain, &parquet.RLEDictionary, &parquet.DeltaByteArray, &parquet.ByteStreamSplit},
	}
	codecs := []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, sharedZstd, sharedGzip, sharedLz4, sharedBrotli}
	var out []pageGen
	// Pages larger than parquetpage's read-ahead, compressed or not, which
	// it reads whole into the shared scratch or the page's own buffer: one
	// row group of 10,000 rows makes pages of up to hundreds of KiB, and
	// TestPagesAgainstParquetGo checks that each of these files holds a
	// page larger than the read-ahead in its codec. Their LZ4_RAW pages are
	// LZ4 blocks of parquet-go's fast compressor (as Arrow writes them),
	// not of its default HC one, whose search over pages this large was
	// most of what writing them cost under -race; the small files' pages
	// are HC's.
	for _, kind := range []parquet.Kind{parquet.Int64, parquet.ByteArray} {
		for _, codec := range codecs {
			if codec == sharedLz4 {
				codec = &lz4.Codec{Level: lz4.Fastest}
			}
			for _, v2 := range []bool{false, true} {
				out = append(out, pageGen{kind: kind, enc: &parquet.Plain, v2: v2, codec: codec,
					rows: largePageRows, groupRows: largePageRows, pageSize: 1 << 20})
			}
		}
	}
	for _, kind := range []parquet.Kind{parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Int96, parquet.Float,
		parquet.Double, parquet.ByteArray, parquet.FixedLenByteArray} {
		for _, enc := range encs[kind] {
			for _, v2 := range []bool{false, true} {
				out = append(out, pageGen{kind: kind, enc: enc, v2: v2, codec: codecs[len(out)%len(codecs)], rows: 700, pageSize: 512})
			}
		}
	}
	return out
}

// sharedZstd is parquet-go's zstd codec (parquet.Zstd) with one encoder,
// made with the options parquet-go gives its own, for every page, so the
// same bytes: parquet-go pools its encoders, and under -race, where
// sync.Pool drops a share of what is put back, allocating an encoder's
// state again was most of what writing the zstd files cost.
var sharedZstd = func() *zstdOneEncoder {
	enc, err := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithEncoderLevel(kzstd.SpeedDefault),
		kzstd.WithZeroFrames(true), kzstd.WithEncoderCRC(false))
	if err != nil {
		panic(err)
	}
	return &zstdOneEncoder{Codec: &parquet.Zstd, enc: enc}
}()

// zstdOneEncoder is sharedZstd's type: parquet-go's codec but for Encode.
type zstdOneEncoder struct {
	*zstd.Codec
	enc *kzstd.Encoder // EncodeAll is safe for concurrent use
}

func (c *zstdOneEncoder) Encode(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// sharedGzip is parquet-go's gzip codec (parquet.Gzip) with one writer at
// its level, reset for every page, for the same reason as sharedZstd.
var sharedGzip = func() *gzipOneWriter {
	w, err := kgzip.NewWriterLevel(io.Discard, parquet.Gzip.Level)
	if err != nil {
		panic(err)
	}
	return &gzipOneWriter{Codec: &parquet.Gzip, w: w}
}()

// gzipOneWriter is sharedGzip's type: parquet-go's codec but for Encode.
type gzipOneWriter struct {
	*pgzip.Codec
	mu sync.Mutex
	w  *kgzip.Writer
}

func (c *gzipOneWriter) Encode(dst, src []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return encodeStream(c.w, dst, src)
}

// encodeStream compresses src into dst with a streaming writer that Reset
// points at a new output, as parquet-go's own gzip and brotli codecs do.
func encodeStream(w interface {
	io.WriteCloser
	Reset(io.Writer)
}, dst, src []byte) ([]byte, error) {
	out := bytes.NewBuffer(dst[:0])
	w.Reset(out)
	if _, err := w.Write(src); err != nil {
		return nil, err
	}
	err := w.Close()
	return out.Bytes(), err
}

// sharedLz4 is parquet-go's LZ4_RAW codec (parquet.Lz4Raw) with one
// compressor, made with its level, for every page, so the same bytes (the
// compressor clears its tables before each block): parquet-go makes a new
// one, 1 MiB of tables, for each page, which under -race was most of what
// writing the LZ4 files cost.
var sharedLz4 = &lz4OneCompressor{Codec: &parquet.Lz4Raw, c: plz4.CompressorHC{Level: parquet.Lz4Raw.Level}}

// lz4OneCompressor is sharedLz4's type: parquet-go's codec but for Encode.
type lz4OneCompressor struct {
	*lz4.Codec
	mu sync.Mutex
	c  plz4.CompressorHC
}

func (c *lz4OneCompressor) Encode(dst, src []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := plz4.CompressBlockBound(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	} else {
		dst = dst[:cap(dst)]
	}
	n, err := c.c.CompressBlock(src, dst)
	return dst[:n], err
}

// sharedBrotli is parquet-go's brotli codec (parquet.Brotli) with one
// writer, made with its options, reset for every page, for the same reason
// as sharedZstd.
var sharedBrotli = &brotliOneWriter{Codec: &parquet.Brotli, w: brotli.NewWriterOptions(io.Discard,
	brotli.WriterOptions{Quality: parquet.Brotli.Quality, LGWin: parquet.Brotli.LGWin})}

// brotliOneWriter is sharedBrotli's type: parquet-go's codec but for
// Encode.
type brotliOneWriter struct {
	*pbrotli.Codec
	mu sync.Mutex
	w  *brotli.Writer
}

func (c *brotliOneWriter) Encode(dst, src []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return encodeStream(c.w, dst, src)
}

// The nesting shapes, one column each: name, node around the leaf, and the
// maximum repetition and definition levels.
var pageShapes = []struct {
	name     string
	wrap     func(parquet.Node) parquet.Node
	rep, def int
}{
	{"a_required", parquet.Required, 0, 0},
	{"b_optional", parquet.Optional, 0, 1},
	{"c_repeated", parquet.Repeated, 1, 1},
	{"d_list", func(n parquet.Node) parquet.Node { return parquet.Optional(parquet.List(parquet.Optional(n))) }, 1, 3},
	{"e_list_of_lists", func(n parquet.Node) parquet.Node {
		return parquet.Optional(parquet.List(parquet.Optional(parquet.List(parquet.Optional(n)))))
	}, 2, 5},
}

// files writes the generated file, and the file parquet-go is to read for
// the values it holds: the same, but for LZ4_RAW, which parquet-go v0.32.0
// misreads whenever its decoder outgrows the page buffer it was handed
// (parquet-go/parquet-go#608, open; Column.decompress keeps the old
// buffer): for LZ4_RAW the oracle is the same rows written uncompressed.
func (g pageGen) files() (data, oracle []byte, err error) {
	if data, err = g.write(); err != nil {
		return nil, nil, err
	}
	if g.codec.CompressionCodec() != format.Lz4Raw {
		return data, data, nil
	}
	g.codec = &parquet.Uncompressed
	oracle, err = g.write()
	return data, oracle, err
}

// write writes the generated file.
func (g pageGen) write() (_ []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet-go panicked: %v", r)
		}
	}()
	typ := map[parquet.Kind]parquet.Type{
		parquet.Boolean: parquet.BooleanType, parquet.Int32: parquet.Int32Type, parquet.Int64: parquet.Int64Type,
		parquet.Int96: parquet.Int96Type, parquet.Float: parquet.FloatType, parquet.Double: parquet.DoubleType,
		parquet.ByteArray: parquet.ByteArrayType, parquet.FixedLenByteArray: parquet.FixedLenByteArrayType(16),
	}[g.kind]
	group := parquet.Group{}
	for _, s := range pageShapes {
		group[s.name] = s.wrap(parquet.Encoded(parquet.Leaf(typ), g.enc))
	}
	schema := parquet.NewSchema("generated", group)
	version := 1
	if g.v2 {
		version = 2
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema,
		parquet.PageBufferSize(g.pageSize),
		parquet.DataPageVersion(version),
		parquet.Compression(g.codec),
		parquet.MaxRowsPerRowGroup(int64(cmp.Or(g.groupRows, max(1, g.rows/2)))))
	rng := rand.New(rand.NewPCG(g.seed, uint64(g.kind)))
	vals := valueGen{kind: g.kind, rng: rng}
	rows := make([]parquet.Row, 0, g.rows)
	for range g.rows {
		var row parquet.Row
		for col, s := range pageShapes {
			row = appendEntries(row, rng, s.rep, s.def, col, vals.next)
		}
		rows = append(rows, row)
	}
	if _, err := w.WriteRows(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendEntries appends one row's entries of a column of the given levels
// (the shapes of pageShapes): nulls, empty lists and elements at random.
func appendEntries(row parquet.Row, rng *rand.Rand, maxRep, maxDef, col int, value func() parquet.Value) parquet.Row {
	entry := func(rep, def int) {
		v := parquet.NullValue()
		if def == maxDef {
			v = value()
		}
		row = append(row, v.Level(rep, def, col))
	}
	switch maxRep {
	case 0:
		def := maxDef
		if maxDef > 0 && rng.IntN(5) == 0 {
			def = 0
		}
		entry(0, def)
	case 1:
		// Repeated leaf (def 1), or a list of optional elements (def 3).
		n := rng.IntN(5)
		if maxDef == 3 && rng.IntN(6) == 0 {
			entry(0, 0) // a null list
			return row
		}
		if n == 0 {
			entry(0, maxDef-1-boolInt(maxDef == 3)) // empty: 0 for a repeated leaf, 1 for a list
			return row
		}
		for i := range n {
			def := maxDef
			if maxDef == 3 && rng.IntN(5) == 0 {
				def = 2 // a null element
			}
			entry(boolInt(i > 0), def)
		}
	case 2:
		switch rng.IntN(8) {
		case 0:
			entry(0, 0)
			return row
		case 1:
			entry(0, 1)
			return row
		}
		for i := range 1 + rng.IntN(3) {
			rep := boolInt(i > 0)
			switch rng.IntN(6) {
			case 0:
				entry(rep, 2) // a null inner list
				continue
			case 1:
				entry(rep, 3) // an empty inner list
				continue
			}
			for j := range 1 + rng.IntN(4) {
				if j > 0 {
					rep = 2
				}
				def := 5
				if rng.IntN(5) == 0 {
					def = 4
				}
				entry(rep, def)
			}
		}
	}
	return row
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// valueGen makes values of one kind: runs of repeats, a small set (for
// dictionaries), shared prefixes (for DELTA_BYTE_ARRAY), extremes.
type valueGen struct {
	kind parquet.Kind
	rng  *rand.Rand
	last parquet.Value
}

func (g *valueGen) next() parquet.Value {
	r := g.rng
	if g.last.Kind() == g.kind && r.IntN(4) == 0 {
		return g.last
	}
	small := r.IntN(3) == 0
	var v parquet.Value
	switch g.kind {
	case parquet.Boolean:
		v = parquet.BooleanValue(r.IntN(2) == 0)
	case parquet.Int32:
		x := r.Int32()
		switch {
		case small:
			x = int32(r.IntN(10) - 3)
		case r.IntN(10) == 0:
			x = []int32{math.MinInt32, math.MaxInt32, 0, -1}[r.IntN(4)]
		}
		v = parquet.Int32Value(x)
	case parquet.Int64:
		x := int64(r.Uint64())
		switch {
		case small:
			x = int64(r.IntN(10) - 3)
		case r.IntN(10) == 0:
			x = []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
		}
		v = parquet.Int64Value(x)
	case parquet.Int96:
		x := deprecated.Int96{r.Uint32(), r.Uint32(), r.Uint32()}
		if small {
			x = deprecated.Int96{uint32(r.IntN(3)), 0, 2440588}
		}
		v = parquet.Int96Value(x)
	case parquet.Float:
		x := math.Float32frombits(r.Uint32())
		if small {
			x = float32(r.IntN(10)) / 4
		}
		v = parquet.FloatValue(x)
	case parquet.Double:
		x := math.Float64frombits(r.Uint64())
		if small {
			x = float64(r.IntN(10)) / 4
		}
		v = parquet.DoubleValue(x)
	case parquet.ByteArray:
		var b []byte
		if g.last.Kind() == g.kind && r.IntN(2) == 0 {
			prev := g.last.ByteArray()
			b = append(b, prev[:r.IntN(len(prev)+1)]...)
		}
		for range r.IntN(12) {
			b = append(b, "abcdé\x00\xff"[r.IntN(8)])
		}
		if small {
			b = []byte([]string{"alpha", "beta", "", "gamma"}[r.IntN(4)])
		}
		v = parquet.ByteArrayValue(b)
	case parquet.FixedLenByteArray:
		b := make([]byte, 16)
		if g.last.Kind() == g.kind {
			copy(b, g.last.ByteArray()[:r.IntN(17)])
		}
		for i := range b {
			if b[i] == 0 && r.IntN(2) == 0 {
				b[i] = byte(r.IntN(256))
			}
		}
		if small {
			b = bytes.Repeat([]byte{byte(r.IntN(4))}, 16)
		}
		v = parquet.FixedLenByteArrayValue(b)
	}
	g.last = v
	return v
}
