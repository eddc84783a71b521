package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/demo"
)

// A table loaded from a local warehouse, with the FileIO to read it with.
func Example() {
	dir, err := os.MkdirTemp("", "catalog")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	warehouse := filepath.Join(dir, "warehouse")
	if err := demo.WriteWarehouse(ctx, warehouse); err != nil {
		fmt.Println(err)
		return
	}

	cat, err := catalog.New(catalog.Config{Type: "local", Name: "lake", Warehouse: warehouse}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, []string{"demo", "orders"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fsys, err := tbl.FS(ctx) // the table's FileIO
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := fsys.Open(tbl.MetadataLocation())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	fmt.Println(tbl.Identifier(), "metadata opened")
	// Output: [demo orders] metadata opened
}
