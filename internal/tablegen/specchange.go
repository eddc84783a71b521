package tablegen

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// SpecChange writes a format-version 2 table of keyed rows whose
// partition spec changes from unpartitioned (spec 0) to identity(cat)
// (spec 1), with equality and positional deletes of both specs, and
// returns it with the expected rows of each snapshot. An unpartitioned
// delete file applies to the data files of every spec; a partitioned one
// only to those of its spec and partition (the spec's scan planning rules,
// which iceberg-go's PlanFiles applies).
//
//  1. append A (spec 0): ids 1-4, cats a, b, a, b.
//  2. (spec 1) append B (cat a: ids 5-6) and C (cat b: ids 7-8).
//  3. an equality delete on id of 1, 5 and 7, written under spec 0 before
//     the spec changed: unpartitioned, it deletes from A, B and C.
//  4. an equality delete on id of 3, 6 and 8 in spec 1's partition cat=a:
//     it deletes 6 (B) only, not 3 (A is spec 0) nor 8 (C is cat=b).
//  5. an unpartitioned positional delete of A pos 1 (id 2) and one of C
//     pos 1 (id 8) in spec 1's partition cat=b.
//
// Live ids: 1-4; 1-8; 2, 3, 4, 6, 8; 2, 3, 4, 8; 3, 4.
func SpecChange(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
	tbl, spec0, err := createKeyed(ctx, cat, ident, nil, 2)
	if err != nil {
		return nil, err
	}
	cols := []string{"id", "cat"}
	a := append(append(keyedRows("a", 1, 1), keyedRows("b", 2, 2)...), append(keyedRows("a", 3, 3), keyedRows("b", 4, 4)...)...)
	b, c := keyedRows("a", 5, 6), keyedRows("b", 7, 8)
	out := &Built{}
	fileA, err := writeKeyed(ctx, tbl, DataFileName(1), iceberg.EntryContentData, spec0, nil, a)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileA}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append A (spec 0)", cols, keyedLive(nil, a))
	global, err := eqByID(ctx, tbl, "eq-spec0.parquet", spec0, nil, 1, 5, 7)
	if err != nil {
		return nil, err
	}

	tbl, spec1, err := evolveSpec(ctx, tbl, func(u *table.UpdateSpec) { u.AddIdentity("cat") })
	if err != nil {
		return nil, err
	}
	catID := spec1.Field(0).FieldID
	fileB, err := writeKeyed(ctx, tbl, DataFileName(2), iceberg.EntryContentData, spec1, map[int]any{catID: "a"}, b)
	if err != nil {
		return nil, err
	}
	fileC, err := writeKeyed(ctx, tbl, DataFileName(3), iceberg.EntryContentData, spec1, map[int]any{catID: "b"}, c)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileB, fileC}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append B (cat a) and C (cat b) under spec 1", cols, keyedLive(nil, a, b, c))

	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{global}); err != nil {
		return nil, err
	}
	out.record(tbl, "unpartitioned equality delete of ids 1, 5, 7", cols, keyedLive([]int64{1, 5, 7}, a, b, c))

	local, err := eqByID(ctx, tbl, "eq-spec1-a.parquet", spec1, map[int]any{catID: "a"}, 3, 6, 8)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{local}); err != nil {
		return nil, err
	}
	out.record(tbl, "equality delete of ids 3, 6, 8 in partition cat=a of spec 1", cols, keyedLive([]int64{1, 5, 6, 7}, a, b, c))

	posA, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-spec0.parquet"),
		[]icewrite.PositionalDelete{{FilePath: fileA.FilePath(), Pos: 1}})
	if err != nil {
		return nil, err
	}
	posC, err := icewrite.WritePartitionedPositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-spec1-b.parquet"), spec1,
		map[int]any{catID: "b"}, []icewrite.PositionalDelete{{FilePath: fileC.FilePath(), Pos: 1}})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{posA, posC}); err != nil {
		return nil, err
	}
	out.record(tbl, "positional deletes of A pos 1 (spec 0) and C pos 1 (spec 1, cat=b)", cols,
		keyedLive([]int64{1, 2, 5, 6, 7, 8}, a, b, c))
	return out, nil
}
