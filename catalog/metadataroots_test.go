package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

// TestTableMetadataMakesNoRoot: a writer of a served table sets
// write.data.path=/ (or not) and commits a "data file" whose path is the
// sidecar's token key. Roots come from the operator only, never from the
// table's own metadata: planning the table for raw files is refused with
// fault.ErrForbiddenLocation (403 forbidden_location) naming the setting
// to change, and the error holds no byte of the key. handlers'
// TestFilesServesOnlyParquet holds /files to the same for a file inside
// the table that is not Parquet.
func TestTableMetadataMakesNoRoot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props iceberg.Properties
	}{
		{"write.data.path=/", iceberg.Properties{"write.data.path": "/"}},
		{"write.data.path=file:///", iceberg.Properties{"write.data.path": "file:///"}},
		{"no property, only the file", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			_, warehouse, key := demoLake(t)
			if err := tablegen.AddForeignFile(ctx, catalogtest.Local(t, warehouse), demo.Customers, key, tc.props); err != nil {
				t.Fatal(err)
			}
			s := newServed(t, catalog.Config{Type: "local", Warehouse: warehouse})
			p, err := s.Planner.Plan(ctx, splits.Request{Table: "demo.customers", Mode: splits.ModeFiles})
			if err == nil {
				t.Fatalf("planned a table whose data file is the token key: %s", p)
			}
			if strings.Contains(err.Error(), "secret-material") {
				t.Fatalf("the refusal holds the key: %v", err)
			}
			if !errors.Is(err, fault.ErrForbiddenLocation) || errors.Is(err, fault.ErrTableNotFound) {
				t.Fatalf("plan: %v, want ErrForbiddenLocation", err)
			}
			if !strings.Contains(err.Error(), "--data-root") {
				t.Fatalf("the refusal names no setting to change: %v", err)
			}
		})
	}
}
