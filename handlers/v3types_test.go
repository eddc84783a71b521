package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestV3Types: the V3Types table's plan answer names each column's
// types, and the geospatial ones' CRS and edge algorithm; geo takes wkt or
// wkb only; and Druid (the model) ingests its rows through /druid/sql and
// /druid/task into the Druid types of the docs' table. Its rows are the
// reader's TestV3Types, its row path splits'.
func TestV3Types(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	built, err := tablegen.V3Types(ctx, cat, table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	srv := localServer(t, dir)

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
		_, body = srv.get(t, "/splits?"+q("table", "db.v3", "columns", "gg,id").Encode())
		if err := json.Unmarshal(body, &answer); err != nil || len(answer.Columns) != 2 || answer.Columns[1]["name"] != "gg" {
			t.Errorf("projected columns %v (%v)", answer.Columns, err)
		}
	})

	t.Run("geo=wkx is refused", func(t *testing.T) {
		resp, body := srv.get(t, "/splits?"+q("table", "db.v3", "geo", "wkx").Encode())
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "want wkt or wkb") {
			t.Errorf("geo=wkx: %d %s, want 400", resp.StatusCode, body)
		}
	})

	t.Run("Druid ingests the rows in the docs' types", func(t *testing.T) {
		cur := built.Current()
		fields := built.Table.Schema().Fields()
		want := sidecartest.DruidExpect(t, cur.Rows, "id", fields)
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
			sidecartest.CleanModel(t, d)
			if got := sidecartest.ModelRows(d, "ds"); !slices.Equal(got, want) {
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
