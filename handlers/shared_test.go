package handlers_test

import (
	"context"
	"os"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/sharedtables"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// Tables that several tests only read are written once per run of the
// package and shared (sharedtables.Warehouse); a test that changes a
// table writes its own.
func TestMain(m *testing.M) { os.Exit(sharedtables.Main(m)) }

// sharedScenarios is every tablegen scenario, as scenarios.<name>, in one
// shared warehouse, by name.
func sharedScenarios(t testing.TB) (string, map[string]*table.Table) {
	t.Helper()
	return sharedtables.Warehouse(t, "scenarios", func(ctx context.Context, cat *hadoop.Catalog) (map[string]*table.Table, error) {
		return tablegen.BuildScenarios(ctx, cat)
	})
}

// sharedDemo is the demo tables (demo.orders and demo.customers) in one
// shared warehouse: the servers of newDemoServer only read them.
func sharedDemo(t testing.TB) string {
	t.Helper()
	dir, _ := sharedtables.Warehouse(t, "demo", func(ctx context.Context, cat *hadoop.Catalog) (struct{}, error) {
		return struct{}{}, demo.Write(ctx, cat)
	})
	return dir
}
