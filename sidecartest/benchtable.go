package sidecartest

import (
	"context"
	"errors"
	"fmt"
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

// benchTable is the benchmark table of the core issue, written once per
// test binary (BenchWarehouse).
var benchTable struct {
	once sync.Once
	dir  string
	rows int
	tbl  *table.Table
	err  error
}

// BenchWarehouse is the local warehouse of the benchmark table of the core
// issue, bench.orders: 2,000,000 rows in 8 data files with 5% positional
// and 1% equality deletes; SIDECAR_BENCH_ROWS makes it smaller for a quick
// look. It is written once into the system temp folder and reused by later
// runs with the same size. It returns the folder, the table and its rows.
func BenchWarehouse(b *testing.B) (string, *table.Table, int) {
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
		tbl, err := CachedBenchTable(dir, table.Identifier{"bench", "orders"}, rows, 8)
		benchTable.dir, benchTable.tbl, benchTable.rows, benchTable.err = dir, tbl, rows, err
	})
	if benchTable.err != nil {
		b.Fatalf("benchmark table: %v", benchTable.err)
	}
	return benchTable.dir, benchTable.tbl, benchTable.rows
}

// CachedBenchTable loads the tablegen.Bench table ident of the local
// warehouse in dir, writing it (rows in files data files, 5% positional and
// 1% equality deletes) when it is not there yet.
func CachedBenchTable(dir string, ident table.Identifier, rows, files int) (*table.Table, error) {
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

// ResetPeakRSS returns freed memory to the OS and resets the kernel's
// high-water mark of this process's resident set, so PeakRSS measures what
// comes next.
func ResetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// PeakRSS is VmHWM, the peak resident set since the last reset, in bytes;
// -1 where /proc/self/status does not say.
func PeakRSS() int64 { return procStatus("VmHWM:") }

// CurrentRSS is VmRSS, the resident set now, in bytes; -1 where
// /proc/self/status does not say.
func CurrentRSS() int64 { return procStatus("VmRSS:") }

// procStatus reads one kB field of /proc/self/status, in bytes; -1 when
// absent.
func procStatus(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}
