package splits

import (
	"context"
	"os"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/sharedtables"
)

func TestMain(m *testing.M) { os.Exit(sharedtables.Main(m)) }

// readOnlyTable returns the table build writes, as the local catalog of its
// directory, the first time name is asked for, and the same table and
// directory every time after (sharedtables.Warehouse): planners read
// metadata and manifests, never write, and the tests that share it must
// not change it. The catalog writes Snappy files
// (catalogtest.SnappyWrites): planning does not depend on the codec, and
// the tests that size splits take the files' sizes from the table.
func readOnlyTable(t *testing.T, name string, build func(context.Context, icecatalog.Catalog) (*table.Table, error)) (*table.Table, string) {
	t.Helper()
	dir, tbl := sharedtables.Warehouse(t, name, func(ctx context.Context, cat *hadoop.Catalog) (*table.Table, error) {
		return build(ctx, catalogtest.SnappyWrites(cat))
	})
	return tbl, dir
}
