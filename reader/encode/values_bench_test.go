package encode

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/cost"
)

// BenchmarkAppendValues encodes the values of each kind the benchmark
// table (tablegen.Bench) holds, drawn as it draws them, 1024 a loop, and
// reports the CPU time per value (cpu-ns/value):
//
//	go test ./reader/encode -run '^$' -bench AppendValues -count 6
func BenchmarkAppendValues(b *testing.B) {
	const n = 1024
	rng := rand.New(rand.NewPCG(7, 8))
	var (
		scores  = make([]float64, n)
		shorts  = make([]float64, n)
		floats  = make([]float32, n)
		views   = make([]int64, n)
		prices  = make([]int64, n)
		stamps  = make([]int64, n)
		base    = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
		scratch Scratch
	)
	for i := range n {
		scores[i] = rng.NormFloat64() * 100
		shorts[i] = float64(rng.IntN(1_000_000)) / 100
		floats[i] = float32(rng.NormFloat64() * 100)
		views[i] = rng.Int64N(10_000_000)
		prices[i] = rng.Int64N(100_000_000) - 10_000_000
		stamps[i] = base + rng.Int64N(366*86_400_000_000)
	}
	buf := make([]byte, 0, 64*n)
	run := func(name string, f func(b []byte, i int) []byte) {
		b.Run(name, func(b *testing.B) {
			cpu := cost.CPUTime()
			for b.Loop() {
				buf = buf[:0]
				for i := range n {
					buf = f(buf, i)
				}
			}
			b.ReportMetric(float64((cost.CPUTime()-cpu).Nanoseconds())/float64(b.N*n), "cpu-ns/value")
		})
	}
	run("double", func(b []byte, i int) []byte { return appendDouble(b, scores[i], &shortTries{}) })
	run("double_strconv", func(b []byte, i int) []byte { return strconv.AppendFloat(b, scores[i], 'f', -1, 64) })
	run("double_skipping", func(b []byte, i int) []byte { return appendDouble(b, scores[i], &shortTries{skip: 1}) })
	run("double_short", func(b []byte, i int) []byte { return appendDouble(b, shorts[i], &shortTries{}) })
	run("float", func(b []byte, i int) []byte { return appendFloat32(b, floats[i], &shortTries{skip: 1}) })
	run("long", func(b []byte, i int) []byte { return appendInt(b, views[i]) })
	run("decimal", func(b []byte, i int) []byte { return appendDecimalInt64(b, prices[i], 4, &scratch) })
	run("timestamp_millis", func(b []byte, i int) []byte { return appendTimestamp(b, stamps[i], 1000, false, false) })
	run("timestamp_iso", func(b []byte, i int) []byte { return appendTimestamp(b, stamps[i], 1000, false, true) })
	names := []string{"id", "quantity", "views", "score", "token", "region", "flag", "day", "event_ts", "price"}
	keys := make([]FieldKeyBytes, len(names))
	for i, name := range names {
		keys[i] = NewFieldKeyBytes(name)
	}
	run("keys", func(b []byte, i int) []byte { return keys[i%len(keys)].Append(b, i%len(keys) == 0) })
	run("keys_appended", func(b []byte, i int) []byte {
		if i%len(keys) != 0 {
			b = append(b, ',')
		}
		return append(b, keys[i%len(keys)].b[1:]...)
	})
	run("date_millis", func(b []byte, i int) []byte { return appendInt(b, int64(19_700+i%730)*millisPerDay) })
}
