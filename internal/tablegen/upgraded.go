package tablegen

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// UpgradedV1 writes an unpartitioned format-version 1 table of keyed rows,
// upgrades it to format version 2 (Transaction.UpgradeFormatVersion, a
// commit of its own that adds no snapshot) and then gives it equality and
// positional deletes, and returns it with the expected rows of each
// snapshot. The data files written under v1 carry no data sequence number;
// after the upgrade they inherit 0, so every delete committed later applies
// to them (an equality delete to data files of a smaller sequence number, a
// positional delete to those of one no larger), while an equality delete
// committed with the data it would match does not apply to it.
//
//  1. (v1) append A: ids 1-4, cats a, b, a, b.
//  2. (v1) append B: ids 5-6, cat b.
//  3. (v2) an equality delete on id of 1 and 5: from A and B.
//  4. (v2) a positional delete of A pos 2 (id 3) and B pos 1 (id 6).
//  5. (v2) append C (ids 7-8, cat a) together with an equality delete on id
//     of 4 and 7: it deletes 4 (A, sequence number 0), not 7 (C, the
//     delete's own sequence number).
//
// Live ids: 1-4; 1-6; 2, 3, 4, 6; 2, 4; 2, 7, 8.
func UpgradedV1(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
	tbl, spec, err := createKeyed(ctx, cat, ident, nil, 1)
	if err != nil {
		return nil, err
	}
	cols := []string{"id", "cat"}
	a := append(append(keyedRows("a", 1, 1), keyedRows("b", 2, 2)...), append(keyedRows("a", 3, 3), keyedRows("b", 4, 4)...)...)
	b, c := keyedRows("b", 5, 6), keyedRows("a", 7, 8)
	out := &Built{}
	fileA, err := writeKeyed(ctx, tbl, DataFileName(1), iceberg.EntryContentData, spec, nil, a)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileA}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append A (format version 1)", cols, keyedLive(nil, a))
	fileB, err := writeKeyed(ctx, tbl, DataFileName(2), iceberg.EntryContentData, spec, nil, b)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileB}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append B (format version 1)", cols, keyedLive(nil, a, b))

	tx := tbl.NewTransaction()
	if err := tx.UpgradeFormatVersion(2); err != nil {
		return nil, fmt.Errorf("stage the upgrade of %s to format version 2: %w", identString(ident), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("upgrade %s to format version 2: %w", identString(ident), err)
	}
	if v := tbl.Metadata().Version(); v != 2 {
		return nil, fmt.Errorf("%w: %s is format version %d after the upgrade, want 2", ErrInvalidArgument, identString(ident), v)
	}

	eq, err := eqByID(ctx, tbl, "eq-1-5.parquet", spec, nil, 1, 5)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{eq}); err != nil {
		return nil, err
	}
	out.record(tbl, "equality delete of ids 1, 5 after the upgrade", cols, keyedLive([]int64{1, 5}, a, b))

	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-a2-b1.parquet"),
		[]icewrite.PositionalDelete{{FilePath: fileA.FilePath(), Pos: 2}, {FilePath: fileB.FilePath(), Pos: 1}})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{pos}); err != nil {
		return nil, err
	}
	out.record(tbl, "positional delete of A pos 2 (id 3) and B pos 1 (id 6)", cols, keyedLive([]int64{1, 3, 5, 6}, a, b))

	fileC, err := writeKeyed(ctx, tbl, DataFileName(3), iceberg.EntryContentData, spec, nil, c)
	if err != nil {
		return nil, err
	}
	eq2, err := eqByID(ctx, tbl, "eq-4-7.parquet", spec, nil, 4, 7)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileC}, []iceberg.DataFile{eq2}); err != nil {
		return nil, err
	}
	out.record(tbl, "append C with an equality delete of ids 4, 7 in the same commit", cols,
		keyedLive([]int64{1, 3, 4, 5, 6}, a, b, c))
	return out, nil
}
