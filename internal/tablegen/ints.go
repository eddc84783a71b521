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

// Ints is an unpartitioned table whose only columns are ints, a (required)
// and b: a table without a time column, which Druid ingests at a constant
// time.
type Ints struct {
	tbl *table.Table
}

// NewInts creates the table ident in cat (format version 2, merge on read)
// with no snapshot yet.
func NewInts(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Ints, error) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.Int32},
	)
	if err := icewrite.EnsureNamespace(ctx, cat, ident); err != nil {
		return nil, err
	}
	tbl, err := cat.CreateTable(ctx, ident, sc, catalog.WithProperties(iceberg.Properties{
		formatVersionKey: "2", table.WriteDeleteModeKey: table.WriteModeMergeOnRead}))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	return &Ints{tbl: tbl}, nil
}

// Table is the table as last committed.
func (t *Ints) Table() *table.Table { return t.tbl }

// Append appends rows of (a, b) in one snapshot.
func (t *Ints) Append(ctx context.Context, rows ...[2]int32) error {
	sc, err := icewrite.ArrowSchema(t.tbl)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int32Builder).Append(r[0])
		b.Field(1).(*array.Int32Builder).Append(r[1])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rdr.Release()
	tx := t.tbl.NewTransaction()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return t.commit(ctx, tx)
}

// Delete deletes the rows whose a is one of as with iceberg-go's Delete,
// in the delete mode given (table.WriteModeMergeOnRead writes positional
// delete files, table.WriteModeCopyOnWrite rewrites or drops data files).
func (t *Ints) Delete(ctx context.Context, mode string, as ...int32) error {
	tx := t.tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: mode}); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := tx.Delete(ctx, iceberg.IsIn(iceberg.Reference("a"), as...), nil); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return t.commit(ctx, tx)
}

// Compact rewrites the table's files in one replace snapshot, as
// History.Compact does; its rows do not change.
func (t *Ints) Compact(ctx context.Context) error {
	tbl, err := compact(ctx, t.tbl)
	if err != nil {
		return err
	}
	t.tbl = tbl
	return nil
}

func (t *Ints) commit(ctx context.Context, tx *table.Transaction) error {
	tbl, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	t.tbl = tbl
	return nil
}

// IntsLifecycle creates an Ints table ident in cat and takes it through a
// life whose every step is one snapshot: rows (1, 10) and (2, 20)
// appended, then (3, 30); a compaction; a=1 deleted (merge on read); a
// compaction, which applies that delete; every row left deleted (copy on
// write, so the table has no file). It returns the table and the snapshot
// of each step, in that order.
func IntsLifecycle(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Ints, []int64, error) {
	ints, err := NewInts(ctx, cat, ident)
	if err != nil {
		return nil, nil, err
	}
	var snaps []int64
	for _, step := range []func() error{
		func() error { return ints.Append(ctx, [2]int32{1, 10}, [2]int32{2, 20}) },
		func() error { return ints.Append(ctx, [2]int32{3, 30}) },
		func() error { return ints.Compact(ctx) },
		func() error { return ints.Delete(ctx, table.WriteModeMergeOnRead, 1) },
		func() error { return ints.Compact(ctx) },
		func() error { return ints.Delete(ctx, table.WriteModeCopyOnWrite, 2, 3) },
	} {
		if err := step(); err != nil {
			return nil, nil, err
		}
		snaps = append(snaps, ints.Table().CurrentSnapshot().SnapshotID)
	}
	return ints, snaps, nil
}
