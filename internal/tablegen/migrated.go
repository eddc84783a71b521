package tablegen

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// migratedRow is one row of a data file of the Migrated table as a foreign
// writer left it: Parquet columns named after the table's first schema,
// with no field ids.
type migratedRow struct {
	ID       int64    `parquet:"id"`
	CustName *string  `parquet:"cust_name"`
	Qty      *int32   `parquet:"qty"`
	Amount   *float64 `parquet:"amount"`
	Day      *int32   `parquet:"day,date"`
}

var (
	migratedM1 = []migratedRow{
		{1, ptr("ana"), ptr[int32](3), ptr(10.5), ptr[int32](19_783)},
		{2, ptr("bob"), nil, ptr(-0.25), ptr[int32](-1)},
		{3, nil, ptr[int32](7), nil, nil},
		{4, ptr("émile"), ptr[int32](-2), ptr(1e-7), ptr[int32](0)},
		{5, ptr("dan"), ptr[int32](2147483647), ptr(3.0), ptr[int32](20_000)},
	}
	migratedM2 = []migratedRow{
		{6, ptr("eve"), ptr[int32](1), ptr(0.1), ptr[int32](19_784)},
		{7, ptr("frank"), ptr[int32](0), nil, ptr[int32](19_785)},
		{8, nil, nil, ptr(99.99), nil},
		{9, ptr("gina"), ptr[int32](-2147483648), ptr(-1e10), ptr[int32](-719_162)},
	}
	// migratedC is written by iceberg-go, with field ids, after the rename.
	migratedC = []migratedRow{
		{10, ptr("hal"), ptr[int32](5), ptr(1.25), ptr[int32](19_800)},
		{11, nil, ptr[int32](6), ptr(2.5), nil},
	}
)

// migratedCols are the column names before and after the rename.
var migratedCols = [][]string{
	{"id", "cust_name", "qty", "amount", "day"},
	{"id", "customer", "qty", "amount", "day"},
}

func migratedJSON(r migratedRow, v int) string {
	amount := jNull
	if r.Amount != nil {
		amount = jFloat(*r.Amount, 64)
	}
	return jObject(migratedCols[v], []string{jInt(&r.ID), jStr(r.CustName), jInt(r.Qty), amount, jDays(r.Day)})
}

func migratedLive(v int, live []int64, groups ...[]migratedRow) []string {
	out := []string{}
	for _, g := range groups {
		for _, r := range g {
			for _, id := range live {
				if r.ID == id {
					out = append(out, migratedJSON(r, v))
				}
			}
		}
	}
	return out
}

// Migrated writes a format-version 2 table as a migration leaves one: two
// Parquet data files written with parquet-go WITHOUT field ids and imported
// with iceberg-go's Transaction.AddFiles, and returns it with the expected
// rows of each of its three snapshots.
//
// Schema 0: id long (required, 1), cust_name string (2), qty int (3), amount
// double (4), day date (5); schema 1 renames cust_name to customer.
//
//  1. AddFiles of M1 (data file 1: ids 1-5) and M2 (data file 2: ids 6-9),
//     neither with field ids. AddFiles sets schema.name-mapping.default from
//     the schema (iceberg-go does that itself when the table has none).
//  2. (after the rename, with table.WithNameMapping so that the mapping of
//     field 2 becomes ["cust_name", "customer"]: the files still say
//     cust_name) a positional delete file: M1 pos 1 (id 2), M2 pos 0 and 3
//     (ids 6 and 9).
//  3. append C (data file 3, written by iceberg-go with field ids under
//     schema 1): ids 10-11.
//
// Live ids: 1-9; 1,3,4,5,7,8; 1,3,4,5,7,8,10,11.
//
// With nameMapping false, a last metadata commit (no snapshot) removes
// schema.name-mapping.default: nothing then says which column of M1 and M2
// is which field, and Built.Unreadable is set. iceberg-go's ReadTasks fails on
// every snapshot with an "invalid schema: cannot convert id … to
// Iceberg field, missing field_id" error; C alone would still be readable.
func Migrated(ctx context.Context, cat catalog.Catalog, ident table.Identifier, nameMapping bool) (*Built, error) {
	sc0 := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "cust_name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "day", Type: iceberg.PrimitiveTypes.Date},
	)
	tbl, err := icewrite.CreateTable(ctx, cat, ident, sc0, 2)
	if err != nil {
		return nil, err
	}
	b := &Built{Unreadable: !nameMapping}

	// 1. Import the foreign files.
	m1, m2 := icewrite.DataPath(tbl, DataFileName(1)), icewrite.DataPath(tbl, DataFileName(2))
	for _, f := range []struct {
		path string
		rows []migratedRow
	}{{m1, migratedM1}, {m2, migratedM2}} {
		if _, err := icewrite.WriteParquetFile(ctx, tbl, f.path, f.rows); err != nil {
			return nil, err
		}
	}
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, []string{m1, m2}, nil, false); err != nil {
		return nil, fmt.Errorf("add files to %s: %w", identString(ident), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit add files to %s: %w", identString(ident), err)
	}
	if tbl.NameMapping() == nil {
		return nil, fmt.Errorf("add files to %s: iceberg-go set no name mapping", identString(ident))
	}
	b.record(tbl, "AddFiles of M1 (ids 1-5) and M2 (ids 6-9), no field ids", migratedCols[0],
		migratedLive(0, idRange(1, 9), migratedM1, migratedM2))

	// Rename, keeping the old name in the mapping.
	if tbl, err = updateSchema(ctx, tbl, func(u *table.UpdateSchema) {
		u.RenameColumn([]string{"cust_name"}, "customer")
	}, table.WithNameMapping(tbl.NameMapping())); err != nil {
		return nil, err
	}

	// 2. Positional deletes in the imported files.
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes.parquet"), []icewrite.PositionalDelete{
		{FilePath: m1, Pos: 1}, {FilePath: m2, Pos: 0}, {FilePath: m2, Pos: 3},
	})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{pos}); err != nil {
		return nil, err
	}
	b.record(tbl, "positional delete of M1 pos 1, M2 pos 0 and 3, after renaming cust_name to customer", migratedCols[1],
		migratedLive(1, []int64{1, 3, 4, 5, 7, 8}, migratedM1, migratedM2))

	// 3. A file with field ids, in the renamed schema.
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	for _, r := range migratedC {
		rb.Field(0).(*array.Int64Builder).Append(r.ID)
		appendOpt(rb.Field(1).(*array.StringBuilder), r.CustName, func(v string) string { return v })
		appendOpt(rb.Field(2).(*array.Int32Builder), r.Qty, func(v int32) int32 { return v })
		appendOpt(rb.Field(3).(*array.Float64Builder), r.Amount, func(v float64) float64 { return v })
		appendOpt(rb.Field(4).(*array.Date32Builder), r.Day, func(v int32) arrow.Date32 { return arrow.Date32(v) })
	}
	if tbl, _, err = icewrite.AppendBatch(ctx, tbl, 3, rb.NewRecordBatch()); err != nil {
		return nil, err
	}
	b.record(tbl, "append C (ids 10-11) with field ids", migratedCols[1],
		migratedLive(1, []int64{1, 3, 4, 5, 7, 8, 10, 11}, migratedM1, migratedM2, migratedC))

	if !nameMapping {
		tx := tbl.NewTransaction()
		if err := tx.RemoveProperties([]string{table.DefaultNameMappingKey}); err != nil {
			return nil, fmt.Errorf("stage removal of the name mapping of %s: %w", identString(ident), err)
		}
		if b.Table, err = tx.Commit(ctx); err != nil {
			return nil, fmt.Errorf("remove the name mapping of %s: %w", identString(ident), err)
		}
	}
	return b, nil
}
