package handlers_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/druidiceberg/sidecar/sidecartest"
)

// BenchmarkCompressedRows reads every split of the benchmark table over
// HTTP, one stream at a time, plain and compressed (compression=gzip and
// zstd), side by side in one run: the bytes on the wire per row and the
// process's CPU time per row (the server's compression and encoding, and
// the client's read of the bytes, which does not decompress).
//
//	go test -run '^$' -bench CompressedRows -benchtime 3x ./handlers/
func BenchmarkCompressedRows(b *testing.B) {
	dir, _, _ := sidecartest.BenchWarehouse(b)
	srv := localServer(b, dir)
	for _, c := range []string{"none", "gzip", "zstd"} {
		b.Run(c, func(b *testing.B) {
			p := srv.plan(b, q("table", "bench.orders", "compression", c, "minSplits", "4"))
			var rows int64
			for _, s := range p.Splits {
				rows += s.RecordCount
			}
			cpu0 := cpuTime(b)
			b.ResetTimer()
			var wire int64
			for range b.N {
				wire = 0
				for _, u := range p.InputSource.URIs {
					wire += drain(b, srv.Client(), u)
				}
			}
			b.StopTimer()
			cpu := cpuTime(b) - cpu0
			n := float64(rows) * float64(b.N)
			b.ReportMetric(float64(wire)/float64(rows), "wire-B/row")
			b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/row")
			b.ReportMetric(n/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// drain reads an answer to its end and returns its length.
func drain(b *testing.B, c *http.Client, uri string) int64 {
	resp, err := c.Get(uri)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d", uri, resp.StatusCode)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
