package tablegen

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// Lineage writes a format-version 3 table of keyed rows, partitioned by
// identity(cat), whose spec later gains truncate(10, id) as id_trunc, and
// returns it with the expected rows of its snapshots and, for the current
// snapshot, the rows with every metadata column after the table's
// (_row_id, _last_updated_sequence_number, _file, _pos, _spec_id,
// _partition), written out from the spec's rules: a data file's rows
// inherit _row_id = first_row_id + position, where first_row_id is the
// table's next-row-id when the file was committed, and their data sequence
// number.
//
//  1. append A (cat a, ids 1-4): sequence number 1, first_row_id 0.
//  2. append B (cat b, ids 5-6): sequence number 2, first_row_id 4.
//  3. a deletion vector of A pos 1 (id 2), in partition cat=a:
//     sequence number 3; the rows keep their ids and positions.
//  4. (spec 1) append C (cat a, id_trunc 0, ids 7-8): sequence number 4,
//     first_row_id 6.
func Lineage(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, []string, error) {
	spec0 := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "cat", Transform: iceberg.IdentityTransform{}})
	tbl, spec, err := createKeyed(ctx, cat, ident, &spec0, 3)
	if err != nil {
		return nil, nil, err
	}
	catID := spec.Field(0).FieldID
	cols := []string{"id", "cat"}
	a, b, c := keyedRows("a", 1, 4), keyedRows("b", 5, 6), keyedRows("a", 7, 8)
	out := &Built{}
	fileA, err := writeKeyed(ctx, tbl, DataFileName(1), iceberg.EntryContentData, spec, map[int]any{catID: "a"}, a)
	if err != nil {
		return nil, nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileA}, nil); err != nil {
		return nil, nil, err
	}
	out.record(tbl, "append A (cat a, ids 1-4)", cols, keyedLive(nil, a))
	fileB, err := writeKeyed(ctx, tbl, DataFileName(2), iceberg.EntryContentData, spec, map[int]any{catID: "b"}, b)
	if err != nil {
		return nil, nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileB}, nil); err != nil {
		return nil, nil, err
	}
	out.record(tbl, "append B (cat b, ids 5-6)", cols, keyedLive(nil, a, b))
	wfs, err := icewrite.WriteFS(ctx, tbl)
	if err != nil {
		return nil, nil, err
	}
	meta0 := tbl.Metadata()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return meta0.PartitionSpecByID(int(id)) })
	if err := w.Add(fileA.FilePath(), []int64{1}, int32(spec.ID()), map[int]any{catID: "a"}); err != nil {
		return nil, nil, fmt.Errorf("add deletion vector for %s: %w", fileA.FilePath(), err)
	}
	dvs, err := w.Flush(ctx, icewrite.DataPath(tbl, "dv-a.puffin"))
	if err != nil {
		return nil, nil, fmt.Errorf("write deletion vector of %s: %w", fileA.FilePath(), err)
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, dvs); err != nil {
		return nil, nil, err
	}
	out.record(tbl, "deletion vector of A pos 1 (id 2)", cols, keyedLive([]int64{2}, a, b))
	var spec1 iceberg.PartitionSpec
	if tbl, spec1, err = evolveSpec(ctx, tbl, func(u *table.UpdateSpec) {
		u.AddField("id", iceberg.TruncateTransform{Width: 10}, "id_trunc")
	}); err != nil {
		return nil, nil, err
	}
	truncID := spec1.Field(1).FieldID
	fileC, err := writeKeyed(ctx, tbl, DataFileName(3), iceberg.EntryContentData, spec1, map[int]any{catID: "a", truncID: int64(0)}, c)
	if err != nil {
		return nil, nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fileC}, nil); err != nil {
		return nil, nil, err
	}
	out.record(tbl, "append C under spec 1 (cat a, id_trunc 0, ids 7-8)", cols, keyedLive([]int64{2}, a, b, c))

	// The current snapshot with every metadata column.
	type file struct {
		path         string
		rows         []keyedRow
		first, seq   int64
		specID       int
		cat, idTrunc string
	}
	var meta []string
	for _, f := range []file{
		{fileA.FilePath(), a, 0, 1, 0, `"a"`, "null"},
		{fileB.FilePath(), b, 4, 2, 0, `"b"`, "null"},
		{fileC.FilePath(), c, 6, 4, 1, `"a"`, "0"},
	} {
		for p, r := range f.rows {
			if r.ID == 2 {
				continue
			}
			meta = append(meta, keyedJSON(r,
				`"_row_id":`+strconv.FormatInt(f.first+int64(p), 10),
				`"_last_updated_sequence_number":`+strconv.FormatInt(f.seq, 10),
				`"_file":`+jStr(&f.path),
				`"_pos":`+strconv.Itoa(p),
				`"_spec_id":`+strconv.Itoa(f.specID),
				`"_partition":{"cat":`+f.cat+`,"id_trunc":`+f.idTrunc+`}`))
		}
	}
	return out, meta, nil
}

// keyedLive renders the rows of groups whose ids are not deleted.
func keyedLive(deleted []int64, groups ...[]keyedRow) []string {
	out := []string{}
	for _, g := range groups {
		for _, r := range g {
			if !slices.Contains(deleted, r.ID) {
				out = append(out, keyedJSON(r))
			}
		}
	}
	return out
}
