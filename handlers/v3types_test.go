package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/token"
)

// TestV3Types: the V3Types table (variants, geometry, geography, unknown)
// plans on the row path, raw files being refused for its variant; its plan
// answer names each column's types, and the geospatial ones' CRS and edge
// algorithm; its rows stream as the builder wrote them; and Druid (the
// model) ingests them through /druid/sql and /druid/task into the Druid
// types of the docs' table.
func TestV3Types(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	built, err := tablegen.V3Types(ctx, cat, table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	srv := localServer(t, dir)

	t.Run("raw files are refused for the variant", func(t *testing.T) {
		first := built.Snapshots[0]
		p := srv.plan(t, q("table", "db.v3", "snapshotId", strconv.FormatInt(first.SnapshotID, 10)))
		assertRowPathBecause(t, p, `column "v" is a variant`)
		resp, body := srv.get(t, "/splits?"+q("table", "db.v3", "mode", "files", "snapshotId", strconv.FormatInt(first.SnapshotID, 10)).Encode())
		if resp.StatusCode != http.StatusConflict || errorCode(t, body) != "conflict" || !strings.Contains(string(body), `column \"v\" is a variant`) {
			t.Fatalf("mode=files: %d %s, want 409 naming the variant", resp.StatusCode, body)
		}
	})

	t.Run("columns", func(t *testing.T) {
		resp, body := srv.get(t, "/splits?"+q("table", "db.v3").Encode())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		var answer struct {
			Columns []map[string]string `json:"columns"`
		}
		if err := json.Unmarshal(body, &answer); err != nil {
			t.Fatal(err)
		}
		want := []map[string]string{
			{"name": "id", "icebergType": "long", "druidType": "LONG"},
			{"name": "v", "icebergType": "variant", "druidType": "COMPLEX<json>"},
			{"name": "g", "icebergType": "geometry", "druidType": "STRING", "crs": "OGC:CRS84"},
			{"name": "gg", "icebergType": "geography", "druidType": "STRING", "crs": "OGC:CRS84", "edgeAlgorithm": "spherical"},
			{"name": "u", "icebergType": "unknown", "druidType": "STRING"},
			{"name": "ts", "icebergType": "timestamp_ns", "druidType": "LONG"},
		}
		if !reflect.DeepEqual(answer.Columns, want) {
			t.Errorf("columns %v, want %v", answer.Columns, want)
		}
		// With a projection, the projected columns only.
		p := srv.plan(t, q("table", "db.v3", "columns", "gg,id"))
		_, body = srv.get(t, "/splits?"+q("table", "db.v3", "columns", "gg,id").Encode())
		if err := json.Unmarshal(body, &answer); err != nil || len(answer.Columns) != 2 || answer.Columns[1]["name"] != "gg" {
			t.Errorf("projected columns %v (%v)", answer.Columns, err)
		}
		for _, row := range srv.rows(t, p) {
			if !strings.HasPrefix(row, `{"id":`) || strings.Count(row, `":`) != 2 {
				t.Errorf("projected row %s", row)
			}
		}
	})

	t.Run("geo=wkb serves base64 WKB", func(t *testing.T) {
		p := srv.plan(t, q("table", "db.v3", "geo", "wkb", "columns", "id,g"))
		got := srv.rows(t, p)
		want := `{"id":1,"g":"` + base64.StdEncoding.EncodeToString(tablegen.V3TypesWKB(1)) + `"}`
		if len(got) == 0 || got[0] != want {
			t.Fatalf("rows %q, want the first %s", got, want)
		}
		resp, body := srv.get(t, "/splits?"+q("table", "db.v3", "geo", "wkx").Encode())
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "want wkt or wkb") {
			t.Errorf("geo=wkx: %d %s, want 400", resp.StatusCode, body)
		}
	})

	t.Run("every snapshot streams as written", func(t *testing.T) {
		for i, want := range built.Snapshots {
			p := srv.plan(t, q("table", "db.v3", "mode", "rows", "snapshotId", strconv.FormatInt(want.SnapshotID, 10)))
			got := srv.rows(t, p)
			if !slices.Equal(got, want.Rows) {
				t.Errorf("snapshot %d (%s):\n got %s\nwant %s", i+1, want.Doc, strings.Join(got, "\n     "), strings.Join(want.Rows, "\n     "))
			}
		}
	})

	// Row lineage of the table, written out from the spec's inheritance
	// rules: the data files are added by snapshots 1, 2, 3 and 5 (4 adds
	// deletion vectors only), so their rows' _last_updated_sequence_number
	// is that snapshot's, and _row_id is first_row_id + _pos, first_row_id
	// being the number of rows the files before it added; the deletion
	// vectors of snapshot 4 leave the other rows' ids and positions alone.
	t.Run("row lineage, by hand", func(t *testing.T) {
		ids := func(rows []string) []int64 {
			var out []int64
			for _, row := range rows {
				var r struct{ ID int64 }
				if err := json.Unmarshal([]byte(row), &r); err != nil {
					t.Fatal(err)
				}
				out = append(out, r.ID)
			}
			return out
		}
		var want []string
		var before []int64
		first := 0
		for _, snap := range []int{1, 2, 3, 5} {
			var added []int64
			for _, id := range ids(built.Snapshots[snap-1].Rows) {
				if !slices.Contains(before, id) {
					added = append(added, id)
				}
			}
			for pos, id := range added {
				if id != 2 && id != 15 {
					want = append(want, fmt.Sprintf(`{"id":%d,"_row_id":%d,"_last_updated_sequence_number":%d,"_pos":%d}`,
						id, first+pos, snap, pos))
				}
			}
			first += len(added)
			before = append(before, added...)
		}
		if len(want) != len(built.Current().Rows) {
			t.Fatalf("%d rows with lineage, the table has %d", len(want), len(built.Current().Rows))
		}
		p := srv.plan(t, q("table", "db.v3", "columns", "id", "metadataColumns", "_row_id,_last_updated_sequence_number,_pos"))
		assertSameRows(t, srv.rows(t, p), want)
	})

	t.Run("Druid ingests the rows in the docs' types", func(t *testing.T) {
		cur := built.Current()
		fields := built.Table.Schema().Fields()
		want := druidExpect(t, cur.Rows, "id", fields)
		wantTypes := druid.Types(fields, token.Encoding{})
		base := q("table", "db.v3", "dataSource", "ds", "timestampColumn", "id")
		task := srv.druidSQL(t, q("table", "db.v3", "dataSource", "ds", "timestampColumn", "id", "statement", "replace"))
		sqlcheck.Require(t, task.Query)
		spec := srv.druidTask(t, base)
		for name, exec := range map[string]func(d *druidsim.Druid) error{
			"MSQ REPLACE":    func(d *druidsim.Druid) error { return d.ExecSQL(ctx, task.Query, task.Context) },
			"index_parallel": func(d *druidsim.Druid) error { return d.ExecTask(ctx, spec) },
		} {
			d := druidsim.New()
			d.Client = srv.Client()
			if err := exec(d); err != nil {
				t.Fatalf("%s: Druid refuses it: %v", name, err)
			}
			cleanModel(t, d)
			if got := modelRows(d, "ds"); !slices.Equal(got, want) {
				t.Errorf("%s: Druid holds\n  %s\nwant\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			types := d.Types("ds")
			for col, typ := range wantTypes {
				if types[col] != typ {
					t.Errorf("%s: column %s is %s in Druid, want %s", name, col, types[col], typ)
				}
			}
		}
	})
}
