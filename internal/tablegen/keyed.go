package tablegen

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// The keyed tables (Lineage, SpecChange, UpgradedV1, DefaultAfterDelete)
// hold rows of id long (required, 1) and cat string (2), written with
// parquet-go and described with iceberg-go's DataFileBuilder, so that each
// file's partition (and the spec it was written under) is the builder's
// choice, whatever the current spec.

// keyedRow is one row of a keyed table.
type keyedRow struct {
	ID  int64   `parquet:"id,id(1)"`
	Cat *string `parquet:"cat,id(2),optional"`
}

// keyedID is an equality delete's row on id.
type keyedID struct {
	ID int64 `parquet:"id,id(1)"`
}

// keyedSchema is the schema of the keyed tables.
func keyedSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "cat", Type: iceberg.PrimitiveTypes.String},
	)
}

// keyedRows are the rows of the ids from..to, each in category cat.
func keyedRows(cat string, from, to int64) []keyedRow {
	var out []keyedRow
	for id := from; id <= to; id++ {
		out = append(out, keyedRow{ID: id, Cat: &cat})
	}
	return out
}

// keyedJSON is a row as read, with extra members (pre-encoded, each
// `"name":value`) after the table's columns.
func keyedJSON(r keyedRow, extra ...string) string {
	s := `{"id":` + strconv.FormatInt(r.ID, 10) + `,"cat":` + jStr(r.Cat)
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

// writeKeyed writes rows as the file name under tbl's data directory, of
// the given content, partition spec and partition (by partition field id;
// nil for an unpartitioned spec), and describes it; eqIDs are an equality
// delete file's field ids.
func writeKeyed[T any](ctx context.Context, tbl *table.Table, name string, content iceberg.ManifestEntryContent,
	spec iceberg.PartitionSpec, partition map[int]any, rows []T, eqIDs ...int) (iceberg.DataFile, error) {
	loc := icewrite.DataPath(tbl, name)
	size, err := icewrite.WriteParquetFile(ctx, tbl, loc, rows)
	if err != nil {
		return nil, err
	}
	if partition == nil {
		partition = map[int]any{}
	}
	db, err := iceberg.NewDataFileBuilder(spec, content, loc, iceberg.ParquetFile,
		partition, icewrite.PartitionLogicalTypes(tbl.Schema(), spec), nil, int64(len(rows)), size)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", loc, err)
	}
	if len(eqIDs) > 0 {
		db.EqualityFieldIDs(eqIDs)
	}
	return db.Build(), nil
}

// eqByID writes an equality delete file on id of the given ids.
func eqByID(ctx context.Context, tbl *table.Table, name string, spec iceberg.PartitionSpec, partition map[int]any, ids ...int64) (iceberg.DataFile, error) {
	rows := make([]keyedID, len(ids))
	for i, id := range ids {
		rows[i] = keyedID{ID: id}
	}
	return writeKeyed(ctx, tbl, name, iceberg.EntryContentEqDeletes, spec, partition, rows, 1)
}

// evolveSpec applies change to tbl's partition spec in its own commit and
// returns the table and its new spec.
func evolveSpec(ctx context.Context, tbl *table.Table, change func(*table.UpdateSpec)) (*table.Table, iceberg.PartitionSpec, error) {
	tx := tbl.NewTransaction()
	u := tx.UpdateSpec(true)
	change(u)
	if err := u.Commit(); err != nil {
		return nil, iceberg.PartitionSpec{}, fmt.Errorf("stage spec update on %s: %w", identString(tbl.Identifier()), err)
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		return nil, iceberg.PartitionSpec{}, fmt.Errorf("commit spec update on %s: %w", identString(tbl.Identifier()), err)
	}
	return out, out.Spec(), nil
}

// createKeyed creates a keyed table of the format version, partitioned by
// spec (unpartitioned when it is nil), and returns it with its spec as
// the catalog assigned its field ids.
func createKeyed(ctx context.Context, cat catalog.Catalog, ident table.Identifier, spec *iceberg.PartitionSpec, version int) (*table.Table, iceberg.PartitionSpec, error) {
	if err := icewrite.EnsureNamespace(ctx, cat, ident); err != nil {
		return nil, iceberg.PartitionSpec{}, err
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(iceberg.Properties{formatVersionKey: strconv.Itoa(version)})}
	if spec != nil {
		opts = append(opts, catalog.WithPartitionSpec(spec))
	}
	tbl, err := cat.CreateTable(ctx, ident, keyedSchema(), opts...)
	if err != nil {
		return nil, iceberg.PartitionSpec{}, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	return tbl, tbl.Spec(), nil
}
