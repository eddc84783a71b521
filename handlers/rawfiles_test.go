package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestAutoModeRawFileHazards: a table without a delete file whose Parquet
// files Druid would read differently by column name than Iceberg reads them
// by field id is served on the row path in auto mode, with a warning that
// says why, and refused with mode=files. The hazard is shown to be real:
// the first data file, looked up by the column's name as Druid does, lacks
// the column or holds another field under its name.
func TestAutoModeRawFileHazards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		kind string
		why  string // a piece of the warning
	}{
		{tablegen.HazardRenamed, `column "customer" was named "name" in schema 0`},
		{tablegen.HazardReused, `the name "a" belonged to another column (field id 2)`},
		{tablegen.HazardSanitized, `store column "user-id" under the name "user_x2Did"`},
		{tablegen.HazardInitialDefault, `column "n" has an initial default`},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			cat, dir := localWarehouse(t)
			built, err := tablegen.RawNameHazard(ctx, cat, table.Identifier{"raw", "t"}, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			srv := localServer(t, dir)
			p := srv.plan(t, q("table", "raw.t"))
			assertRowPathBecause(t, p, tt.why)
			assertSameRows(t, srv.rows(t, p), built.Current().Rows)

			// Druid, through the generated MSQ statement, ingests Iceberg's
			// rows (druidsim reads raw Parquet by column name, as Druid does).
			assertDruidIngests(t, srv, "raw.t", built.Current().Rows)

			// What Druid would find in the first file under the name.
			cur := built.Table.Schema()
			name := built.Current().Columns[1]
			want, ok := cur.FindFieldByName(name)
			if !ok {
				t.Fatalf("the schema has no column %q", name)
			}
			first := ""
			for _, s := range p.Splits {
				if path.Base(s.DataFile) == tablegen.DataFileName(1) {
					first = s.DataFile
				}
			}
			if first == "" {
				t.Fatalf("the plan has no split of %s", tablegen.DataFileName(1))
			}
			if col := parquetColumn(t, first, name); col != nil && col.ID() == want.ID {
				t.Fatalf("%s stores column %q as field %d, as the schema does: no hazard to show", first, name, want.ID)
			}

			resp, body := srv.get(t, "/splits?"+q("table", "raw.t", "mode", "files").Encode())
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != http.StatusConflict ||
				errorCode(t, body) != "conflict" || !strings.Contains(e.Error.Message, tt.why) {
				t.Fatalf("mode=files: %d %s, want 409 conflict naming %q", resp.StatusCode, body, tt.why)
			}
		})
	}

	// Tables of the evolution builders, at a snapshot without delete files.
	for _, tt := range []struct {
		name  string
		build func(context.Context, *hadoopCatalog, table.Identifier) (*tablegen.Built, error)
		why   string
	}{
		{"name mapping", func(ctx context.Context, c *hadoopCatalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.Migrated(ctx, c, id, true)
		}, "the table has a name mapping"},
		{"identity partition not stored", func(ctx context.Context, c *hadoopCatalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.IdentityPartitioned(ctx, c, id)
		}, `may not store the source column of identity partition "region"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat, dir := localWarehouse(t)
			built, err := tt.build(ctx, cat, table.Identifier{"evo", "t"})
			if err != nil {
				t.Fatal(err)
			}
			srv := localServer(t, dir)
			first := built.Snapshots[0]
			p := srv.plan(t, q("table", "evo.t", "snapshotId", strconv.FormatInt(first.SnapshotID, 10)))
			for _, s := range p.Splits {
				if s.PositionDeleteFiles+s.EqualityDeleteFiles+s.DeletionVectorFiles > 0 {
					t.Fatalf("snapshot 1 has delete files (%+v): not the case under test", s)
				}
			}
			assertRowPathBecause(t, p, tt.why)
			assertSameRows(t, srv.rows(t, p), first.Rows)
		})
	}
}

// assertDruidIngests runs the MSQ statement of /druid/sql for table (time
// column id) in the Druid model and checks that the datasource then holds
// exactly rows.
func assertDruidIngests(t *testing.T, srv *testServer, table string, rows []string) {
	t.Helper()
	resp, body := srv.get(t, "/druid/sql?"+q("table", table, "dataSource", "ds", "timestampColumn", "id", "statement", "replace").Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/druid/sql: %d %s", resp.StatusCode, body)
	}
	var task struct {
		Query   string         `json:"query"`
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(body, &task); err != nil {
		t.Fatal(err)
	}
	druid := druidsim.New()
	druid.Client = srv.Client()
	if err := druid.ExecSQL(context.Background(), task.Query, task.Context); err != nil {
		t.Fatalf("Druid refuses the statement: %v\n%s", err, task.Query)
	}
	want := druidRows(t, rows, "id")
	if got := modelRows(druid, "ds"); !slices.Equal(got, want) {
		t.Fatalf("Druid holds\n%v\nwant\n%v", got, want)
	}
}

// assertRowPathBecause checks that p is on the row path with a warning that
// holds why.
func assertRowPathBecause(t *testing.T, p plan, why string) {
	t.Helper()
	if p.Mode != "v2" || p.InputFormat.Type != "json" {
		t.Fatalf("auto planned %s (%s), want the row path; warnings %q", p.Mode, p.InputFormat.Type, p.Warnings)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "row path although no delete file applies") && strings.Contains(w, why) {
			return
		}
	}
	t.Fatalf("warnings %q do not say that the row path was taken because %s", p.Warnings, why)
}

// parquetColumn returns the top-level column of the Parquet file at path
// with the given name, or nil: what a reader that goes by names finds.
func parquetColumn(t *testing.T, path, name string) *parquet.Column {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pf.Root().Column(name)
}
