package catalog

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/sharedtables"
)

// Tables that several tests only read are written once per run of the
// package and shared (sharedtables.Warehouse); a test that changes a
// table writes its own.
func TestMain(m *testing.M) { os.Exit(sharedtables.Main(m)) }

// sharedDemo is the demo tables in one shared local warehouse, and each
// one's metadata file by "ns/name": the loopback REST catalogs
// (newRESTCatalog) serve them, and the sidecar only reads them.
func sharedDemo(t testing.TB) (string, map[string]string) {
	t.Helper()
	return sharedtables.Warehouse(t, "demo", func(ctx context.Context, cat *hadoop.Catalog) (map[string]string, error) {
		if err := demo.Write(ctx, cat); err != nil {
			return nil, err
		}
		metadata := map[string]string{}
		for _, ident := range []table.Identifier{demo.Orders, demo.Customers} {
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				return nil, err
			}
			metadata[strings.Join(ident, "/")] = tbl.MetadataLocation()
		}
		return metadata, nil
	})
}
