package tablegen

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// The size the sidecar's performance work uses.
const (
	benchRows    = 2_000_000
	benchFiles   = 8
	benchPosFrac = 0.05
	benchEqFrac  = 0.01
)

// BenchmarkBench measures building the performance table.
func BenchmarkBench(b *testing.B) {
	ctx := context.Background()
	cat := localCatalog(b)
	i := 0
	for b.Loop() {
		i++
		if _, err := Bench(ctx, cat, table.Identifier{"bench", fmt.Sprintf("t%d", i)}, benchRows, benchFiles, benchPosFrac, benchEqFrac); err != nil {
			b.Fatalf("bench: %v", err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkOracleJSONBaseline is the "iceberg-go ReadTasks + encoding/json"
// anchor: reading the performance table's live rows and marshalling each as
// a map.
func BenchmarkOracleJSONBaseline(b *testing.B) {
	ctx := context.Background()
	tbl, err := Bench(ctx, localCatalog(b), table.Identifier{"bench", "t"}, benchRows, benchFiles, benchPosFrac, benchEqFrac)
	if err != nil {
		b.Fatalf("bench: %v", err)
	}
	var rows int64
	for b.Loop() {
		n, err := OracleJSONBaseline(ctx, tbl)
		if err != nil {
			b.Fatalf("baseline: %v", err)
		}
		rows += n
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkOracleRows measures the oracle's own canonical encoding on the
// same table.
func BenchmarkOracleRows(b *testing.B) {
	ctx := context.Background()
	tbl, err := Bench(ctx, localCatalog(b), table.Identifier{"bench", "t"}, benchRows, benchFiles, benchPosFrac, benchEqFrac)
	if err != nil {
		b.Fatalf("bench: %v", err)
	}
	var rows int64
	for b.Loop() {
		out, err := OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
		if err != nil {
			b.Fatalf("oracle: %v", err)
		}
		rows += int64(len(out))
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
