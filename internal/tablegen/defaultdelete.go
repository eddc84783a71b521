package tablegen

import (
	"context"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// keyedRowN is a row of a keyed table after DefaultAfterDelete adds n.
type keyedRowN struct {
	ID  int64   `parquet:"id,id(1)"`
	Cat *string `parquet:"cat,id(2),optional"`
	N   *int64  `parquet:"n,id(3),optional"`
}

// keyedIDN is an equality delete's row on id and n.
type keyedIDN struct {
	ID int64  `parquet:"id,id(1)"`
	N  *int64 `parquet:"n,id(3),optional"`
}

// keyedCat is an equality delete's row on cat.
type keyedCat struct {
	Cat *string `parquet:"cat,id(2),optional"`
}

// oracleNoDefaultKeys is why iceberg-go's ReadTasks cannot read a snapshot
// of DefaultAfterDelete with the delete on (id, n).
const oracleNoDefaultKeys = "iceberg-go v0.7.0 fails the scan (\"equality field ID 3 (n) not found\" in A): " +
	"it looks an equality key up in the data file and does not fill a column the file lacks with its initial-default"

// DefaultNInitial is the initial-default of the column n that
// DefaultAfterDelete adds.
const DefaultNInitial = 42

// DefaultAfterDelete writes an unpartitioned format-version 3 table of
// keyed rows that gains a column n long with initial-default 42 after an
// equality delete file was written, and returns it with the expected rows
// of each snapshot. The rows of a data file written before n existed read
// n as 42; an equality delete keyed on n matches them by that value, as a
// reader that projects the table schema onto the file (filling the
// default) before it compares the keys does.
//
//  1. (schema 0) append A: ids 1-4, cats a, b, a, b.
//  2. (schema 0) an equality delete on id of 1.
//  3. add n long, initial-default 42 (schema 1; no snapshot); append B:
//     ids 5-7, cat c, n 1, 42 and null.
//  4. an equality delete on (id, n) of (2, 42), (3, 0), (5, 1), (7, null):
//     it deletes 2 (A: n reads 42), 5 and 7 (a null key matches a null),
//     not 3 (A's 3 reads n 42, not 0).
//  5. an equality delete on cat of "b": it deletes 4 (A), which the file
//     written before n existed still matches on cat.
//
// Live ids: 1-4; 2-4; 2-7 (A's with n 42); 3, 4, 6; 3, 6.
func DefaultAfterDelete(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
	tbl, spec, err := createKeyed(ctx, cat, ident, nil, 3)
	if err != nil {
		return nil, err
	}
	cols0, cols1 := []string{"id", "cat"}, []string{"id", "cat", "n"}
	a := append(append(keyedRows("a", 1, 1), keyedRows("b", 2, 2)...), append(keyedRows("a", 3, 3), keyedRows("b", 4, 4)...)...)
	out := &Built{}
	fileA, err := writeKeyed(ctx, tbl, DataFileName(1), iceberg.EntryContentData, spec, nil, a)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileA}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append A (schema 0)", cols0, keyedLive(nil, a))
	eq, err := eqByID(ctx, tbl, "eq-id-1.parquet", spec, nil, 1)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{eq}); err != nil {
		return nil, err
	}
	out.record(tbl, "equality delete on id of 1 (schema 0)", cols0, keyedLive([]int64{1}, a))

	if tbl, err = updateSchema(ctx, tbl, func(u *table.UpdateSchema) {
		u.AddColumn([]string{"n"}, iceberg.PrimitiveTypes.Int64, "", false, iceberg.NewLiteral(int64(DefaultNInitial)))
	}); err != nil {
		return nil, err
	}
	one, def := int64(1), int64(DefaultNInitial)
	cc := "c"
	b := []keyedRowN{{5, &cc, &one}, {6, &cc, &def}, {7, &cc, nil}}
	fileB, err := writeKeyed(ctx, tbl, DataFileName(2), iceberg.EntryContentData, spec, nil, b)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileB}, nil); err != nil {
		return nil, err
	}
	live := func(deleted ...int64) []string {
		var rows []string
		nA := `"n":` + strconv.Itoa(DefaultNInitial)
		for _, r := range a {
			if !slices.Contains(deleted, r.ID) {
				rows = append(rows, keyedJSON(r, nA))
			}
		}
		for _, r := range b {
			if !slices.Contains(deleted, r.ID) {
				rows = append(rows, keyedJSON(keyedRow{ID: r.ID, Cat: r.Cat}, `"n":`+jInt(r.N)))
			}
		}
		return rows
	}
	out.record(tbl, "add n (initial-default 42), append B (schema 1)", cols1, live(1))

	zero := int64(0)
	eqN, err := writeKeyed(ctx, tbl, "eq-id-n.parquet", iceberg.EntryContentEqDeletes, spec, nil,
		[]keyedIDN{{2, &def}, {3, &zero}, {5, &one}, {7, nil}}, 1, 3)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{eqN}); err != nil {
		return nil, err
	}
	out.record(tbl, "equality delete on (id, n) of (2, 42), (3, 0), (5, 1), (7, null)", cols1, live(1, 2, 5, 7))
	out.Snapshots[len(out.Snapshots)-1].OracleDiffers = oracleNoDefaultKeys

	catB := "b"
	eqCat, err := writeKeyed(ctx, tbl, "eq-cat-b.parquet", iceberg.EntryContentEqDeletes, spec, nil, []keyedCat{{&catB}}, 2)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{eqCat}); err != nil {
		return nil, err
	}
	out.record(tbl, `equality delete on cat of "b"`, cols1, live(1, 2, 4, 5, 7))
	out.Snapshots[len(out.Snapshots)-1].OracleDiffers = oracleNoDefaultKeys
	return out, nil
}
