package tablegen

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// RowGroupRows is the number of rows per Parquet row group in the data files
// of RowGroups.
const RowGroupRows = 20

// SplitOffsets says what a data file's manifest entry records as its split
// offsets (the byte offsets where its row groups start).
type SplitOffsets int

// The split offsets RowGroups can record.
const (
	// SplitOffsetsKept keeps what iceberg-go's writer records: one offset
	// per row group, the offset of its first page.
	SplitOffsetsKept SplitOffsets = iota
	// SplitOffsetsNone records none, as writers that leave them out do;
	// a reader learns the row groups from the Parquet footer.
	SplitOffsetsNone
	// SplitOffsetsSkewed records offsets that disagree with the file:
	// every other row group's offset is left out and the others are moved
	// a few bytes past the row group's first page.
	SplitOffsetsSkewed
)

// RowGroups writes a table whose data files hold several row groups of
// RowGroupRows rows each (MixedSchema, written with table.WriteRecords and
// WithParquetRowGroupLimit), for splitting files by row group:
//
//   - data file A (1): ids 1-200, ten row groups;
//   - data file B (2): ids 201-260, three row groups;
//   - data file C (3): ids 261-270, one row group;
//
// each appended in its own snapshot, then one snapshot of deletes: A's
// positions 0, 19, 20, 55, 100-119 (all of its sixth row group) and 199 and
// B's positions 0 and 45, as a positional delete file (formatVersion 2) or as
// deletion vectors (formatVersion 3); and an equality delete on id of 150,
// 230 and 999 (no row holds 999). RowGroupsLiveIDs are the live ids.
//
// offsets says what the manifests record as the data files' split offsets.
func RowGroups(ctx context.Context, cat catalog.Catalog, ident table.Identifier, formatVersion int, offsets SplitOffsets) (*table.Table, error) {
	if formatVersion != 2 && formatVersion != 3 {
		return nil, fmt.Errorf("%w: RowGroups writes format version 2 or 3, not %d", ErrInvalidArgument, formatVersion)
	}
	tbl, err := icewrite.CreateTable(ctx, cat, ident, MixedSchema(), formatVersion)
	if err != nil {
		return nil, err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	rows := genMixedRows(1, 270)
	var files []iceberg.DataFile
	for i, ids := range [][2]int64{{1, 200}, {201, 260}, {261, 270}} {
		batch := mixedBatch(sc, rowsByID(rows, ids[0], ids[1]))
		df, err := icewrite.WriteDataFile(ctx, tbl, i+1, sc, func(yield func(arrow.RecordBatch, error) bool) {
			yield(batch, nil)
		}, table.WithParquetRowGroupLimit(RowGroupRows))
		if err != nil {
			return nil, err
		}
		if want := (ids[1] - ids[0] + RowGroupRows) / RowGroupRows; int64(len(df.SplitOffsets())) != want {
			return nil, fmt.Errorf("write data file %d of %s: %d split offsets, want one per row group (%d)",
				i+1, identString(ident), len(df.SplitOffsets()), want)
		}
		if df, err = withSplitOffsets(df, offsets); err != nil {
			return nil, err
		}
		if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{df}, nil); err != nil {
			return nil, err
		}
		files = append(files, df)
	}

	a, b := files[0].FilePath(), files[1].FilePath()
	posA := []int64{0, 19, 20, 55}
	for p := int64(100); p < 120; p++ {
		posA = append(posA, p)
	}
	posA = append(posA, 199)
	posB := []int64{0, 45}

	var deletes []iceberg.DataFile
	if formatVersion == 2 {
		var pd []icewrite.PositionalDelete
		for _, p := range posA {
			pd = append(pd, icewrite.PositionalDelete{FilePath: a, Pos: p})
		}
		for _, p := range posB {
			pd = append(pd, icewrite.PositionalDelete{FilePath: b, Pos: p})
		}
		pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes.parquet"), pd)
		if err != nil {
			return nil, err
		}
		deletes = append(deletes, pos)
	} else {
		wfs, err := icewrite.WriteFS(ctx, tbl)
		if err != nil {
			return nil, err
		}
		meta := tbl.Metadata()
		w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
		for _, f := range []struct {
			path string
			pos  []int64
		}{{a, posA}, {b, posB}} {
			if err := w.Add(f.path, f.pos, 0, nil); err != nil {
				return nil, fmt.Errorf("add deletion vector for %s: %w", f.path, err)
			}
		}
		loc := icewrite.DataPath(tbl, "dv.puffin")
		dvs, err := w.Flush(ctx, loc)
		if err != nil {
			return nil, fmt.Errorf("write deletion vector file %s: %w", loc, err)
		}
		deletes = append(deletes, dvs...)
	}
	eq, err := eqDeletes(ctx, tbl, []int{mixedID}, []any{int64(150)}, []any{int64(230)}, []any{int64(999)})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, nil, append(deletes, eq...))
}

// RowGroupsVariant is one way of writing RowGroups' table: a format
// version, and what its manifests record of the split offsets.
type RowGroupsVariant struct {
	// Name is snake_case, usable as a table name and a subtest name.
	Name          string
	FormatVersion int
	Offsets       SplitOffsets
}

// RowGroupsVariants are the variants split planning is tested on: version
// 2 with each kind of split offsets, and version 3 (deletion vectors) with
// offsets kept and with none.
func RowGroupsVariants() []RowGroupsVariant {
	return []RowGroupsVariant{
		{"v2_split_offsets", 2, SplitOffsetsKept},
		{"v2_footer", 2, SplitOffsetsNone},
		{"v2_skewed_split_offsets", 2, SplitOffsetsSkewed},
		{"v3_split_offsets", 3, SplitOffsetsKept},
		{"v3_footer", 3, SplitOffsetsNone},
	}
}

// RowGroupsLiveIDs are the ids of the live rows of a RowGroups table, in
// ascending order.
func RowGroupsLiveIDs() []int64 {
	deleted := []int64{1, 20, 21, 56, 200, 201, 246, 150, 230}
	for id := int64(101); id <= 120; id++ {
		deleted = append(deleted, id)
	}
	return slices.DeleteFunc(idRange(1, 270), func(id int64) bool { return slices.Contains(deleted, id) })
}

// withSplitOffsets describes data file df again with the split offsets that
// offsets asks for; every other field is kept.
func withSplitOffsets(df iceberg.DataFile, offsets SplitOffsets) (iceberg.DataFile, error) {
	if offsets == SplitOffsetsKept {
		return df, nil
	}
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData,
		df.FilePath(), df.FileFormat(), nil, nil, nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("describe data file %s: %w", df.FilePath(), err)
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues())
	if offsets == SplitOffsetsSkewed {
		var skewed []int64
		for i, o := range df.SplitOffsets() {
			if i%2 == 0 {
				skewed = append(skewed, o+3)
			}
		}
		b.SplitOffsets(skewed)
	}
	return b.Build(), nil
}
