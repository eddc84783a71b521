package reader

import (
	"testing"

	"github.com/druidiceberg/sidecar/internal/cost"
)

// BenchmarkAppendKeys writes the keys of a row of the benchmark table
// (tablegen.Bench), 1024 a loop, and reports the CPU time per key
// (cpu-ns/value), as BenchmarkAppendValues of package encode does per value:
//
//	go test ./reader -run '^$' -bench AppendKeys -count 6
func BenchmarkAppendKeys(b *testing.B) {
	const n = 1024
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
	names := []string{"id", "quantity", "views", "score", "token", "region", "flag", "day", "event_ts", "price"}
	keys := make([]fieldKeyBytes, len(names))
	for i, name := range names {
		keys[i] = newFieldKeyBytes(name)
	}
	run("keys", func(b []byte, i int) []byte { return keys[i%len(keys)].append(b, i%len(keys) == 0) })
	run("keys_appended", func(b []byte, i int) []byte {
		if i%len(keys) != 0 {
			b = append(b, ',')
		}
		return append(b, keys[i%len(keys)].b[1:]...)
	})
}
