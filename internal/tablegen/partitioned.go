package tablegen

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// partRow is one row of a data file of the IdentityPartitioned table: the
// partition columns region and day are not in the file.
type partRow struct {
	ID     int64    `parquet:"id,id(1)"`
	Amount *float64 `parquet:"amount,id(3)"`
	Note   *string  `parquet:"note,id(5)"`
}

// partFile is one data file of the IdentityPartitioned table and its
// partition; a nil region or day is a null partition value.
type partFile struct {
	region *string
	day    *int32
	rows   []partRow
}

var partFiles = []partFile{
	{ptr("eu"), ptr[int32](19_783), []partRow{
		{1, ptr(1.5), ptr("a")}, {2, nil, ptr("b")}, {3, ptr(-3.0), nil}, {4, ptr(4.25), ptr("d")},
	}},
	{ptr("us"), ptr[int32](19_783), []partRow{
		{5, ptr(5.0), ptr("e")}, {6, ptr(0.1), nil}, {7, nil, nil},
	}},
	{ptr("eu"), ptr[int32](19_784), []partRow{
		{8, ptr(8.0), ptr("h")}, {9, ptr(9.5), ptr("i")},
	}},
	{nil, ptr[int32](-1), []partRow{
		{10, ptr(10.0), ptr("j")}, {11, ptr(11.0), ptr("k")},
	}},
}

var partCols = []string{"id", "region", "amount", "day", "note"}

func partJSON(f partFile, r partRow) string {
	amount := jNull
	if r.Amount != nil {
		amount = jFloat(*r.Amount, 64)
	}
	return jObject(partCols, []string{jInt(&r.ID), jStr(f.region), amount, jDays(f.day), jStr(r.Note)})
}

// partLive renders the rows of every file whose ids are not in deleted.
// With nullPartition the partition columns are null, as a reader that
// ignores the partition tuple would give them.
func partLive(deleted []int64, nullPartition bool) []string {
	out := []string{}
	for _, f := range partFiles {
		if nullPartition {
			f.region, f.day = nil, nil
		}
		for _, r := range f.rows {
			gone := false
			for _, id := range deleted {
				gone = gone || id == r.ID
			}
			if !gone {
				out = append(out, partJSON(f, r))
			}
		}
	}
	return out
}

// IdentityPartitionedOracleRows are the rows iceberg-go's ReadTasks gives
// for the current snapshot of the IdentityPartitioned table: the expected
// rows with region and day null. iceberg-go v0.7.0 does not fill identity
// partition columns that a data file does not store from the partition
// tuple; it reads them as missing optional columns.
func IdentityPartitionedOracleRows() []string { return partLive([]int64{2, 6, 7}, true) }

// IdentityPartitioned writes a format-version 2 table partitioned by
// identity(region) and identity(day) whose data files do NOT store region
// or day, as Hive-style migrations leave them, and returns it with the
// expected rows of its two snapshots.
//
// Schema: id long (required, 1), region string (2), amount double (3), day
// date (4), note string (5). The data files are written with parquet-go,
// with field ids, holding id, amount and note only, and committed with
// their partition values through DataFileBuilder and AddDataFiles (no column
// statistics):
//
//  1. four data files in one snapshot: 1 (eu, 2024-03-01: ids 1-4), 2 (us,
//     2024-03-01: ids 5-7), 3 (eu, 2024-03-02: ids 8-9), 4 (null region,
//     1969-12-31: ids 10-11).
//  2. a positional delete file in partition (us, 2024-03-01): data file 2
//     pos 1 and 2 (ids 6, 7); and one in partition (eu, 2024-03-01): data
//     file 1 pos 1 (id 2).
//
// Every expected row carries its file's region and day. iceberg-go's own
// reader does not (see IdentityPartitionedOracleRows).
func IdentityPartitioned(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 5, Name: "note", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1001, Name: "day", Transform: iceberg.IdentityTransform{}},
	)
	if err := icewrite.EnsureNamespace(ctx, cat, ident); err != nil {
		return nil, err
	}
	tbl, err := cat.CreateTable(ctx, ident, sc,
		catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{formatVersionKey: "2"}))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	spec = tbl.Spec()
	if spec.NumFields() != 2 {
		return nil, fmt.Errorf("create table %s: spec has %d fields, want 2", identString(ident), spec.NumFields())
	}
	regionID, dayID := spec.Field(0).FieldID, spec.Field(1).FieldID
	partition := func(f partFile) map[int]any {
		p := map[int]any{regionID: nil, dayID: nil}
		if f.region != nil {
			p[regionID] = *f.region
		}
		if f.day != nil {
			p[dayID] = iceberg.Date(*f.day)
		}
		return p
	}
	b := &Built{}

	// 1. The data files, with their partitions.
	var files []iceberg.DataFile
	for i, f := range partFiles {
		loc := icewrite.DataPath(tbl, DataFileName(i+1))
		size, err := icewrite.WriteParquetFile(ctx, tbl, loc, f.rows)
		if err != nil {
			return nil, err
		}
		db, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, loc, iceberg.ParquetFile,
			partition(f), icewrite.PartitionLogicalTypes(tbl.Schema(), spec), nil, int64(len(f.rows)), size)
		if err != nil {
			return nil, fmt.Errorf("describe data file %s: %w", loc, err)
		}
		files = append(files, db.Build())
	}
	tx := tbl.NewTransaction()
	// The files have field ids: no name mapping is needed, so none is set.
	if err := tx.AddDataFiles(ctx, files, nil, table.WithoutAutoNameMapping()); err != nil {
		return nil, fmt.Errorf("add data files to %s: %w", identString(ident), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit data files to %s: %w", identString(ident), err)
	}
	b.record(tbl, "four data files without region and day, partitioned by both", partCols, partLive(nil, false))

	// 2. Positional deletes, each in its data file's partition.
	us, err := icewrite.WritePartitionedPositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes-us.parquet"), spec, partition(partFiles[1]),
		[]icewrite.PositionalDelete{{FilePath: files[1].FilePath(), Pos: 1}, {FilePath: files[1].FilePath(), Pos: 2}})
	if err != nil {
		return nil, err
	}
	eu, err := icewrite.WritePartitionedPositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes-eu.parquet"), spec, partition(partFiles[0]),
		[]icewrite.PositionalDelete{{FilePath: files[0].FilePath(), Pos: 1}})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{us, eu}); err != nil {
		return nil, err
	}
	b.record(tbl, "positional deletes of ids 6, 7 (us) and 2 (eu)", partCols, partLive([]int64{2, 6, 7}, false))
	return b, nil
}
