package e2e_test

import (
	"context"
	"os"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/sharedtables"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

func TestMain(m *testing.M) { os.Exit(sharedtables.Main(m)) }

// sharedAllTypes is the all-types table, db.all, written once per run of
// the package in a shared warehouse of its own, which tests only read.
func sharedAllTypes(t testing.TB) (string, *tablegen.Built) {
	t.Helper()
	return sharedtables.Warehouse(t, "all_types", func(ctx context.Context, c *hadoop.Catalog) (*tablegen.Built, error) {
		return tablegen.AllTypes(ctx, c, table.Identifier{"db", "all"})
	})
}
