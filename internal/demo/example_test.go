package demo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/iceberg-go/catalog/hadoop"

	"github.com/druidiceberg/sidecar/internal/demo"
)

// The demo warehouse the sidecar serves with --demo.
func Example() {
	dir, err := os.MkdirTemp("", "demo")
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
	if err := demo.Write(ctx, cat); err != nil {
		fmt.Println(err)
		return
	}
	for _, ident := range []([]string){demo.Orders, demo.Customers} {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(tbl.Identifier(), tbl.Metadata().Version())
	}
	// Output:
	// [demo orders] 2
	// [demo customers] 2
}
