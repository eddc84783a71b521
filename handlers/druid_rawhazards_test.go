package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// TestAutoModeRawFileHazards: Druid (the model, which reads raw Parquet by
// column name as Druid does) ingests Iceberg's rows of a table without a
// delete file whose Parquet files it would read differently by column name
// than Iceberg reads them by field id, through the MSQ statement of
// /druid/sql, which reads the row path's streams. (That the planner takes
// the row path, says why, and refuses mode=files is splits'
// TestAutoModeRawFileHazards.)
func TestAutoModeRawFileHazards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, kind := range []string{tablegen.HazardRenamed, tablegen.HazardReused, tablegen.HazardSanitized, tablegen.HazardInitialDefault} {
		t.Run(kind, func(t *testing.T) {
			cat, dir := localWarehouse(t)
			built, err := tablegen.RawNameHazard(ctx, cat, table.Identifier{"raw", "t"}, kind)
			if err != nil {
				t.Fatal(err)
			}
			srv := localServer(t, dir)
			assertDruidIngests(t, srv, "raw.t", built.Current().Rows)
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
	want := sidecartest.DruidRows(t, rows, "id")
	if got := sidecartest.ModelRows(druid, "ds"); !slices.Equal(got, want) {
		t.Fatalf("Druid holds\n%v\nwant\n%v", got, want)
	}
}
