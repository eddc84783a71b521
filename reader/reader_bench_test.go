package reader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/cost"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

const benchRows = 200_000

// benchRow is a 10-column row of mixed types, with Iceberg field ids.
type benchRow struct {
	ID     int64   `parquet:"id,id(1)"`
	UserID int32   `parquet:"user_id,id(2)"`
	Name   string  `parquet:"name,id(3),dict"`
	Score  float64 `parquet:"score,id(4)"`
	Ratio  float32 `parquet:"ratio,id(5)"`
	Flag   bool    `parquet:"flag,id(6)"`
	TS     int64   `parquet:"ts,id(7),timestamp(microsecond)"`
	Day    int32   `parquet:"day,id(8),date"`
	Amount int64   `parquet:"amount,id(9),decimal(2:10)"`
	Note   *string `parquet:"note,id(10),optional"`
}

var benchSchema = iceberg.NewSchema(0,
	field(1, "id", iceberg.PrimitiveTypes.Int64),
	field(2, "user_id", iceberg.PrimitiveTypes.Int32),
	field(3, "name", iceberg.PrimitiveTypes.String),
	field(4, "score", iceberg.PrimitiveTypes.Float64),
	field(5, "ratio", iceberg.PrimitiveTypes.Float32),
	field(6, "flag", iceberg.PrimitiveTypes.Bool),
	field(7, "ts", iceberg.PrimitiveTypes.TimestampTz),
	field(8, "day", iceberg.PrimitiveTypes.Date),
	field(9, "amount", iceberg.DecimalTypeOf(10, 2)),
	field(10, "note", iceberg.PrimitiveTypes.String),
)

// writeBenchFile writes the benchmark table's data file (and, with
// deleteEvery > 0, a positional delete file removing every deleteEvery-th
// row) and returns its split.
func writeBenchFile(b *testing.B, dir string, deleteEvery int) token.Split {
	b.Helper()
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	notes := []string{"ok", "late delivery", "gift \"wrapped\"", "naïve café"}
	rows := make([]benchRow, benchRows)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		r := &rows[i]
		r.ID = int64(i)
		r.UserID = int32(i*7919) % 100_000
		r.Name = names[i%len(names)]
		r.Score = float64(i%1000) * 1.25
		r.Ratio = float32(i%97) / 10
		r.Flag = i%3 == 0
		r.TS = start.Add(time.Duration(i) * time.Second).UnixMicro()
		r.Day = int32(19723 + i%365)
		r.Amount = int64(i%100_000) * 37
		if i%4 != 0 {
			r.Note = &notes[i%len(notes)]
		}
	}
	_, size := writeParquet(b, dir, "data.parquet", rows, parquet.MaxRowsPerRowGroup(64*1024))
	s := dataSplit("data.parquet", size, benchRows)
	if deleteEvery > 0 {
		var dels []posDelete
		for i := 0; i < benchRows; i += deleteEvery {
			dels = append(dels, posDelete{s.Data.Path, int64(i)})
		}
		p, z := writeParquet(b, dir, "deletes.parquet", dels)
		s.Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: p, Format: "PARQUET", Size: z}}
	}
	return s
}

// BenchmarkRead measures the reader (open, delete loading, decode, encode
// to NDJSON into a discarding writer) against parquet-go's raw ReadRows on
// the same file, so the ratio is visible in rows/s.
func BenchmarkRead(b *testing.B) {
	for _, bc := range []struct {
		name        string
		deleteEvery int
		columns     []int
		filter      string // a residual filter, in iceberg's REST JSON form
	}{
		{"ndjson", 0, nil, ""},
		{"ndjson_deletes_10pct", 10, nil, ""},
		{"ndjson_3_of_10_columns", 0, []int{1, 3, 7}, ""},
		// About half of the rows pass; user_id is emitted too.
		{"ndjson_filter_long_lt", 0, nil, `{"type":"lt","term":"user_id","value":50000}`},
		// One row in eight passes; the filter column is projected away.
		{"ndjson_filter_string_eq_projected_away", 0, []int{1, 4, 7}, `{"type":"eq","term":"name","value":"bravo"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			s := writeBenchFile(b, dir, bc.deleteEvery)
			s.Columns = bc.columns
			if bc.filter != "" {
				s.Filter = []byte(bc.filter)
			}
			r := newReader(testFS(dir))
			ctx := context.Background()
			var bytes int64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				st, err := r.Open(ctx, s, tableOf(benchSchema))
				if err != nil {
					b.Fatal(err)
				}
				cw := &countingWriter{}
				if err := st.Run(ctx, cw, nil); err != nil {
					b.Fatal(err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
				bytes = cw.n
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(bytes)/benchRows, "B/row")
		})
	}
	b.Run("raw_parquet_go_ReadRows", func(b *testing.B) {
		dir := b.TempDir()
		writeBenchFile(b, dir, 0)
		path := filepath.Join(dir, "data.parquet")
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := f.Stat()
			pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]parquet.Row, 1024)
			n := 0
			for _, rg := range pf.RowGroups() {
				rows := rg.Rows()
				for {
					k, err := rows.ReadRows(buf)
					n += k
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				rows.Close()
			}
			f.Close()
			if n != benchRows {
				b.Fatalf("read %d rows", n)
			}
		}
		b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// writeSharedPositionalDeletes writes files small data files and one
// positional delete file that names each of them perFile times (every
// tenth position), as iceberg-go's planner attaches to every data file when
// the file's path bounds are truncated. It returns the splits.
func writeSharedPositionalDeletes(b *testing.B, dir string, files, perFile int) []token.Split {
	b.Helper()
	rows := make([]idRow, perFile*10)
	for i := range rows {
		rows[i] = idRow{ID: int64(i), Name: "n"}
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		b.Fatal(err)
	}
	var ss []token.Split
	var dels []posDelete
	for i := range files {
		name := fmt.Sprintf("data-%03d.parquet", i)
		if err := writeFile(filepath.Join(dir, name), buf.Bytes()); err != nil {
			b.Fatal(err)
		}
		s := dataSplit(name, int64(buf.Len()), int64(len(rows)))
		for p := range perFile {
			dels = append(dels, posDelete{s.Data.Path, int64(p * 10)})
		}
		ss = append(ss, s)
	}
	_, size := writeParquet(b, dir, "shared-deletes.parquet", dels)
	for i := range ss {
		ss[i].Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: bucket + "/shared-deletes.parquet", Format: "PARQUET", Size: size}}
	}
	return ss
}

// BenchmarkOpenSharedPositionalDeletes opens (and closes, without running)
// the 100 splits of data files that one positional delete file names, 1000
// positions each: one op is all 100. Without a cache every Open decodes the
// whole delete file; with a fresh cache per op (cold) the first Open decodes
// it and the other 99 find it; a warm cache decodes nothing.
func BenchmarkOpenSharedPositionalDeletes(b *testing.B) {
	const files, perFile = 100, 1000
	dir := b.TempDir()
	ss := writeSharedPositionalDeletes(b, dir, files, perFile)
	ctx := context.Background()
	openAll := func(b *testing.B, r fsReader) {
		for _, s := range ss {
			st, err := r.Open(ctx, s, tableOf(idSchema))
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("uncached", func(b *testing.B) {
		r := newReader(testFS(dir))
		b.ReportAllocs()
		for b.Loop() {
			openAll(b, r)
		}
	})
	b.Run("cached_cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			openAll(b, newReader(testFS(dir), reader.WithDeleteCache(deletes.NewCache(256<<20, nil))))
		}
	})
	b.Run("cached_warm", func(b *testing.B) {
		r := newReader(testFS(dir), reader.WithDeleteCache(deletes.NewCache(256<<20, nil)))
		openAll(b, r)
		b.ReportAllocs()
		for b.Loop() {
			openAll(b, r)
		}
	})
}

// BenchmarkReadBenchTable reads one data file of cmd/sidecar-bench's main
// table (250,000 rows of its 10 mixed columns, 5% of them deleted by
// position and 1% by equality) through the reader into a discarding
// writer, and decodes the same file with parquet-go's ReadRows, and
// reports the CPU time of each per row (cpu-ns/row): the ratio of
// sidecar-bench's target 6 without HTTP. Profile it with
//
//	go test ./reader -run '^$' -bench ReadBenchTable -cpuprofile cpu.out
func BenchmarkReadBenchTable(b *testing.B) {
	ctx := context.Background()
	cat, err := hadoop.NewCatalog("bench", b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	const rows = 250_000
	tbl, err := tablegen.Bench(ctx, cat, table.Identifier{"bench", "orders"}, rows, 1, 0.05, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 1 {
		b.Fatalf("%d tasks, %v", len(tasks), err)
	}
	snap := tbl.CurrentSnapshot()
	sp, err := splits.FromTask(tbl.Metadata(), tbl.MetadataLocation(), snap.SnapshotID, tbl.Schema().ID, tasks[0])
	if err != nil {
		b.Fatal(err)
	}
	ts := token.TableSchema{Schema: tbl.Schema()}
	fsys := catalog.NewFS(nil, nil)
	b.Run("reader", func(b *testing.B) {
		r := newReader(fsys, reader.WithDeleteCache(deletes.NewCache(64<<20, nil)))
		cpu := cost.CPUTime()
		for b.Loop() {
			discardSplit(b, r, []token.Split{sp}, ts)
		}
		b.ReportMetric(float64((cost.CPUTime()-cpu).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
	})
	b.Run("raw_parquet_go_ReadRows", func(b *testing.B) {
		path := strings.TrimPrefix(sp.Data.Path, "file://")
		cpu := cost.CPUTime()
		buf := make([]parquet.Row, 1024)
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			pf, err := parquet.OpenFile(f, sp.Data.Size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
			if err != nil {
				b.Fatal(err)
			}
			for _, rg := range pf.RowGroups() {
				rr := rg.Rows()
				for {
					_, err := rr.ReadRows(buf)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				rr.Close()
			}
			f.Close()
		}
		b.ReportMetric(float64((cost.CPUTime()-cpu).Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
	})
}

// BenchmarkPackedWideDeletes reads 8 data files of 50,000 rows that share
// one positional delete file written for a whole table (5% of each file's
// rows, and 200,000 rows of 50 data files not read here) as splits that
// pack 1, 2, 4 or 8 of them, without a delete cache, and reports the CPU
// time per data row (cpu-ns/row): the delete file is scanned once a split,
// so a row costs no more as a split packs more files.
func BenchmarkPackedWideDeletes(b *testing.B) {
	dir := b.TempDir()
	const files, rows = 8, 50_000
	ss, _ := packedWideDeletes(b, dir, files, rows, 20, 50, 4000)
	for _, pack := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("files=%d", pack), func(b *testing.B) {
			r := newReader(testFS(dir))
			cpu := cost.CPUTime()
			for b.Loop() {
				for first := 0; first < files; first += pack {
					discardSplit(b, r, ss[first:first+pack], tableOf(idSchema))
				}
			}
			b.ReportMetric(float64((cost.CPUTime()-cpu).Nanoseconds())/float64(b.N*files*rows), "cpu-ns/row")
		})
	}
}

// discardSplit reads the files parts as one split into a discarding
// writer.
func discardSplit(b *testing.B, r fsReader, parts []token.Split, ts token.TableSchema) {
	b.Helper()
	ctx := context.Background()
	st, err := r.OpenAll(ctx, parts, ts)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Run(ctx, &countingWriter{}, nil); err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
}
