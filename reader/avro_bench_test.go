package reader_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro/ocf"

	"github.com/druidiceberg/sidecar/internal/cost"
	"github.com/druidiceberg/sidecar/token"
)

// benchAvroSchema is benchRow's Iceberg Avro schema.
const benchAvroSchema = `{"type":"record","name":"bench","fields":[
 {"name":"id","type":"long","field-id":1},
 {"name":"user_id","type":"int","field-id":2},
 {"name":"name","type":"string","field-id":3},
 {"name":"score","type":"double","field-id":4},
 {"name":"ratio","type":"float","field-id":5},
 {"name":"flag","type":"boolean","field-id":6},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true},"field-id":7},
 {"name":"day","type":{"type":"int","logicalType":"date"},"field-id":8},
 {"name":"amount","type":{"type":"fixed","name":"fixed_5","size":5,"logicalType":"decimal","precision":10,"scale":2},"field-id":9},
 {"name":"note","type":["null","string"],"default":null,"field-id":10}]}`

// BenchmarkReadAvro reads the benchmark table's rows from an Avro file
// (deflate, as Iceberg's Avro writer compresses by default) and from the
// same rows as Parquet (BenchmarkRead's file), in rows/s, every column and
// 3 of 10. Its ratios run the three reads that the Avro targets compare
// one after the other in each iteration (Parquet with every column, Avro
// with every column, Avro with 3 of 10), so that a busy machine slows each
// alike, and report Avro's rows/s against Parquet's and a projection's
// against every column's, by wall time and by the process's CPU time:
//
//	go test -run '^$' -bench 'ReadAvro/ratios' -count 6 ./reader/
func BenchmarkReadAvro(b *testing.B) {
	dir := b.TempDir()
	ps := writeBenchFile(b, dir, 0)
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	notes := []string{"ok", "late delivery", "gift \"wrapped\"", "naïve café"}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]map[string]any, benchRows)
	for i := range recs {
		r := map[string]any{
			"id": int64(i), "user_id": int32(i*7919) % 100_000, "name": names[i%len(names)],
			"score": float64(i%1000) * 1.25, "ratio": float32(i%97) / 10, "flag": i%3 == 0,
			"ts": start.Add(time.Duration(i) * time.Second).UnixMicro(), "day": int32(19723 + i%365),
			"amount": big.NewInt(int64(i%100_000) * 37).FillBytes(make([]byte, 5)), "note": nil,
		}
		if i%4 != 0 {
			r["note"] = notes[i%len(notes)]
		}
		recs[i] = r
	}
	_, size := writeAvro(b, dir, "data.avro", benchAvroSchema, recs, ocf.WithCodec(ocf.DeflateCodec(1)))
	as := avroSplit("data.avro", size, benchRows)
	r := newReader(testFS(dir))
	// Both files give the same bytes: the benchmark compares like with like.
	a, _ := readAll(b, r, as, benchSchema)
	p, _ := readAll(b, r, ps, benchSchema)
	if !slices.Equal(a, p) {
		b.Fatal("the Avro and the Parquet file give different rows")
	}
	projected := []int{1, 3, 7}
	for _, bc := range []struct {
		name string
		cols []int
	}{{"all_columns", nil}, {"3_of_10_columns", projected}} {
		for _, f := range []struct {
			format string
			size   int64
		}{{"parquet", ps.Data.Size}, {"avro", size}} {
			b.Run(bc.name+"/"+f.format, func(b *testing.B) {
				s := ps
				if f.format == "avro" {
					s = as
				}
				s.Columns = bc.cols
				b.ReportAllocs()
				for b.Loop() {
					discardSplit(b, r, []token.Split{s}, tableOf(benchSchema))
				}
				b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(f.size)/benchRows, "file_B/row")
			})
		}
	}
	b.Run("ratios", func(b *testing.B) {
		ap := as
		ap.Columns = projected
		var wall, cpu [3]time.Duration // Parquet, Avro, Avro projected
		for b.Loop() {
			for i, s := range []token.Split{ps, as, ap} {
				w, c := time.Now(), cost.CPUTime()
				discardSplit(b, r, []token.Split{s}, tableOf(benchSchema))
				wall[i] += time.Since(w)
				cpu[i] += cost.CPUTime() - c
			}
		}
		b.ReportMetric(float64(wall[0])/float64(wall[1]), "avro_all/parquet_all")
		b.ReportMetric(float64(wall[1])/float64(wall[2]), "avro_3of10/avro_all")
		b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu_avro_all/parquet_all")
		b.ReportMetric(float64(cpu[1])/float64(cpu[2]), "cpu_avro_3of10/avro_all")
	})
}

// BenchmarkOpenWideAvro opens an Avro data file whose schema is a record
// of 20,000 fields, about the most its header may hold, and reads its one
// record: making the columns costs time linear in the fields.
func BenchmarkOpenWideAvro(b *testing.B) {
	var schema strings.Builder
	schema.WriteString(`{"type":"record","name":"w","fields":[{"name":"id","type":"long","field-id":1}`)
	for i := range 19_999 {
		fmt.Fprintf(&schema, `,{"name":"f%d","type":"int","field-id":%d}`, i, 1000+i)
	}
	schema.WriteString(`]}`)
	env := avroBlocksEnv(b, b.TempDir())
	file := avroBlock{role: avroRoleData, schema: schema.String(), count: 1, payload: make([]byte, 20_000)}.file()
	fsys := &overlayIO{IO: testFS(env.dir), path: bucket + "/fuzzed.avro", data: file}
	sp := avroSplit("fuzzed.avro", int64(len(file)), 1)
	r := newReader(fsys)
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := readSplit(context.Background(), r, sp, env.table, &out); err != nil {
			b.Fatal(err)
		}
	}
}
