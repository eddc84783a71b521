package tablegen_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// A table of 1,000 rows in one data file, 1% of them deleted by position
// and 1% by equality, read back by the oracle.
func Example() {
	dir, err := os.MkdirTemp("", "tablegen")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cat, err := hadoop.NewCatalog("local", filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.Close()
	tbl, err := tablegen.Bench(ctx, cat, table.Identifier{"bench", "t"}, 1000, 1, 0.01, 0.01)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rows), "live rows")
	// Output: 980 live rows
}
