package icewrite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// A table with one data file of one row.
func Example() {
	dir, err := os.MkdirTemp("", "icewrite")
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
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl, err := icewrite.CreateTable(ctx, cat, table.Identifier{"db", "t"}, sc, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	asc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		fmt.Println(err)
		return
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl, df, err := icewrite.AppendBatch(ctx, tbl, 1, rec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(df.FilePath()), df.Count(), len(tbl.Metadata().Snapshots()))
	// Output: 00000-0-00000000-0000-4000-8000-000000000001-00001.parquet 1 1
}
