package tablegen

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// Scenario is one synthetic table in MixedSchema whose live rows are known:
// its Build writes it with iceberg-go and says nothing about the result, the
// other fields say what the result must be.
type Scenario struct {
	// Name is short and snake_case, usable as a table name and a subtest name.
	Name string
	// Doc says what the table holds and why.
	Doc string
	// FormatVersion is the table's Iceberg format version.
	FormatVersion int
	// LiveIDs are the id values of the live rows of the current snapshot in
	// ascending order, which is also the order in which the oracle returns
	// them (data files sort in write order, ids ascend in write order).
	LiveIDs []int64
	// Plan is what PlanFiles on the current snapshot attaches to each data
	// file, keyed by the data file's number (DataFileName). Every data file of
	// the snapshot has an entry.
	Plan map[int]Attached
	// Build creates the table ident in cat and returns it as last committed.
	Build func(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error)

	rows []mixedRow // every row ever written, live or not
}

// Attached lists the delete files PlanFiles attaches to one data file.
type Attached struct {
	// Positional are the base names of the positional delete files.
	Positional []string
	// Equality are the equality field ids of each equality delete file.
	Equality [][]int
	// DeletionVectors are the base names of the puffin files that hold the
	// file's deletion vector.
	DeletionVectors []string
}

// DataFileName is the base name of the n-th data file (1-based, in write
// order) a builder in this package writes into a table: the builders write
// data files with icewrite, so it is icewrite.DataFileName.
func DataFileName(n int) string { return icewrite.DataFileName(n) }

// ScenarioNamed is the scenario of that name (Scenarios); a name of none
// fails t.
func ScenarioNamed(t testing.TB, name string) Scenario {
	t.Helper()
	for _, s := range Scenarios() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %s", name)
	return Scenario{}
}

// BuildScenarios builds every scenario (Scenarios) in cat, each as
// scenarios.<name>, and returns the tables by name.
func BuildScenarios(ctx context.Context, cat catalog.Catalog) (map[string]*table.Table, error) {
	out := map[string]*table.Table{}
	for _, sc := range Scenarios() {
		tbl, err := sc.Build(ctx, cat, table.Identifier{"scenarios", sc.Name})
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		out[sc.Name] = tbl
	}
	return out, nil
}

// Scenarios returns the scenario tables, each in its own table. The data
// file numbers below are write order; A, B, C are data files 1, 2, 3.
func Scenarios() []Scenario {
	return []Scenario{
		{
			Name:          "no_deletes",
			Doc:           "two appends (A: ids 1-8, B: ids 9-14), no delete files",
			FormatVersion: 2,
			LiveIDs:       idRange(1, 14),
			Plan:          map[int]Attached{1: {}, 2: {}},
			Build:         buildNoDeletes,
			rows:          genMixedRows(1, 14),
		},
		{
			Name: "positional_multi_file",
			Doc: "three appends (A: 1-5, B: 6-10, C: 11-15); one snapshot with two positional delete files: " +
				"pos-multi names A (pos 0, 4), C (pos 2) and a path that is no data file (pos 1, 2, 3); its file_path " +
				"bounds span B, so PlanFiles attaches it to B too, which it names no row of; pos-single names only B (pos 4)",
			FormatVersion: 2,
			LiveIDs:       []int64{2, 3, 4, 6, 7, 8, 9, 11, 12, 14, 15},
			Plan: map[int]Attached{
				1: {Positional: []string{"pos-multi.parquet"}},
				2: {Positional: []string{"pos-multi.parquet", "pos-single.parquet"}},
				3: {Positional: []string{"pos-multi.parquet"}},
			},
			Build: buildPositionalMultiFile,
			rows:  genMixedRows(1, 15),
		},
		{
			Name: "equality_one_column",
			Doc: "two appends (A: 1-6, B: 7-12); one snapshot with two equality delete files: one on name " +
				`("bob", which ids 1 and 9 hold, and "nobody", which no row holds), one on price (12.34, which ids 3 and 11 hold)`,
			FormatVersion: 2,
			LiveIDs:       []int64{2, 4, 5, 6, 7, 8, 10, 12},
			Plan: map[int]Attached{
				1: {Equality: [][]int{{mixedName}, {mixedPrice}}},
				2: {Equality: [][]int{{mixedName}, {mixedPrice}}},
			},
			Build: buildEqualityOneColumn,
			rows:  equalityOneColumnRows(),
		},
		{
			Name: "equality_two_columns_nulls",
			Doc: "two appends (A: 1-7, B: 8-10); one equality delete file on (name, qty) with the keys " +
				`("ana", null), (null, 2), (null, null), ("bob", 2): a null key deletes rows whose column is null, and only those`,
			FormatVersion: 2,
			LiveIDs:       []int64{2, 4, 7, 10},
			Plan: map[int]Attached{
				1: {Equality: [][]int{{mixedName, mixedQty}}},
				2: {Equality: [][]int{{mixedName, mixedQty}}},
			},
			Build: buildEqualityTwoColumnsNulls,
			rows:  equalityTwoColumnsRows(),
		},
		{
			Name: "equality_before_append",
			Doc: `append A (1-5, ids 2 and 4 named "carol"); equality delete on name "carol"; append B (6-9, id 7 named "carol"): ` +
				"the delete's sequence number is below B's, so id 7 stays",
			FormatVersion: 2,
			LiveIDs:       []int64{1, 3, 5, 6, 7, 8, 9},
			Plan: map[int]Attached{
				1: {Equality: [][]int{{mixedName}}},
				2: {},
			},
			Build: buildEqualityBeforeAppend,
			rows:  equalityBeforeAppendRows(),
		},
		{
			Name: "positional_and_equality",
			Doc: "two appends (A: 1-6, B: 7-12); one snapshot with a positional delete file (A pos 0, A pos 2, B pos 5) " +
				"and an equality delete file on id (3, also deleted by position, 8, and 100, which no row holds)",
			FormatVersion: 2,
			LiveIDs:       []int64{2, 4, 5, 6, 7, 9, 10, 11},
			Plan: map[int]Attached{
				1: {Positional: []string{"pos-deletes.parquet"}, Equality: [][]int{{mixedID}}},
				2: {Positional: []string{"pos-deletes.parquet"}, Equality: [][]int{{mixedID}}},
			},
			Build: buildPositionalAndEquality,
			rows:  genMixedRows(1, 12),
		},
		{
			Name: "all_deleted",
			Doc: "two appends (A: 1-4, B: 5-7); one snapshot with a positional delete file naming every row of A " +
				"and an equality delete file on id naming every row of B; no live rows",
			FormatVersion: 2,
			LiveIDs:       []int64{},
			Plan: map[int]Attached{
				// id bounds let PlanFiles prune the equality delete from A.
				1: {Positional: []string{"pos-deletes.parquet"}},
				2: {Equality: [][]int{{mixedID}}},
			},
			Build: buildAllDeleted,
			rows:  genMixedRows(1, 7),
		},
		{
			Name: "equality_same_snapshot",
			Doc: `append A (1-5, id 3 named "dan"); then one snapshot adds data file B (6-8, id 7 named "dan"), ` +
				`an equality delete on name "dan" and a positional delete of B pos 0: the equality delete applies to A only ` +
				"(same sequence number as B), the positional delete applies to B",
			FormatVersion: 2,
			LiveIDs:       []int64{1, 2, 4, 5, 7, 8},
			Plan: map[int]Attached{
				1: {Equality: [][]int{{mixedName}}},
				2: {Positional: []string{"pos-deletes.parquet"}},
			},
			Build: buildEqualitySameSnapshot,
			rows:  equalitySameSnapshotRows(),
		},
		{
			Name: "deletion_vector_v3",
			Doc: "format-version 3; three appends (A: 1-6, B: 7-12, C: 13-15); dv-1.puffin holds deletion vectors for A " +
				"(pos 1, 5) and B (pos 0); then dv-2.puffin replaces B's vector with one for pos 0 and 3 (the old one is " +
				"removed in the same snapshot); C has none",
			FormatVersion: 3,
			LiveIDs:       []int64{1, 3, 4, 5, 8, 9, 11, 12, 13, 14, 15},
			Plan: map[int]Attached{
				1: {DeletionVectors: []string{"dv-1.puffin"}},
				2: {DeletionVectors: []string{"dv-2.puffin"}},
				3: {},
			},
			Build: buildDeletionVectorV3,
			rows:  genMixedRows(1, 15),
		},
	}
}

func idRange(from, to int64) []int64 {
	ids := make([]int64, 0, to-from+1)
	for id := from; id <= to; id++ {
		ids = append(ids, id)
	}
	return ids
}

// mixedTable creates ident in MixedSchema and appends each group of rows as
// its own data file, in its own snapshot. It returns the table and the data
// files in order.
func mixedTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, formatVersion int, groups ...[]mixedRow) (*table.Table, []iceberg.DataFile, error) {
	tbl, err := icewrite.CreateTable(ctx, cat, ident, MixedSchema(), formatVersion)
	if err != nil {
		return nil, nil, err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, nil, err
	}
	files := make([]iceberg.DataFile, 0, len(groups))
	for i, rows := range groups {
		var df iceberg.DataFile
		tbl, df, err = icewrite.AppendBatch(ctx, tbl, i+1, mixedBatch(sc, rows))
		if err != nil {
			return nil, nil, err
		}
		files = append(files, df)
	}
	return tbl, files, nil
}

// rowsByID picks the rows with ids from..to out of rows.
func rowsByID(rows []mixedRow, from, to int64) []mixedRow {
	return slices.DeleteFunc(slices.Clone(rows), func(r mixedRow) bool { return r.id < from || r.id > to })
}

// keyBatch builds a one- or two-column equality delete key batch; each key is
// one value per column, nil for null.
func keyBatch(tbl *table.Table, fieldIDs []int, keys [][]any) (arrow.RecordBatch, error) {
	sc, err := icewrite.DeleteKeySchema(tbl, fieldIDs...)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	// The key columns come in schema order, which need not be fieldIDs order.
	col := make([]int, len(fieldIDs))
	for i, f := range sc.Fields() {
		id, err := arrowFieldID(f)
		if err != nil {
			return nil, err
		}
		j := slices.Index(fieldIDs, id)
		if j < 0 {
			return nil, fmt.Errorf("%w: delete key column %s is not among field ids %v", ErrInvalidArgument, f.Name, fieldIDs)
		}
		col[j] = i
	}
	for _, key := range keys {
		if len(key) != len(fieldIDs) {
			return nil, fmt.Errorf("%w: equality delete key %v has %d values, want %d", ErrInvalidArgument, key, len(key), len(fieldIDs))
		}
		for j, v := range key {
			i := col[j]
			switch v := v.(type) {
			case nil:
				b.Field(i).AppendNull()
			case int64:
				b.Field(i).(*array.Int64Builder).Append(v)
			case int32:
				b.Field(i).(*array.Int32Builder).Append(v)
			case string:
				b.Field(i).(*array.StringBuilder).Append(v)
			case decimal128.Num:
				b.Field(i).(*array.Decimal128Builder).Append(v)
			default:
				return nil, fmt.Errorf("%w: equality delete key value of type %T", ErrInvalidArgument, v)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// eqDeletes writes one equality delete file on fieldIDs holding keys.
func eqDeletes(ctx context.Context, tbl *table.Table, fieldIDs []int, keys ...[]any) ([]iceberg.DataFile, error) {
	batch, err := keyBatch(tbl, fieldIDs, keys)
	if err != nil {
		return nil, err
	}
	return icewrite.WriteEqualityDeletes(ctx, tbl, fieldIDs, batch)
}

func buildNoDeletes(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := genMixedRows(1, 14)
	tbl, _, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 8), rowsByID(rows, 9, 14))
	return tbl, err
}

func buildPositionalMultiFile(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := genMixedRows(1, 15)
	tbl, files, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 5), rowsByID(rows, 6, 10), rowsByID(rows, 11, 15))
	if err != nil {
		return nil, err
	}
	a, b, c := files[0].FilePath(), files[1].FilePath(), files[2].FilePath()
	// "ghost" sorts after every 00000-… data file name, so the bounds of
	// pos-multi run from A to the ghost and contain B.
	ghost := icewrite.DataPath(tbl, "ghost.parquet")
	multi, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-multi.parquet"), []icewrite.PositionalDelete{
		{FilePath: ghost, Pos: 3}, {FilePath: c, Pos: 2}, {FilePath: a, Pos: 4}, {FilePath: ghost, Pos: 1}, {FilePath: a, Pos: 0}, {FilePath: ghost, Pos: 2},
	})
	if err != nil {
		return nil, err
	}
	single, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-single.parquet"), []icewrite.PositionalDelete{{FilePath: b, Pos: 4}})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{multi, single})
}

func equalityOneColumnRows() []mixedRow {
	rows := renamed(genMixedRows(1, 12), "bob", 1, 9)
	for i := range rows {
		switch {
		case rows[i].id == 3 || rows[i].id == 11:
			rows[i].price = ptr(int64(1234))
		case rows[i].price != nil && *rows[i].price == 1234:
			rows[i].price = ptr(int64(1235))
		}
	}
	return rows
}

func buildEqualityOneColumn(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := equalityOneColumnRows()
	tbl, _, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 6), rowsByID(rows, 7, 12))
	if err != nil {
		return nil, err
	}
	byName, err := eqDeletes(ctx, tbl, []int{mixedName}, []any{"bob"}, []any{"nobody"})
	if err != nil {
		return nil, err
	}
	byPrice, err := eqDeletes(ctx, tbl, []int{mixedPrice}, []any{decimal128.FromI64(1234)})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, nil, append(byName, byPrice...))
}

func equalityTwoColumnsRows() []mixedRow {
	keys := map[int64]struct {
		name *string
		qty  *int32
	}{
		1:  {ptr("ana"), nil},             // deleted by ("ana", null)
		2:  {ptr("ana"), ptr[int32](1)},   // kept: qty is not null
		3:  {nil, ptr[int32](2)},          // deleted by (null, 2)
		4:  {nil, ptr[int32](3)},          // kept
		5:  {nil, nil},                    // deleted by (null, null)
		6:  {ptr("bob"), ptr[int32](2)},   // deleted by ("bob", 2)
		7:  {ptr("bob"), nil},             // kept: no ("bob", null) key
		8:  {ptr("ana"), nil},             // deleted by ("ana", null)
		9:  {nil, nil},                    // deleted by (null, null)
		10: {ptr("carol"), ptr[int32](2)}, // kept
	}
	rows := genMixedRows(1, 10)
	for i := range rows {
		k := keys[rows[i].id]
		rows[i].name, rows[i].qty = k.name, k.qty
	}
	return rows
}

func buildEqualityTwoColumnsNulls(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := equalityTwoColumnsRows()
	tbl, _, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 7), rowsByID(rows, 8, 10))
	if err != nil {
		return nil, err
	}
	eq, err := eqDeletes(ctx, tbl, []int{mixedName, mixedQty},
		[]any{"ana", nil}, []any{nil, int32(2)}, []any{nil, nil}, []any{"bob", int32(2)})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, nil, eq)
}

// renamed sets the name of the rows with the given ids to name and makes
// sure no other row carries it.
func renamed(rows []mixedRow, name string, ids ...int64) []mixedRow {
	for i := range rows {
		switch {
		case slices.Contains(ids, rows[i].id):
			rows[i].name = ptr(name)
		case rows[i].name != nil && *rows[i].name == name:
			rows[i].name = ptr(name + "-other")
		}
	}
	return rows
}

func equalityBeforeAppendRows() []mixedRow { return renamed(genMixedRows(1, 9), "carol", 2, 4, 7) }

func buildEqualityBeforeAppend(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := equalityBeforeAppendRows()
	tbl, _, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 5))
	if err != nil {
		return nil, err
	}
	eq, err := eqDeletes(ctx, tbl, []int{mixedName}, []any{"carol"})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, eq); err != nil {
		return nil, err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	tbl, _, err = icewrite.AppendBatch(ctx, tbl, 2, mixedBatch(sc, rowsByID(rows, 6, 9)))
	return tbl, err
}

func buildPositionalAndEquality(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := genMixedRows(1, 12)
	tbl, files, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 6), rowsByID(rows, 7, 12))
	if err != nil {
		return nil, err
	}
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes.parquet"), []icewrite.PositionalDelete{
		{FilePath: files[0].FilePath(), Pos: 0}, {FilePath: files[0].FilePath(), Pos: 2}, {FilePath: files[1].FilePath(), Pos: 5},
	})
	if err != nil {
		return nil, err
	}
	eq, err := eqDeletes(ctx, tbl, []int{mixedID}, []any{int64(3)}, []any{int64(8)}, []any{int64(100)})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, nil, append([]iceberg.DataFile{pos}, eq...))
}

func buildAllDeleted(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := genMixedRows(1, 7)
	tbl, files, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 4), rowsByID(rows, 5, 7))
	if err != nil {
		return nil, err
	}
	a := files[0].FilePath()
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes.parquet"), []icewrite.PositionalDelete{
		{FilePath: a, Pos: 0}, {FilePath: a, Pos: 1}, {FilePath: a, Pos: 2}, {FilePath: a, Pos: 3},
	})
	if err != nil {
		return nil, err
	}
	eq, err := eqDeletes(ctx, tbl, []int{mixedID}, []any{int64(5)}, []any{int64(6)}, []any{int64(7)})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, nil, append([]iceberg.DataFile{pos}, eq...))
}

func equalitySameSnapshotRows() []mixedRow { return renamed(genMixedRows(1, 8), "dan", 3, 7) }

func buildEqualitySameSnapshot(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := equalitySameSnapshotRows()
	tbl, _, err := mixedTable(ctx, cat, ident, 2, rowsByID(rows, 1, 5))
	if err != nil {
		return nil, err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	b, err := icewrite.WriteDataFile(ctx, tbl, 2, sc, func(yield func(arrow.RecordBatch, error) bool) {
		yield(mixedBatch(sc, rowsByID(rows, 6, 8)), nil)
	})
	if err != nil {
		return nil, err
	}
	eq, err := eqDeletes(ctx, tbl, []int{mixedName}, []any{"dan"})
	if err != nil {
		return nil, err
	}
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes.parquet"), []icewrite.PositionalDelete{{FilePath: b.FilePath(), Pos: 0}})
	if err != nil {
		return nil, err
	}
	return icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{b}, append([]iceberg.DataFile{pos}, eq...))
}

func buildDeletionVectorV3(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	rows := genMixedRows(1, 15)
	tbl, files, err := mixedTable(ctx, cat, ident, 3, rowsByID(rows, 1, 6), rowsByID(rows, 7, 12), rowsByID(rows, 13, 15))
	if err != nil {
		return nil, err
	}
	wfs, err := icewrite.WriteFS(ctx, tbl)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	specByID := func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) }
	a, b := files[0].FilePath(), files[1].FilePath()

	w := dv.NewDVWriter(wfs, specByID)
	if err := w.Add(a, []int64{1, 5}, 0, nil); err != nil {
		return nil, fmt.Errorf("add deletion vector for %s: %w", a, err)
	}
	if err := w.Add(b, []int64{0}, 0, nil); err != nil {
		return nil, fmt.Errorf("add deletion vector for %s: %w", b, err)
	}
	loc := icewrite.DataPath(tbl, "dv-1.puffin")
	first, err := w.Flush(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("write deletion vector file %s: %w", loc, err)
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, first); err != nil {
		return nil, err
	}

	// A data file has at most one live deletion vector: the replacement
	// carries the old positions too, and the old one is removed with it.
	var oldB iceberg.DataFile
	for _, f := range first {
		if ref := f.ReferencedDataFile(); ref != nil && *ref == b {
			oldB = f
		}
	}
	if oldB == nil {
		return nil, fmt.Errorf("write deletion vector file %s: no vector for %s", loc, b)
	}
	w = dv.NewDVWriter(wfs, specByID)
	if err := w.Add(b, []int64{0, 3}, 0, nil); err != nil {
		return nil, fmt.Errorf("add deletion vector for %s: %w", b, err)
	}
	loc = icewrite.DataPath(tbl, "dv-2.puffin")
	second, err := w.Flush(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("write deletion vector file %s: %w", loc, err)
	}
	tx := tbl.NewTransaction()
	if err := tx.NewRowDelta(nil).AddDeletes(second...).RemoveDeletes(oldB).Commit(ctx); err != nil {
		return nil, fmt.Errorf("stage deletion vector replacement on %s: %w", identString(ident), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit deletion vector replacement on %s: %w", identString(ident), err)
	}
	return tbl, nil
}
