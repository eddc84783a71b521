package tablegen

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// Respell spells location with another URI scheme: s3n://b/k with "s3"
// is s3://b/k; a local path /p (or file:///p) is scheme://lake/p.
func Respell(location, scheme string) string {
	if _, rest, ok := strings.Cut(location, "://"); ok && !strings.HasPrefix(location, "file:") {
		return scheme + "://" + rest
	}
	return scheme + "://lake/" + strings.TrimLeft(strings.TrimPrefix(location, "file://"), "/")
}

// Spelled writes a format-version 2 table of keyed rows in whatever store
// and spelling the catalog's warehouse gives its location (s3n://, oss://:
// every file path in the manifests is spelled so), with an equality delete
// and a positional delete file whose file_path column spells data file A
// three ways, and returns it with the expected rows of each snapshot. A
// position delete applies to a data file whose path equals its file_path
// byte for byte, as Iceberg's Java reader compares them
// (org.apache.iceberg.deletes.Deletes: Comparators.charSequences() == 0)
// and iceberg-go's does: the rows that spell A with the scheme respelled
// to each of others (s3 for s3n, say) delete nothing, though they name the
// same object.
//
//  1. append A (ids 1-4) and B (ids 5-6).
//  2. an equality delete on id of 5.
//  3. a positional delete file of A pos 1 as the manifest spells A, and of
//     A pos 0 and pos 2 (and so on) spelled with each of others.
//
// Live ids: 1-6; 1-4, 6; 1, 3, 4, 6.
func Spelled(ctx context.Context, cat catalog.Catalog, ident table.Identifier, others ...string) (*Built, error) {
	tbl, spec, err := createKeyed(ctx, cat, ident, nil, 2)
	if err != nil {
		return nil, err
	}
	cols := []string{"id", "cat"}
	a := append(append(keyedRows("a", 1, 1), keyedRows("b", 2, 2)...), append(keyedRows("a", 3, 3), keyedRows("b", 4, 4)...)...)
	b := keyedRows("b", 5, 6)
	if len(others) >= len(a) {
		return nil, fmt.Errorf("%w: %d other spellings, at most %d", ErrInvalidArgument, len(others), len(a)-1)
	}
	out := &Built{}
	fileA, err := writeKeyed(ctx, tbl, DataFileName(1), iceberg.EntryContentData, spec, nil, a)
	if err != nil {
		return nil, err
	}
	fileB, err := writeKeyed(ctx, tbl, DataFileName(2), iceberg.EntryContentData, spec, nil, b)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileA, fileB}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append A and B", cols, keyedLive(nil, a, b))
	eq, err := eqByID(ctx, tbl, "eq-5.parquet", spec, nil, 5)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{eq}); err != nil {
		return nil, err
	}
	out.record(tbl, "equality delete of id 5", cols, keyedLive([]int64{5}, a, b))

	dels := []icewrite.PositionalDelete{{FilePath: fileA.FilePath(), Pos: 1}}
	for i, s := range others {
		pos := int64(i)
		if i > 0 {
			pos++
		}
		dels = append(dels, icewrite.PositionalDelete{FilePath: Respell(fileA.FilePath(), s), Pos: pos})
	}
	// A position delete file is sorted by file_path, then pos.
	slices.SortFunc(dels, func(x, y icewrite.PositionalDelete) int {
		return cmp.Or(strings.Compare(x.FilePath, y.FilePath), cmp.Compare(x.Pos, y.Pos))
	})
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-spelled.parquet"), dels)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{pos}); err != nil {
		return nil, err
	}
	out.record(tbl, fmt.Sprintf("positional delete of A pos 1, and of A spelled with %v", others), cols,
		keyedLive([]int64{2, 5}, a, b))
	return out, nil
}

// ForeignStore writes a format-version 2 table of keyed rows at the
// catalog's location whose manifests name a file on a store spelled with
// another scheme (gs://, abfss://…): when dataScheme is not "", data file
// B (ids 5-6) is spelled with it; when deleteScheme is not "", a
// positional delete of A pos 0 is. The files are written where the table
// lives; the manifests name them elsewhere. It returns the table with the
// rows each snapshot would read if that store could be opened, and marks
// it Unreadable: a reader without a FileIO for the scheme must refuse it.
//
//  1. append A (ids 1-4).
//  2. (deleteScheme) a positional delete of A pos 0, spelled with it.
//  3. (dataScheme) append B, spelled with it.
func ForeignStore(ctx context.Context, cat catalog.Catalog, ident table.Identifier, dataScheme, deleteScheme string) (*Built, error) {
	tbl, spec, err := createKeyed(ctx, cat, ident, nil, 2)
	if err != nil {
		return nil, err
	}
	cols := []string{"id", "cat"}
	a, b := keyedRows("a", 1, 4), keyedRows("b", 5, 6)
	out := &Built{Unreadable: true}
	fileA, err := writeKeyed(ctx, tbl, DataFileName(1), iceberg.EntryContentData, spec, nil, a)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileA}, nil); err != nil {
		return nil, err
	}
	out.record(tbl, "append A", cols, keyedLive(nil, a))
	var deleted []int64
	if deleteScheme != "" {
		pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-a0.parquet"),
			[]icewrite.PositionalDelete{{FilePath: fileA.FilePath(), Pos: 0}})
		if err != nil {
			return nil, err
		}
		if pos, err = respelled(pos, spec, deleteScheme); err != nil {
			return nil, err
		}
		if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{pos}); err != nil {
			return nil, err
		}
		deleted = []int64{1}
		out.record(tbl, "positional delete of A pos 0 on "+deleteScheme+"://", cols, keyedLive(deleted, a))
	}
	if dataScheme != "" {
		fileB, err := writeKeyed(ctx, tbl, DataFileName(2), iceberg.EntryContentData, spec, nil, b)
		if err != nil {
			return nil, err
		}
		if fileB, err = respelled(fileB, spec, dataScheme); err != nil {
			return nil, err
		}
		if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileB}, nil); err != nil {
			return nil, err
		}
		out.record(tbl, "append B on "+dataScheme+"://", cols, keyedLive(deleted, a, b))
	}
	return out, nil
}

// respelled describes the unpartitioned file f again at its path spelled
// with scheme.
func respelled(f iceberg.DataFile, spec iceberg.PartitionSpec, scheme string) (iceberg.DataFile, error) {
	db, err := iceberg.NewDataFileBuilder(spec, f.ContentType(), Respell(f.FilePath(), scheme), f.FileFormat(),
		map[int]any{}, nil, nil, f.Count(), f.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("describe %s on %s://: %w", f.FilePath(), scheme, err)
	}
	return db.Build(), nil
}
