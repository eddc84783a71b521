package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// allMeta asks for every metadata column, in another order than the rows
// carry them.
const allMeta = "_partition,_spec_id,_pos,_file,_last_updated_sequence_number,_row_id"

// TestMetadataColumns serves tablegen.Lineage (format version 3, a
// positional delete, a partition spec change) with metadataColumns and
// holds the rows to the builder's hand-derived rows and, for row lineage,
// to iceberg-go's ReadTasks (table.WithRowLineage) at every snapshot.
func TestMetadataColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, lin := sharedLineage(t)
	built, meta := lin.built, lin.meta
	srv := localServer(t, dir)
	metaCols := []string{"id", "cat", "_row_id", "_last_updated_sequence_number", "_file", "_pos", "_spec_id", "_partition"}

	t.Run("every column, by hand", func(t *testing.T) {
		got := srv.rows(t, srv.plan(t, q("table", "evo.t", "metadataColumns", allMeta)))
		assertKeyOrder(t, got, metaCols)
		assertSameRows(t, got, meta)
	})
	t.Run("row lineage at every snapshot, by iceberg-go", func(t *testing.T) {
		for i, s := range built.Snapshots {
			p := srv.plan(t, q("table", "evo.t", "snapshotId", strconv.FormatInt(s.SnapshotID, 10),
				"metadataColumns", "_row_id,_last_updated_sequence_number"))
			oracle, err := tablegen.OracleLineageRows(ctx, built.Table, s.SnapshotID)
			if err != nil {
				t.Fatalf("snapshot %d: oracle: %v", i+1, err)
			}
			assertSameRows(t, srv.rows(t, p), oracle)
		}
	})
	t.Run("_pos alone", func(t *testing.T) {
		first := strconv.FormatInt(built.Snapshots[0].SnapshotID, 10)
		got := srv.rows(t, srv.plan(t, q("table", "evo.t", "snapshotId", first, "metadataColumns", "_pos")))
		assertKeyOrder(t, got, []string{"id", "cat", "_pos"})
		assertSameRows(t, got, []string{`{"id":1,"cat":"a","_pos":0}`, `{"id":2,"cat":"a","_pos":1}`,
			`{"id":3,"cat":"a","_pos":2}`, `{"id":4,"cat":"a","_pos":3}`})
	})
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
	t.Run("refusals, and a table of format version 2", func(t *testing.T) {
		dir2, _ := sharedEvolution(t, "evolution")
		v2 := localServer(t, dir2)
		// A table without delete files: raw files, unless a metadata
		// column is asked for, which a raw file cannot carry.
		plainDir, _ := sharedScenarios(t)
		plain := localServer(t, plainDir)
		if p := plain.plan(t, q("table", "scenarios.no_deletes")); p.Mode != "v1" {
			t.Fatalf("without metadata columns: mode %s, want v1 (%q)", p.Mode, p.Warnings)
		}
		if p := plain.plan(t, q("table", "scenarios.no_deletes", "metadataColumns", "_file")); p.Mode != "v2" {
			t.Fatalf("with _file: mode %s, want v2", p.Mode)
		}
		for _, tc := range []struct {
			srv   *testServer
			query string
			code  int
			says  string
		}{
			{srv, "table=evo.t&metadataColumns=_rowid", 400, "want one of _row_id, _last_updated_sequence_number, _file, _pos, _spec_id, _partition"},
			{srv, "table=evo.t&metadataColumns=_pos,", 400, "empty name"},
			{srv, "table=evo.t&metadataColumns=_pos&mode=files", 400, "metadataColumns need the row path"},
			{v2, "table=evo.t&metadataColumns=_pos,_row_id", 400, "row lineage needs format version 3, and evo.t is version 2"},
		} {
			resp, body := tc.srv.get(t, "/splits?"+tc.query)
			if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.says) {
				t.Errorf("%s: %d %s, want %d saying %q", tc.query, resp.StatusCode, body, tc.code, tc.says)
			}
		}
		// A v2 table serves the columns that need no row lineage.
		got := v2.rows(t, v2.plan(t, q("table", "evo.t", "metadataColumns", "_spec_id", "columns", "id")))
		if len(got) == 0 || !strings.HasSuffix(got[0], `,"_spec_id":0}`) {
			t.Errorf("rows %q", got)
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
		cleanModel(t, d)
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
