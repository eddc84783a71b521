package splits_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// describeFile describes a file of tbl to Iceberg, of the given content,
// format, record count and size.
func describeFile(t *testing.T, tbl *table.Table, content iceberg.ManifestEntryContent, name string, format iceberg.FileFormat, records, size int64) *iceberg.DataFileBuilder {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, content, icewrite.DataPath(tbl, name), format, nil, nil, nil, records, size)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUnservedFormatsRefusedWhenPlanning: a data file or delete file in a
// format the reader does not read (ORC) is refused when planning,
// fault.ErrUnsupported (a 422 unsupported) naming the file, in every mode,
// never a plan whose streams fail.
func TestUnservedFormatsRefusedWhenPlanning(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	orc, err := icewrite.CreateTable(ctx, cat, table.Identifier{"fmt", "orc"}, sc, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := icewrite.CommitDelta(ctx, orc, []iceberg.DataFile{describeFile(t, orc, iceberg.EntryContentData, "a.orc", iceberg.OrcFile, 10, 1000).Build()}, nil); err != nil {
		t.Fatal(err)
	}
	orcDel, err := icewrite.CreateTable(ctx, cat, table.Identifier{"fmt", "orcdel"}, sc, 2)
	if err != nil {
		t.Fatal(err)
	}
	if orcDel, err = icewrite.CommitDelta(ctx, orcDel, []iceberg.DataFile{describeFile(t, orcDel, iceberg.EntryContentData, "a.parquet", iceberg.ParquetFile, 10, 1000).Build()}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := icewrite.CommitDelta(ctx, orcDel, nil, []iceberg.DataFile{describeFile(t, orcDel, iceberg.EntryContentPosDeletes, "d.orc", iceberg.OrcFile, 10, 1000).Build()}); err != nil {
		t.Fatal(err)
	}
	r := localReplica(t, dir)
	for _, tt := range []struct{ table, file string }{{"fmt.orc", "a.orc"}, {"fmt.orcdel", "d.orc"}} {
		for _, mode := range []splits.Mode{splits.ModeAuto, splits.ModeRows, splits.ModeFiles} {
			_, err := r.Planner.Plan(ctx, splits.Request{Table: tt.table, Mode: mode})
			if errors.Is(err, splits.ErrConflict) && mode == splits.ModeFiles && tt.file == "d.orc" {
				continue // mode=files refuses any delete file first
			}
			if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("%s, mode=%s: %v, want fault.ErrUnsupported naming %s", tt.table, mode, err, tt.file)
			}
		}
	}
}

// TestAvroTableServedOnRowPath: a table of Avro data files, with Avro
// equality and positional delete files, plans on the row path only (the
// raw files would need Druid's avro_ocf format, which reads other types),
// and its splits read the rows Iceberg says it holds.
func TestAvroTableServedOnRowPath(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
	)
	tbl, err := icewrite.CreateTable(ctx, cat, table.Identifier{"fmt", "avro"}, sc, 2)
	if err != nil {
		t.Fatal(err)
	}
	const dataSchema = `{"type":"record","name":"table","fields":[
		{"name":"id","type":"long","field-id":1},
		{"name":"name","type":["null","string"],"default":null,"field-id":2},
		{"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true}],"default":null,"field-id":3},
		{"name":"amount","type":["null",{"type":"fixed","name":"fixed_4","size":4,"logicalType":"decimal","precision":9,"scale":2}],"default":null,"field-id":4}]}`
	var recs []map[string]any
	var want []string
	for i := range int64(5) {
		recs = append(recs, map[string]any{"id": i, "name": "n" + strconv.FormatInt(i, 10), "ts": 1_700_000_000_000_000 + i*1500,
			"amount": []byte{0, 0, 0x30, byte(0x39 + i)}})
		want = append(want, `{"id":`+strconv.FormatInt(i, 10)+`,"name":"n`+strconv.FormatInt(i, 10)+`","ts":`+
			strconv.FormatInt(1_700_000_000_000+i+i/2, 10)+`,"amount":"`+strconv.FormatFloat(float64(12345+i)/100, 'f', 2, 64)+`"}`)
	}
	loc := icewrite.DataPath(tbl, "a.avro")
	size, err := icewrite.WriteAvroFile(ctx, tbl, loc, dataSchema, recs)
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{describeFile(t, tbl, iceberg.EntryContentData, "a.avro", iceberg.AvroFile, 5, size).Build()}, nil); err != nil {
		t.Fatal(err)
	}
	first := tbl.CurrentSnapshot().SnapshotID

	eqSize, err := icewrite.WriteAvroFile(ctx, tbl, icewrite.DataPath(tbl, "eq.avro"),
		`{"type":"record","name":"eq","fields":[{"name":"name","type":["null","string"],"default":null,"field-id":2}]}`,
		[]map[string]any{{"name": "n3"}})
	if err != nil {
		t.Fatal(err)
	}
	posSize, err := icewrite.WriteAvroFile(ctx, tbl, icewrite.DataPath(tbl, "pos.avro"),
		`{"type":"record","name":"pos","fields":[{"name":"file_path","type":"string","field-id":2147483546},{"name":"pos","type":"long","field-id":2147483545}]}`,
		[]map[string]any{{"file_path": loc, "pos": int64(0)}})
	if err != nil {
		t.Fatal(err)
	}
	eq := describeFile(t, tbl, iceberg.EntryContentEqDeletes, "eq.avro", iceberg.AvroFile, 1, eqSize).EqualityFieldIDs([]int{2}).Build()
	pos := describeFile(t, tbl, iceberg.EntryContentPosDeletes, "pos.avro", iceberg.AvroFile, 1, posSize).Build()
	if _, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{eq, pos}); err != nil {
		t.Fatal(err)
	}

	r := localReplica(t, dir)
	p := r.Plan(t, splits.Request{Table: "fmt.avro", SnapshotID: &first})
	assertRowPathBecause(t, p, "a.avro is AVRO")
	servetest.SameRows(t, r.Rows(t, p), want)
	_, err = r.Planner.Plan(ctx, splits.Request{Table: "fmt.avro", SnapshotID: &first, Mode: splits.ModeFiles})
	if !errors.Is(err, splits.ErrConflict) || !strings.Contains(err.Error(), "avro_ocf") {
		t.Errorf("mode=files: %v, want splits.ErrConflict (409) naming Druid's avro_ocf format", err)
	}

	live := []string{want[1], want[2], want[4]}
	p = r.Plan(t, splits.Request{Table: "fmt.avro"})
	servetest.SameRows(t, r.Rows(t, p), live)
}

// assertRowPathBecause checks that p is on the row path with a warning that
// holds why.
func assertRowPathBecause(t *testing.T, p splits.Plan, why string) {
	t.Helper()
	if p.Path != splits.PathRows {
		t.Fatalf("auto planned %s, want the row path; warnings %q", p.Path, p.Warnings)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "row path although no delete file applies") && strings.Contains(w, why) {
			return
		}
	}
	t.Fatalf("warnings %q do not say that the row path was taken because %s", p.Warnings, why)
}
