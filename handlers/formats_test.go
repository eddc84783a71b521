package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// TestUnservedFormatsRefusedWhenPlanning: a data file or delete file in a
// format the reader does not read (ORC, Avro) is a 422 when planning,
// naming the file, in every mode, never a plan whose streams fail.
func TestUnservedFormatsRefusedWhenPlanning(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	describe := func(tbl *table.Table, content iceberg.ManifestEntryContent, name string, format iceberg.FileFormat) iceberg.DataFile {
		t.Helper()
		b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, content, icewrite.DataPath(tbl, name), format, nil, nil, nil, 10, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return b.Build()
	}
	orc, err := icewrite.CreateTable(ctx, cat, table.Identifier{"fmt", "orc"}, sc, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := icewrite.CommitDelta(ctx, orc, []iceberg.DataFile{describe(orc, iceberg.EntryContentData, "a.orc", iceberg.OrcFile)}, nil); err != nil {
		t.Fatal(err)
	}
	avro, err := icewrite.CreateTable(ctx, cat, table.Identifier{"fmt", "avrodel"}, sc, 2)
	if err != nil {
		t.Fatal(err)
	}
	if avro, err = icewrite.CommitDelta(ctx, avro, []iceberg.DataFile{describe(avro, iceberg.EntryContentData, "a.parquet", iceberg.ParquetFile)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := icewrite.CommitDelta(ctx, avro, nil, []iceberg.DataFile{describe(avro, iceberg.EntryContentPosDeletes, "d.avro", iceberg.AvroFile)}); err != nil {
		t.Fatal(err)
	}
	srv := localServer(t, dir)
	for _, tt := range []struct{ table, file string }{{"fmt.orc", "a.orc"}, {"fmt.avrodel", "d.avro"}} {
		for _, mode := range []string{"auto", "rows", "files"} {
			resp, body := srv.get(t, "/splits?"+q("table", tt.table, "mode", mode).Encode())
			if resp.StatusCode == http.StatusConflict && mode == "files" && tt.file == "d.avro" {
				continue // mode=files refuses any delete file first
			}
			if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unsupported" || !strings.Contains(string(body), tt.file) {
				t.Errorf("%s, mode=%s: %d %s, want 422 unsupported naming %s", tt.table, mode, resp.StatusCode, body, tt.file)
			}
		}
	}
}
