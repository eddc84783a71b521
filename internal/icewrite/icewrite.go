// Package icewrite holds the few writers the demo tables (internal/demo) and
// the test-table generator (internal/tablegen) build Iceberg tables with, on
// top of iceberg-go's own: it creates a namespace and table, writes a record
// batch as one data file with table.WriteRecords, writes equality delete
// files with Transaction.WriteEqualityDeletes, and commits data and delete
// files through Transaction.NewRowDelta. Positional delete files are the one
// thing iceberg-go cannot write at arbitrary positions, so
// WritePositionalDeletes writes them with parquet-go.
//
// Data file names are deterministic (see DataFileName): the n-th data file a
// caller writes into a table is named
// 00000-0-00000000-0000-4000-8000-0000000000nn-00001.parquet under the
// table's data directory, so the same calls write the same files, and the
// lexical order of data file paths is the order of n. Equality delete file
// names are not deterministic. The package example writes a table with one
// data file of one row.
package icewrite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// ErrInvalidArgument is returned when a writer is called with arguments it
// cannot honour (an identifier without a namespace, a positional delete file
// without rows…).
var ErrInvalidArgument = errors.New("icewrite: invalid argument")

// formatVersionKey is the table property that selects the Iceberg format.
const formatVersionKey = "format-version"

// identString renders a table identifier as ns.table for error messages.
func identString(ident table.Identifier) string { return strings.Join(ident, ".") }

// EnsureNamespace creates the namespace of ident when it does not exist.
func EnsureNamespace(ctx context.Context, cat catalog.Catalog, ident table.Identifier) error {
	ns := catalog.NamespaceFromIdent(ident)
	if len(ns) == 0 {
		return fmt.Errorf("%w: table identifier %q has no namespace", ErrInvalidArgument, identString(ident))
	}
	exists, err := cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return fmt.Errorf("check namespace %s: %w", strings.Join(ns, "."), err)
	}
	if exists {
		return nil
	}
	if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("create namespace %s: %w", strings.Join(ns, "."), err)
	}
	return nil
}

// CreateTable creates an unpartitioned table of the given format version,
// creating its namespace first when needed.
func CreateTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, sc *iceberg.Schema, formatVersion int) (*table.Table, error) {
	if err := EnsureNamespace(ctx, cat, ident); err != nil {
		return nil, err
	}
	tbl, err := cat.CreateTable(ctx, ident, sc,
		catalog.WithProperties(iceberg.Properties{formatVersionKey: fmt.Sprint(formatVersion)}))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	return tbl, nil
}

// DataFileName is the base name of the n-th data file WriteDataFile (or
// AppendBatch) writes into a table.
func DataFileName(n int) string {
	return fmt.Sprintf("00000-0-%s-00001.parquet", fileUUID(n))
}

// fileUUID is the write UUID of the n-th data file written into a table. It
// is fixed so that data file paths are reproducible and sort in write order;
// the table location keeps them apart between tables.
func fileUUID(n int) uuid.UUID {
	return uuid.UUID{0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// WriteDataFile writes the batches as exactly one Parquet data file of tbl,
// named DataFileName(n), without committing it. It releases the batches.
// opts add to the write's options (a row-group limit, say).
func WriteDataFile(ctx context.Context, tbl *table.Table, n int, sc *arrow.Schema, batches func(yield func(arrow.RecordBatch, error) bool), opts ...table.WriteRecordOption) (iceberg.DataFile, error) {
	var out []iceberg.DataFile
	opts = append([]table.WriteRecordOption{
		table.WithWriteUUID(fileUUID(n)),
		// One file per call, whatever its size: callers decide the file layout.
		table.WithTargetFileSize(1 << 40),
	}, opts...)
	for df, err := range table.WriteRecords(ctx, tbl, sc, batches, opts...) {
		if err != nil {
			return nil, fmt.Errorf("write data file %d of %s: %w", n, identString(tbl.Identifier()), err)
		}
		out = append(out, df)
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("write data file %d of %s: iceberg-go wrote %d files, want 1", n, identString(tbl.Identifier()), len(out))
	}
	return out[0], nil
}

// AppendBatch writes one record batch as data file n of tbl (see
// WriteDataFile) and commits it in its own snapshot. It takes ownership of
// batch and returns the table as committed and the data file.
func AppendBatch(ctx context.Context, tbl *table.Table, n int, batch arrow.RecordBatch) (*table.Table, iceberg.DataFile, error) {
	df, err := WriteDataFile(ctx, tbl, n, batch.Schema(), func(yield func(arrow.RecordBatch, error) bool) {
		yield(batch, nil)
	})
	if err != nil {
		return nil, nil, err
	}
	tbl, err = CommitDelta(ctx, tbl, []iceberg.DataFile{df}, nil)
	if err != nil {
		return nil, nil, err
	}
	return tbl, df, nil
}

// CommitDelta commits data files and delete files in one snapshot through a
// row delta and returns the table as committed.
func CommitDelta(ctx context.Context, tbl *table.Table, data, deletes []iceberg.DataFile) (*table.Table, error) {
	tx := tbl.NewTransaction()
	rd := tx.NewRowDelta(nil).AddRows(data...).AddDeletes(deletes...)
	if err := rd.Commit(ctx); err != nil {
		return nil, fmt.Errorf("stage row delta on %s: %w", identString(tbl.Identifier()), err)
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit row delta on %s: %w", identString(tbl.Identifier()), err)
	}
	return out, nil
}

// WriteEqualityDeletes writes batch as equality delete files keyed on
// fieldIDs, without committing them. The batch's schema must be the table
// schema projected to fieldIDs (see DeleteKeySchema). It takes ownership of
// batch.
func WriteEqualityDeletes(ctx context.Context, tbl *table.Table, fieldIDs []int, batch arrow.RecordBatch) ([]iceberg.DataFile, error) {
	defer batch.Release()
	tx := tbl.NewTransaction()
	files, err := tx.WriteEqualityDeletes(ctx, fieldIDs, func(yield func(arrow.RecordBatch, error) bool) {
		// The writer releases what it consumes; keep our own reference.
		batch.Retain()
		yield(batch, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("write equality delete file on %v of %s: %w", fieldIDs, identString(tbl.Identifier()), err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("write equality delete file on %v of %s: no file written", fieldIDs, identString(tbl.Identifier()))
	}
	return files, nil
}

// WriteFS returns tbl's FileIO as a writable one.
func WriteFS(ctx context.Context, tbl *table.Table) (iceio.WriteFileIO, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file io of %s: %w", identString(tbl.Identifier()), err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("%w: file io %T of %s cannot write", ErrInvalidArgument, fs, identString(tbl.Identifier()))
	}
	return wfs, nil
}

// DataPath is the location of a file named name under tbl's data directory.
func DataPath(tbl *table.Table, name string) string {
	return strings.TrimRight(tbl.Location(), "/") + "/data/" + name
}
