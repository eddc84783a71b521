package tablegen

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
)

// Sizes of the Wide table's parts.
const (
	// wideFilesPerPartition is how many data files each event_date holds.
	wideFilesPerPartition = 100
	// wideFilesPerCommit is how many data files each append commits, so
	// that the table has one data manifest per this many files, as a table
	// grown by many appends has.
	wideFilesPerCommit = 1000
	// WideRowsPerFile is the row count of every Wide data file: ids 1…4.
	WideRowsPerFile = 4
)

// wideRow is the one column a Wide data file or equality delete file
// stores; event_date is the partition's, as Hive-style layouts leave it.
type wideRow struct {
	ID int64 `parquet:"id,id(1)"`
}

// WideSchema is the schema of the Wide table: id long (required, field 1)
// and event_date date (field 2), the table being identity-partitioned by
// event_date.
func WideSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "event_date", Type: iceberg.PrimitiveTypes.Date},
	)
}

// WideDeletes returns how Wide divides deleteFiles delete files for a table
// of dataFiles data files: one equality delete file in each of the first eq
// partitions (a tenth of the delete files, at most one per partition), the
// rest positional delete files.
func WideDeletes(dataFiles, deleteFiles int) (partitions, eq, pos int) {
	partitions = (dataFiles + wideFilesPerPartition - 1) / wideFilesPerPartition
	eq = min(partitions, deleteFiles/10)
	return partitions, eq, deleteFiles - eq
}

// Wide creates ident (format-version 2) in cat with dataFiles data files and
// deleteFiles delete files, for measuring planning at scale, and returns it;
// it fails if the table exists. Planning reads manifests, never data files,
// so the table is built cheaply, without going through a writer per file:
//
//   - Every data file is a copy of one tiny Parquet file holding ids 1…4
//     (no event_date column: it comes from the partition), registered with
//     its statistics through DataFileBuilder. The table is partitioned by
//     identity(event_date), wideFilesPerPartition files a day from
//     2025-01-01, and the files are named as Spark names them
//     (data/event_date=2025-01-01/00042-0-<uuid>-00001.parquet). They are
//     committed in appends of wideFilesPerCommit files.
//   - Then one snapshot adds the delete files (see WideDeletes): each
//     equality delete file deletes id 4 in its partition, so it applies to
//     every data file there; each positional delete file deletes position 0
//     of one data file (spread evenly), with that file's path as its
//     file_path bounds, so PlanFiles attaches it to that file alone.
//
// The data files are real, so the table reads: a data file's live ids are
// 1…4, less 4 when its partition has an equality delete, less 1 when a
// positional delete names it.
func Wide(ctx context.Context, cat catalog.Catalog, ident table.Identifier, dataFiles, deleteFiles int) (*table.Table, error) {
	if dataFiles < 1 || deleteFiles < 0 {
		return nil, fmt.Errorf("%w: wide table with %d data files and %d delete files", ErrInvalidArgument, dataFiles, deleteFiles)
	}
	_, eqFiles, posFiles := WideDeletes(dataFiles, deleteFiles)
	if posFiles > dataFiles {
		return nil, fmt.Errorf("%w: wide table: %d positional delete files for %d data files", ErrInvalidArgument, posFiles, dataFiles)
	}
	if err := icewrite.EnsureNamespace(ctx, cat, ident); err != nil {
		return nil, err
	}
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{2}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{},
	})
	tbl, err := cat.CreateTable(ctx, ident, WideSchema(),
		catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{formatVersionKey: "2"}))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	spec = tbl.Spec()
	types := icewrite.PartitionLogicalTypes(tbl.Schema(), spec)
	wfs, err := icewrite.WriteFS(ctx, tbl)
	if err != nil {
		return nil, err
	}
	// copyTo writes content at location.
	copyTo := func(location string, content []byte) error {
		f, err := wfs.Create(location)
		if err != nil {
			return fmt.Errorf("create %s: %w", location, err)
		}
		_, werr := f.Write(content)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("write %s: %w", location, err)
		}
		return nil
	}
	ids := make([]wideRow, WideRowsPerFile)
	for i := range ids {
		ids[i].ID = int64(i + 1)
	}
	dataContent, err := parquetBytes(ids)
	if err != nil {
		return nil, fmt.Errorf("encode wide data file: %w", err)
	}
	eqContent, err := parquetBytes([]wideRow{{ID: WideRowsPerFile}})
	if err != nil {
		return nil, fmt.Errorf("encode wide equality delete file: %w", err)
	}

	day0 := int32(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	partitionOf := func(i int) int { return i / wideFilesPerPartition }
	partitionDir := func(p int) string {
		return "event_date=" + time.Unix(int64(day0+int32(p))*86400, 0).UTC().Format(time.DateOnly) + "/"
	}
	partitionData := func(p int) map[int]any { return map[int]any{1000: iceberg.Date(day0 + int32(p))} }
	paths := make([]string, dataFiles)
	for first := 0; first < dataFiles; first += wideFilesPerCommit {
		var files []iceberg.DataFile
		for i := first; i < min(first+wideFilesPerCommit, dataFiles); i++ {
			p := partitionOf(i)
			paths[i] = icewrite.DataPath(tbl, partitionDir(p)+fmt.Sprintf("%05d-%d-%s-00001.parquet", i%wideFilesPerPartition, i/wideFilesPerCommit, wideUUID("data", i)))
			if err := copyTo(paths[i], dataContent); err != nil {
				return nil, err
			}
			b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, paths[i], iceberg.ParquetFile,
				partitionData(p), types, nil, WideRowsPerFile, int64(len(dataContent)))
			if err != nil {
				return nil, fmt.Errorf("describe data file %s: %w", paths[i], err)
			}
			files = append(files, b.ValueCounts(map[int]int64{1: WideRowsPerFile}).
				NullValueCounts(map[int]int64{1: 0}).
				LowerBoundValues(map[int][]byte{1: le64(1)}).
				UpperBoundValues(map[int][]byte{1: le64(WideRowsPerFile)}).
				Build())
		}
		if tbl, err = icewrite.CommitDelta(ctx, tbl, files, nil); err != nil {
			return nil, err
		}
	}

	var deletes []iceberg.DataFile
	for p := range eqFiles {
		loc := icewrite.DataPath(tbl, partitionDir(p)+fmt.Sprintf("%05d-%d-%s-00001-eq-deletes.parquet", p, 1000+p, wideUUID("eq", p)))
		if err := copyTo(loc, eqContent); err != nil {
			return nil, err
		}
		b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentEqDeletes, loc, iceberg.ParquetFile,
			partitionData(p), types, nil, 1, int64(len(eqContent)))
		if err != nil {
			return nil, fmt.Errorf("describe equality delete file %s: %w", loc, err)
		}
		deletes = append(deletes, b.EqualityFieldIDs([]int{1}).
			ValueCounts(map[int]int64{1: 1}).
			NullValueCounts(map[int]int64{1: 0}).
			LowerBoundValues(map[int][]byte{1: le64(WideRowsPerFile)}).
			UpperBoundValues(map[int][]byte{1: le64(WideRowsPerFile)}).
			Build())
	}
	for k := range posFiles {
		i := k * dataFiles / posFiles
		p := partitionOf(i)
		loc := icewrite.DataPath(tbl, partitionDir(p)+fmt.Sprintf("%05d-%d-%s-00001-deletes.parquet", i%wideFilesPerPartition, 2000+k, wideUUID("pos", k)))
		df, err := icewrite.WritePartitionedPositionalDeletes(ctx, tbl, loc, spec, partitionData(p), []icewrite.PositionalDelete{{FilePath: paths[i], Pos: 0}})
		if err != nil {
			return nil, err
		}
		deletes = append(deletes, df)
	}
	if len(deletes) == 0 {
		return tbl, nil
	}
	return icewrite.CommitDelta(ctx, tbl, nil, deletes)
}

// WideLiveRows are the live rows of Wide's table of that size, as the
// sidecar serves them with the default options (keys in schema order, the
// date as epoch milliseconds), in file order: from how Wide writes the
// table, since iceberg-go's own reader leaves out the identity partition's
// column, which the data files do not store.
func WideLiveRows(dataFiles, deleteFiles int) []string {
	_, eqFiles, posFiles := WideDeletes(dataFiles, deleteFiles)
	day0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	first := map[int]bool{} // the data files whose position 0 is deleted
	for k := range posFiles {
		first[k*dataFiles/posFiles] = true
	}
	var out []string
	for i := range dataFiles {
		p := i / wideFilesPerPartition
		ms := day0.AddDate(0, 0, p).UnixMilli()
		for id := 1; id <= WideRowsPerFile; id++ {
			if (id == 1 && first[i]) || (id == WideRowsPerFile && p < eqFiles) {
				continue
			}
			out = append(out, fmt.Sprintf(`{"id":%d,"event_date":%d}`, id, ms))
		}
	}
	return out
}

// wideUUID is the write UUID in the name of Wide's n-th file of a kind:
// random-looking, as real ones are, and the same on every run.
func wideUUID(kind string, n int) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "wide/%s/%d", kind, n))
}

// parquetBytes encodes rows as a zstd-compressed Parquet file.
func parquetBytes[T any](rows []T) ([]byte, error) {
	var buf bytes.Buffer
	pw := parquet.NewGenericWriter[T](&buf, parquet.Compression(&parquet.Zstd))
	if _, err := pw.Write(rows); err != nil {
		_ = pw.Close()
		return nil, fmt.Errorf("encode rows: %w", err)
	}
	if err := pw.Close(); err != nil {
		return nil, fmt.Errorf("finish parquet: %w", err)
	}
	return buf.Bytes(), nil
}

// le64 is the Iceberg single-value binary form of a long: 8 bytes little-endian.
func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
