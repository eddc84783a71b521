// Package tablegen writes Iceberg tables with iceberg-go's own writers, for
// the sidecar's demo, for the tests and benchmarks of reader/ and handlers/,
// and reads them back with iceberg-go's Scan.ReadTasks as an oracle that is
// independent of the sidecar's reader.
//
// Every table lives in whatever catalog the caller passes (in practice
// iceberg-go's hadoop catalog over a local warehouse) and is unpartitioned,
// except IdentityPartitioned. The evolution builders (Evolution, Migrated,
// IdentityPartitioned, AllTypes) return a Built with the expected rows of
// every snapshot; Migrated and IdentityPartitioned write their data files
// with parquet-go, as foreign writers would. Otherwise data files
// are written with table.WriteRecords, equality deletes with
// Transaction.WriteEqualityDeletes, deletion vectors with dv.DVWriter, and
// every commit goes through Transaction.NewRowDelta. Positional delete files
// are the one thing iceberg-go cannot write at arbitrary positions, so
// WritePositionalDeletes writes them with parquet-go.
//
// Data file names are deterministic (see fileUUID): the n-th data file a
// builder writes into a table is named 00000-0-00000000-0000-4000-8000-0000000000nn-00001.parquet
// under the table's data directory, so the lexical order of data file paths is
// the order in which the builder wrote them. Delete file names are not.
//
// Example, the demo warehouse the sidecar serves with --demo:
//
//	cat, err := hadoop.NewCatalog("local", "./warehouse", nil)
//	if err != nil {
//		return err
//	}
//	return tablegen.Demo(ctx, cat)
package tablegen

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// ErrInvalidArgument is returned when a builder is called with arguments it
// cannot honour (a negative row count, fractions that do not add up…).
var ErrInvalidArgument = errors.New("tablegen: invalid argument")

// formatVersionKey is the table property that selects the Iceberg format.
const formatVersionKey = "format-version"

// identString renders a table identifier as ns.table for error messages.
func identString(ident table.Identifier) string { return strings.Join(ident, ".") }

// ensureNamespace creates the namespace of ident when it does not exist.
func ensureNamespace(ctx context.Context, cat catalog.Catalog, ident table.Identifier) error {
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

// createTable creates an unpartitioned table of the given format version,
// creating its namespace first when needed.
func createTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, sc *iceberg.Schema, formatVersion int) (*table.Table, error) {
	if err := ensureNamespace(ctx, cat, ident); err != nil {
		return nil, err
	}
	tbl, err := cat.CreateTable(ctx, ident, sc,
		catalog.WithProperties(iceberg.Properties{formatVersionKey: fmt.Sprint(formatVersion)}))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	return tbl, nil
}

// fileUUID is the write UUID of the n-th data file a builder writes into a
// table. It is fixed so that data file paths are reproducible and sort in
// write order; the table location keeps them apart between tables.
func fileUUID(n int) uuid.UUID {
	return uuid.UUID{0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// writeDataFile writes the batches as exactly one Parquet data file of tbl,
// named after fileUUID(n), without committing it. It releases the batches.
// opts add to the write's options (a row-group limit, say).
func writeDataFile(ctx context.Context, tbl *table.Table, n int, sc *arrow.Schema, batches func(yield func(arrow.RecordBatch, error) bool), opts ...table.WriteRecordOption) (iceberg.DataFile, error) {
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

// appendBatch writes one record batch as data file n of tbl and commits it in
// its own append snapshot. It takes ownership of batch.
func appendBatch(ctx context.Context, tbl *table.Table, n int, batch arrow.RecordBatch) (*table.Table, iceberg.DataFile, error) {
	df, err := writeDataFile(ctx, tbl, n, batch.Schema(), func(yield func(arrow.RecordBatch, error) bool) {
		yield(batch, nil)
	})
	if err != nil {
		return nil, nil, err
	}
	tbl, err = commitDelta(ctx, tbl, []iceberg.DataFile{df}, nil)
	if err != nil {
		return nil, nil, err
	}
	return tbl, df, nil
}

// commitDelta commits data files and delete files in one snapshot through a
// row delta and returns the table as committed.
func commitDelta(ctx context.Context, tbl *table.Table, data, deletes []iceberg.DataFile) (*table.Table, error) {
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

// writeEqualityDeletes writes batch as equality delete files keyed on
// fieldIDs, without committing them. The batch's schema must be the table
// schema projected to fieldIDs (see deleteKeySchema). It takes ownership of
// batch.
func writeEqualityDeletes(ctx context.Context, tbl *table.Table, fieldIDs []int, batch arrow.RecordBatch) ([]iceberg.DataFile, error) {
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

// deleteKeySchema is the Arrow schema (with field ids) of an equality delete
// file keyed on fieldIDs of tbl's current schema.
func deleteKeySchema(tbl *table.Table, fieldIDs ...int) (*arrow.Schema, error) {
	names := make([]string, 0, len(fieldIDs))
	for _, id := range fieldIDs {
		name, ok := tbl.Schema().FindColumnName(id)
		if !ok {
			return nil, fmt.Errorf("%w: field id %d not in schema of %s", ErrInvalidArgument, id, identString(tbl.Identifier()))
		}
		names = append(names, name)
	}
	sel, err := tbl.Schema().Select(true, names...)
	if err != nil {
		return nil, fmt.Errorf("project schema of %s to %v: %w", identString(tbl.Identifier()), names, err)
	}
	sc, err := table.SchemaToArrowSchema(sel, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("convert delete key schema of %s: %w", identString(tbl.Identifier()), err)
	}
	return sc, nil
}

// arrowSchema is the Arrow schema (with field ids) that data batches for tbl
// are built in.
func arrowSchema(tbl *table.Table) (*arrow.Schema, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("convert schema of %s to arrow: %w", identString(tbl.Identifier()), err)
	}
	return sc, nil
}

// writeFS returns tbl's FileIO as a writable one.
func writeFS(ctx context.Context, tbl *table.Table) (iceio.WriteFileIO, error) {
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

// dataPath is a new file location under tbl's data directory.
func dataPath(tbl *table.Table, name string) string {
	return strings.TrimRight(tbl.Location(), "/") + "/data/" + name
}

// arrowFieldID is the Iceberg field id iceberg-go stamps on an Arrow field.
func arrowFieldID(f arrow.Field) (int, error) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, fmt.Errorf("%w: arrow field %s has no field id", ErrInvalidArgument, f.Name)
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: arrow field %s has field id %q: %w", ErrInvalidArgument, f.Name, v, err)
	}
	return id, nil
}
