package tablegen

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// AddForeignFile commits to the unpartitioned table ident, as a writer of
// the table may (Spark's add_files, ALTER TABLE … SET TBLPROPERTIES),
// a "data file" of one record at the local path, which no writer wrote
// and need not be Parquet, and sets props on the table in the same commit.
func AddForeignFile(ctx context.Context, cat catalog.Catalog, ident table.Identifier, path string, props iceberg.Properties) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("load %v: %w", ident, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, path, iceberg.ParquetFile,
		nil, nil, nil, 1, info.Size())
	if err != nil {
		return fmt.Errorf("describe %s: %w", path, err)
	}
	tx := tbl.NewTransaction()
	if len(props) > 0 {
		if err := tx.SetProperties(props); err != nil {
			return fmt.Errorf("set the properties of %v: %w", ident, err)
		}
	}
	if err := tx.AddDataFiles(ctx, []iceberg.DataFile{b.Build()}, nil, table.WithoutAutoNameMapping()); err != nil {
		return fmt.Errorf("add %s to %v: %w", path, ident, err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit %s to %v: %w", path, ident, err)
	}
	return nil
}
