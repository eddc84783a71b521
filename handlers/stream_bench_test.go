package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// The benchmark table of the core issue: 2,000,000 rows in 8 data files with
// 5% positional and 1% equality deletes. SIDECAR_BENCH_ROWS makes it smaller
// for a quick look. It is written once into the system temp folder and
// reused by later runs with the same size.
//
//	go test -run '^$' -bench 'RowsHTTP|ReadTasksJSON' -benchtime 1x ./handlers/
var benchTable struct {
	once sync.Once
	dir  string
	rows int
	tbl  *table.Table
	err  error
}

func benchWarehouse(b *testing.B) (string, *table.Table, int) {
	b.Helper()
	benchTable.once.Do(func() {
		rows := 2_000_000
		if v := os.Getenv("SIDECAR_BENCH_ROWS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				benchTable.err = fmt.Errorf("SIDECAR_BENCH_ROWS: %w", err)
				return
			}
			rows = n
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("sidecar-bench-%d-8", rows))
		tbl, err := cachedBenchTable(dir, table.Identifier{"bench", "orders"}, rows, 8)
		benchTable.dir, benchTable.tbl, benchTable.rows, benchTable.err = dir, tbl, rows, err
	})
	if benchTable.err != nil {
		b.Fatalf("benchmark table: %v", benchTable.err)
	}
	return benchTable.dir, benchTable.tbl, benchTable.rows
}

// cachedBenchTable loads the tablegen.Bench table ident of the local
// warehouse in dir, writing it (rows in files data files, 5% positional and
// 1% equality deletes) when it is not there yet.
func cachedBenchTable(dir string, ident table.Identifier, rows, files int) (*table.Table, error) {
	cat, err := hadoop.NewCatalog("bench", dir, nil)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) || errors.Is(err, os.ErrNotExist) {
		tbl, err = tablegen.Bench(ctx, cat, ident, rows, files, 0.05, 0.01)
	}
	return tbl, err
}

// BenchmarkRowsHTTP reads every split of the benchmark table over HTTP, one
// stream at a time, as a Druid worker would.
func BenchmarkRowsHTTP(b *testing.B) {
	dir, _, _ := benchWarehouse(b)
	srv := localServer(b, dir)
	p := srv.plan(b, q("table", "bench.orders"))
	if p.Mode != "v2" {
		b.Fatalf("plan is %s, want v2", p.Mode)
	}
	resetPeakRSS()
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
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(rows), "rows")
}

// BenchmarkReadTasksJSON is the anchor: iceberg-go's Scan.ReadTasks with
// encoding/json on the same table, in the same run.
func BenchmarkReadTasksJSON(b *testing.B) {
	_, tbl, _ := benchWarehouse(b)
	resetPeakRSS()
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
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
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

// resetPeakRSS returns freed memory to the OS and resets the kernel's
// high-water mark of this process's resident set, so peakRSS measures what
// comes next.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is VmHWM, the peak resident set since the last reset, in bytes.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}
