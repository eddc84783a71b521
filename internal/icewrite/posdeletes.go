package icewrite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Field ids of the two required columns of an Iceberg positional delete file.
const (
	posDeleteFilePathID = 2147483546
	posDeletePosID      = 2147483545
)

// PositionalDelete is one row of a positional delete file: the row at
// position Pos (0-based, counted over the whole file) of the data file whose
// path is exactly FilePath is deleted.
type PositionalDelete struct {
	FilePath string
	Pos      int64
}

// posDeleteRow is the Parquet row of a positional delete file.
type posDeleteRow struct {
	FilePath string `parquet:"file_path,id(2147483546)"`
	Pos      int64  `parquet:"pos,id(2147483545)"`
}

// WritePositionalDeletes writes deletes as one Parquet positional delete file
// at location through tbl's FileIO and returns its DataFile, ready for
// RowDelta.AddDeletes; it commits nothing. Rows are written sorted by
// (file_path, pos), as the spec requires, whatever the order of deletes.
//
// The DataFile carries the record count, the file size, value and null counts
// and lower/upper bounds for both columns. The file_path bounds are the full,
// untruncated smallest and largest paths; iceberg-go's PlanFiles uses them:
// when they are equal the delete file is matched to that one data file,
// otherwise it is attached to every data file of the partition whose path
// lies within the bounds, including files it names no row of.
//
// referenced_data_file is deliberately left unset, even when the file names a
// single data file: iceberg-go's RowDelta.Commit requires a referenced data
// file to be live at the branch head already, so a delete file that set it
// could not be committed in the same snapshot as its data file. Equal
// file_path bounds give PlanFiles the same information.
func WritePositionalDeletes(ctx context.Context, tbl *table.Table, location string, deletes []PositionalDelete) (iceberg.DataFile, error) {
	return writePositionalDeletes(ctx, tbl, location, *iceberg.UnpartitionedSpec, nil, deletes)
}

// WritePartitionedPositionalDeletes is WritePositionalDeletes for a delete
// file that belongs to one partition of spec: partition maps partition field
// ids to their values, as iceberg.NewDataFileBuilder takes them (a string for
// an identity string column, an iceberg.Date for a date…). PlanFiles applies
// a delete file only to data files of the same spec and partition.
func WritePartitionedPositionalDeletes(ctx context.Context, tbl *table.Table, location string, spec iceberg.PartitionSpec, partition map[int]any, deletes []PositionalDelete) (iceberg.DataFile, error) {
	return writePositionalDeletes(ctx, tbl, location, spec, partition, deletes)
}

func writePositionalDeletes(ctx context.Context, tbl *table.Table, location string, spec iceberg.PartitionSpec, partition map[int]any, deletes []PositionalDelete) (_ iceberg.DataFile, err error) {
	if len(deletes) == 0 {
		return nil, fmt.Errorf("%w: positional delete file %s has no rows", ErrInvalidArgument, location)
	}
	rows := make([]posDeleteRow, len(deletes))
	for i, d := range deletes {
		if d.Pos < 0 {
			return nil, fmt.Errorf("%w: positional delete file %s: negative position %d for %s", ErrInvalidArgument, location, d.Pos, d.FilePath)
		}
		rows[i] = posDeleteRow{FilePath: d.FilePath, Pos: d.Pos}
	}
	slices.SortFunc(rows, func(a, b posDeleteRow) int {
		return cmp.Or(cmp.Compare(a.FilePath, b.FilePath), cmp.Compare(a.Pos, b.Pos))
	})

	size, err := WriteParquetFile(ctx, tbl, location, rows)
	if err != nil {
		return nil, fmt.Errorf("positional delete file: %w", err)
	}

	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentPosDeletes,
		location, iceberg.ParquetFile, partition, PartitionLogicalTypes(tbl.Schema(), spec), nil, int64(len(rows)), size)
	if err != nil {
		return nil, fmt.Errorf("describe positional delete file %s: %w", location, err)
	}
	first, last := rows[0], rows[len(rows)-1]
	minPos, maxPos := rows[0].Pos, rows[0].Pos
	for _, r := range rows {
		minPos, maxPos = min(minPos, r.Pos), max(maxPos, r.Pos)
	}
	n := int64(len(rows))
	b.ValueCounts(map[int]int64{posDeleteFilePathID: n, posDeletePosID: n}).
		NullValueCounts(map[int]int64{posDeleteFilePathID: 0, posDeletePosID: 0}).
		LowerBoundValues(map[int][]byte{posDeleteFilePathID: []byte(first.FilePath), posDeletePosID: le64(minPos)}).
		UpperBoundValues(map[int][]byte{posDeleteFilePathID: []byte(last.FilePath), posDeletePosID: le64(maxPos)})
	return b.Build(), nil
}

// le64 is the Iceberg single-value binary form of a long.
func le64(v int64) []byte {
	b, _ := iceberg.Int64Literal(v).MarshalBinary() // never fails
	return b
}
