package splits_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// A plan of the demo orders table: one signed token per split, on the row
// path since the table has delete files.
func Example() {
	dir, err := os.MkdirTemp("", "splits")
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

	signer, err := token.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		fmt.Println(err)
		return
	}
	cat, err := catalog.New(catalog.Config{Type: "local", Name: "lake", Warehouse: warehouse}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.Close()
	p, err := splits.NewPlanner(cat, signer, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := p.Plan(ctx, splits.Request{Table: "demo.orders"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Table, plan.Path, len(plan.Splits), "split")
	for _, s := range plan.Splits {
		fmt.Println(s.Kind, s.Token != "")
	}
	// Output:
	// demo.orders v2 1 split
	// rows true
}
