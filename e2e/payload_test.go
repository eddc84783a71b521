package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
)

// TestSpecsWithinPayload: a table whose plan is more URIs than a generated
// task may hold gets its splits packed into fewer, larger ones by
// /druid/task, /druid/sql and /changes, so every spec stays within
// druid.MaxPayloadBytes; Druid (the model, with the Kubernetes task
// runner's TASK_JSON limit) takes each, and ingests every live row.
func TestSpecsWithinPayload(t *testing.T) {
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	t.Parallel()
	// A plan of 150 single-file splits is about 69 KB of URIs, past the
	// 50 KB (5/4 of druid.MaxPayloadBytes) the check below wants: more
	// files only cost a data file written, planned and read each.
	const files = 150
	tbl, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"payload", "t"}, files, files, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	// One split per data file, so that the plan is a URI per file.
	srv := sidecartest.SplittingServer(t, dir, splits.WithTargetSplitSize(1), splits.WithMaxSplitFiles(1))
	params := sidecartest.Q("table", "payload.t", "mode", "rows", "minSplits", strconv.Itoa(files), "dataSource", "bench", "timestampColumn", "event_ts")
	p := srv.Plan(t, sidecartest.Q("table", "payload.t", "mode", "rows", "minSplits", strconv.Itoa(files)))
	if len(p.InputSource.URIs) != files || len(sidecartest.MustJSON(p.InputSource)) < druid.MaxPayloadBytes*5/4 {
		t.Fatalf("the plan is %d URIs in %d bytes", len(p.InputSource.URIs), len(sidecartest.MustJSON(p.InputSource)))
	}

	model := druidsim.NewServer()
	model.Client, model.Runner, model.Concurrency = srv.Client(), druidsim.RunnerKubernetes, 4
	api := httptest.NewServer(model)
	defer api.Close()
	submit := func(path, body string) {
		t.Helper()
		resp, err := http.Post(api.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	// A task's size is its JSON as Druid stores it, compact; a
	// statement's its text.
	check := func(what, spec string, ds string) {
		t.Helper()
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(spec)) == nil {
			spec = compact.String()
		}
		if len(spec) > druid.MaxPayloadBytes {
			t.Fatalf("%s: %d bytes", what, len(spec))
		}
		if errs := model.Errors(); len(errs) > 0 {
			t.Fatalf("%s: Druid refused it: %v", what, errs)
		}
		if got := len(model.Rows(ds)); got != len(want) {
			t.Fatalf("%s: Druid holds %d rows, the table %d", what, got, len(want))
		}
	}

	resp, body := srv.Get(t, "/druid/task?"+params.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/druid/task: %d %s", resp.StatusCode, body)
	}
	var task struct {
		Spec struct {
			IOConfig struct {
				InputSource struct{ URIs []string } `json:"inputSource"`
			} `json:"ioConfig"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &task); err != nil || len(task.Spec.IOConfig.InputSource.URIs) >= files {
		t.Fatalf("/druid/task reads %d URIs (%v)", len(task.Spec.IOConfig.InputSource.URIs), err)
	}
	submit("/druid/indexer/v1/task", string(body))
	check("/druid/task", string(body), "bench")

	params.Set("dataSource", "bench_sql")
	resp, body = srv.Get(t, "/druid/sql?"+params.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/druid/sql: %d %s", resp.StatusCode, body)
	}
	var st struct{ Query string }
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	submit("/druid/v2/sql/task", string(body))
	check("/druid/sql", st.Query, "bench_sql")

	c := srv.Changes(t, sidecartest.Q("table", "payload.t", "mode", "rows", "minSplits", strconv.Itoa(files), "dataSource", "bench_changes", "timeColumn", "event_ts",
		"granularity", "ALL"))
	if len(c.Changes) != 1 || len(c.Statements) != 1 || c.Changes[0].Splits >= files {
		t.Fatalf("/changes: %d changes, %d statements", len(c.Changes), len(c.Statements))
	}
	b, _ := json.Marshal(c.Statements[0].SQL)
	submit("/druid/v2/sql/task", string(b))
	check("/changes", c.Statements[0].SQL.Query, "bench_changes")
}
