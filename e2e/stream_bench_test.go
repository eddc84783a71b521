package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// The benchmark table of the core issue (sidecartest.BenchWarehouse):
// 2,000,000 rows in 8 data files with 5% positional and 1% equality
// deletes; SIDECAR_BENCH_ROWS makes it smaller for a quick look.
//
//	go test -run '^$' -bench 'RowsHTTP|ReadTasksJSON' -benchtime 1x ./e2e/

// BenchmarkRowsHTTP reads every split of the benchmark table over HTTP, one
// stream at a time, as a Druid worker would.
func BenchmarkRowsHTTP(b *testing.B) {
	dir, _, _ := sidecartest.BenchWarehouse(b)
	srv := sidecartest.LocalServer(b, dir)
	p := srv.Plan(b, sidecartest.Q("table", "bench.orders"))
	if p.Mode != "v2" {
		b.Fatalf("plan is %s, want v2", p.Mode)
	}
	sidecartest.ResetPeakRSS()
	b.ResetTimer()
	var rows int64
	for range b.N {
		rows = 0
		for _, u := range p.InputSource.URIs {
			rows += countLines(b, srv.Client(), u)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(sidecartest.PeakRSS())/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(rows), "rows")
}

// BenchmarkReadTasksJSON is the anchor: iceberg-go's Scan.ReadTasks with
// encoding/json on the same table, in the same run.
func BenchmarkReadTasksJSON(b *testing.B) {
	_, tbl, _ := sidecartest.BenchWarehouse(b)
	sidecartest.ResetPeakRSS()
	b.ResetTimer()
	var rows int64
	for range b.N {
		var err error
		if rows, err = tablegen.OracleJSONBaseline(context.Background(), tbl); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(sidecartest.PeakRSS())/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(rows), "rows")
}

// countLines reads a row stream to its end and counts its rows.
func countLines(b *testing.B, c *http.Client, uri string) int64 {
	resp, err := c.Get(uri)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		b.Fatalf("GET %s: %d %s", uri, resp.StatusCode, body)
	}
	var n int64
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	buf := make([]byte, 1<<20)
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
