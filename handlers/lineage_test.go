package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// allMeta asks for every metadata column, in another order than the rows
// carry them.
const allMeta = "_partition,_spec_id,_pos,_file,_last_updated_sequence_number,_row_id"

// TestMetadataColumns serves tablegen.Lineage (format version 3, a
// positional delete, a partition spec change) with metadataColumns: the
// plan answer names their types, POST /splits takes them, the request's
// own refusals are 400s, and Druid (the model) ingests them in their types.
// The rows are the reader's TestMetadataColumns, the planner's path and
// refusals splits'.
func TestMetadataColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, lin := sharedLineage(t)
	meta := lin.meta
	srv := localServer(t, dir)

	t.Run("the answer's columns", func(t *testing.T) {
		resp, body := srv.get(t, "/splits?"+q("table", "evo.t", "metadataColumns", allMeta).Encode())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		var a struct {
			Columns []struct{ Name, IcebergType, DruidType string } `json:"columns"`
		}
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range a.Columns {
			got = append(got, c.Name+" "+c.IcebergType+" "+c.DruidType)
		}
		want := []string{"id long LONG", "cat string STRING", "_row_id long LONG", "_last_updated_sequence_number long LONG",
			"_file string STRING", "_pos long LONG", "_spec_id int LONG",
			"_partition struct<1000: cat: optional string, 1001: id_trunc: optional long> COMPLEX<json>"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("POST /splits", func(t *testing.T) {
		resp, body := srv.post(t, "/splits", `{"type":"iceberg","namespace":"evo","tableName":"t","metadataColumns":["_spec_id"]}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"_spec_id"`) || !strings.Contains(string(body), `"mode": "v2"`) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			says  string
		}{
			{"table=evo.t&metadataColumns=_rowid", "want one of _row_id, _last_updated_sequence_number, _file, _pos, _spec_id, _partition"},
			{"table=evo.t&metadataColumns=_pos,", "empty name"},
		} {
			resp, body := srv.get(t, "/splits?"+tc.query)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.says) {
				t.Errorf("%s: %d %s, want 400 saying %q", tc.query, resp.StatusCode, body, tc.says)
			}
		}
	})
	t.Run("Druid ingests them in their types", func(t *testing.T) {
		// Druid's DimensionsSpec refuses a column listed twice
		// (ParserUtils.validateFields, which druidsim models), so a
		// metadata column never shares a table column's name; each
		// then ingests as its explicit dimension type: long, string,
		// and json for _partition (druid.ColumnOf).
		spec := srv.druidTask(t, q("table", "evo.t", "dataSource", "ds", "timestampColumn", "id", "metadataColumns", allMeta))
		for _, dim := range []string{`{"name":"_row_id","type":"long"}`, `{"name":"_partition","type":"json"}`, `{"name":"_file","type":"string"}`} {
			if !strings.Contains(strings.Join(strings.Fields(string(spec)), ""), dim) {
				t.Errorf("task spec lacks %s:\n%s", dim, spec)
			}
		}
		d := druidsim.New()
		d.Client = srv.Client()
		if err := d.ExecTask(ctx, spec); err != nil {
			t.Fatalf("Druid refuses it: %v", err)
		}
		sidecartest.CleanModel(t, d)
		types := d.Types("ds")
		for name, want := range map[string]string{"_row_id": "LONG", "_last_updated_sequence_number": "LONG", "_pos": "LONG",
			"_spec_id": "LONG", "_file": "STRING", "_partition": "COMPLEX<json>"} {
			if types[name] != want {
				t.Errorf("Druid types %s as %s, want %s (all: %v)", name, types[name], want, types)
			}
		}
		if n := len(d.Rows("ds")); n != len(meta) {
			t.Errorf("Druid holds %d rows, want %d", n, len(meta))
		}
	})
}
