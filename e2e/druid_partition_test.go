package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// TestDruidPartitioning: clusteredBy and the native partitionsSpec
// parameters reach /druid/task, /druid/sql and /changes alike; what they
// write, Druid (the model) runs; what Druid refuses, or a column the plan
// does not serve, is a 400 that says why.
func TestDruidPartitioning(t *testing.T) {
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	srv := sidecartest.LocalServer(t, dir)
	h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"part", "events"}, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	if err != nil {
		t.Fatal(err)
	}
	ts := func(d int) *int64 {
		v := (int64(19_783+d)*24 + 1) * 3600 * 1_000_000
		return &v
	}
	if err := h.Append(ctx, tablegen.HistoryRow{ID: 1, TS: ts(0), Cat: "a"}, tablegen.HistoryRow{ID: 2, TS: ts(1), Cat: "b"},
		tablegen.HistoryRow{ID: 3, TS: ts(1), Cat: "c"}); err != nil {
		t.Fatal(err)
	}
	base := "table=part.events&dataSource=events&timestampColumn=ts&"

	body := srv.DruidTask(t, mustQuery(t, base+"clusteredBy=cat,id&partitionsSpec=range&maxRowsPerSegment=1000"))
	var task struct {
		Spec struct {
			TuningConfig struct {
				ForceGuaranteedRollup bool           `json:"forceGuaranteedRollup"`
				PartitionsSpec        map[string]any `json:"partitionsSpec"`
			} `json:"tuningConfig"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &task); err != nil {
		t.Fatal(err)
	}
	ps := task.Spec.TuningConfig.PartitionsSpec
	if !task.Spec.TuningConfig.ForceGuaranteedRollup || ps["type"] != "range" || ps["maxRowsPerSegment"] != float64(1000) ||
		strings.Join(anyStrings(ps["partitionDimensions"]), ",") != "cat,id" {
		t.Fatalf("tuningConfig %+v", task.Spec.TuningConfig)
	}
	d := druidsim.New()
	d.Client = srv.Client()
	if err := d.ExecTask(ctx, body); err != nil {
		t.Fatalf("Druid refuses the task: %v", err)
	}
	if n := len(d.Rows("events")); n != 3 {
		t.Fatalf("task: %d rows, want 3", n)
	}

	sql := srv.DruidSQL(t, mustQuery(t, base+"statement=replace&clusteredBy=cat"))
	if !strings.HasSuffix(sql.Query, "PARTITIONED BY DAY\nCLUSTERED BY \"cat\"") {
		t.Fatalf("statement:\n%s", sql.Query)
	}
	d = druidsim.New()
	d.Client = srv.Client()
	if err := d.ExecSQL(ctx, sql.Query, sql.Context); err != nil {
		t.Fatalf("Druid refuses the statement: %v", err)
	}
	if n := len(d.Rows("events")); n != 3 {
		t.Fatalf("statement: %d rows, want 3", n)
	}

	c := srv.Changes(t, url.Values{"table": {"part.events"}, "timeColumn": {"ts"}, "clusteredBy": {"cat"}, "partitionsSpec": {"hashed"},
		"numShards": {"2"}})
	if len(c.Statements) == 0 || len(c.Changes) == 0 {
		t.Fatalf("changes %+v", c)
	}
	d = druidsim.New()
	d.Client = srv.Client()
	for _, st := range c.Statements {
		if !strings.HasSuffix(st.SQL.Query, "\nCLUSTERED BY \"cat\"") {
			t.Fatalf("statement:\n%s", st.SQL.Query)
		}
		if err := d.ExecSQL(ctx, st.SQL.Query, st.SQL.Context); err != nil {
			t.Fatalf("Druid refuses the statement: %v", err)
		}
	}
	if n := len(d.Rows("events")); n != 3 {
		t.Fatalf("changes' statements: %d rows, want 3", n)
	}
	d = druidsim.New()
	d.Client = srv.Client()
	for _, ch := range c.Changes {
		task.Spec.TuningConfig.PartitionsSpec = nil
		if err := json.Unmarshal(ch.Task, &task); err != nil {
			t.Fatal(err)
		}
		if ps := task.Spec.TuningConfig.PartitionsSpec; !task.Spec.TuningConfig.ForceGuaranteedRollup || ps["type"] != "hashed" ||
			ps["numShards"] != float64(2) {
			t.Fatalf("task %s", ch.Task)
		}
		if err := d.ExecTask(ctx, ch.Task); err != nil {
			t.Fatalf("Druid refuses the task: %v", err)
		}
	}
	if n := len(d.Rows("events")); n != 3 {
		t.Fatalf("changes' tasks: %d rows, want 3", n)
	}

	for _, tc := range []struct{ path, want string }{
		{"/druid/task?" + base + "clusteredBy=nope&partitionsSpec=range", `clusteredBy \"nope\" is not a column the plan serves`},
		{"/druid/task?" + base + "partitionsSpec=range", "range needs clusteredBy"},
		{"/druid/task?" + base + "partitionsSpec=single_dim", "want dynamic, range or hashed"},
		{"/druid/task?" + base + "partitionsSpec=hashed&numShards=2&targetRowsPerSegment=10", "not both"},
		{"/druid/task?" + base + "numShards=0", "want a positive integer"},
		{"/druid/task?" + base + "clusteredBy=cat,,id", "empty name"},
		{"/druid/sql?" + base + "clusteredBy=nope", `clusteredBy \"nope\" is not a column the plan serves`},
		{"/druid/sql?" + base + "partitionsSpec=range", "unknown query parameter partitionsSpec"},
		{"/changes?table=part.events&timeColumn=ts&clusteredBy=nope", `clusteredBy \"nope\" is not a column the plan serves`},
	} {
		resp, body := srv.Get(t, tc.path)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s; want 400 containing %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
}

// mustQuery parses a query string.
func mustQuery(t *testing.T, s string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// anyStrings are the strings of a decoded JSON list.
func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// TestDruidConstantTime: a plan that serves no time column (here the
// columns id and cat) is ingested at one constantTime through /druid/task
// and /druid/sql, both run by Druid (the model) to rows at that time; the
// statement's warnings say so. Asking for both a column and a constant, a
// constant that is no instant, or a constant outside a REPLACE's interval
// is a 400.
func TestDruidConstantTime(t *testing.T) {
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	srv := sidecartest.LocalServer(t, dir)
	h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"notime", "events"}, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	if err != nil {
		t.Fatal(err)
	}
	ts := (int64(19_783)*24 + 1) * 3600 * 1_000_000
	if err := h.Append(ctx, tablegen.HistoryRow{ID: 1, TS: &ts, Cat: "a"}, tablegen.HistoryRow{ID: 2, Cat: "b"}); err != nil {
		t.Fatal(err)
	}
	base := "table=notime.events&dataSource=events&columns=id,cat&constantTime=2000-01-01T00:00:00Z&"
	const at = 946684800000 // 2000-01-01
	check := func(what string, d *druidsim.Druid) {
		t.Helper()
		rows := d.Rows("events")
		if len(rows) != 2 || d.Unparseable() != 0 || len(d.Nulled()) > 0 {
			t.Fatalf("%s: rows %v, %d unparseable, nulled %v", what, rows, d.Unparseable(), d.Nulled())
		}
		for _, r := range rows {
			if r.Time != at || r.Columns["cat"] == nil {
				t.Fatalf("%s: row %s", what, r)
			}
		}
	}

	d := druidsim.New()
	d.Client = srv.Client()
	if err := d.ExecTask(ctx, srv.DruidTask(t, mustQuery(t, base))); err != nil {
		t.Fatalf("Druid refuses the task: %v", err)
	}
	check("task", d)
	// The task is Druid's JSON as it is; its warnings come as headers.
	resp, body := srv.Get(t, "/druid/task?"+base)
	if warned := strings.Join(resp.Header.Values("Sidecar-Warning"), "\n"); resp.StatusCode != http.StatusOK ||
		!strings.Contains(warned, "no time column: every row's __time is 2000-01-01T00:00:00.000Z") {
		t.Fatalf("/druid/task: %d, warnings %q: %.200s", resp.StatusCode, warned, body)
	}

	for _, stmt := range []string{"statement=insert", "statement=replace", "statement=replace&overwrite=2000-01-01/2000-01-02"} {
		sql := srv.DruidSQL(t, mustQuery(t, base+stmt))
		if !strings.Contains(strings.Join(sql.Warnings, "\n"), "no time column: every row's __time is 2000-01-01T00:00:00.000Z") {
			t.Fatalf("%s: warnings %q", stmt, sql.Warnings)
		}
		d := druidsim.New()
		d.Client = srv.Client()
		if err := d.ExecSQL(ctx, sql.Query, sql.Context); err != nil {
			t.Fatalf("%s: Druid refuses the statement: %v\n%s", stmt, err, sql.Query)
		}
		check(stmt, d)
	}

	for _, tc := range []struct{ path, want string }{
		{"/druid/task?" + base + "timestampColumn=ts", "exclude each other"},
		{"/druid/sql?" + base + "statement=replace&overwrite=2000-01-02/2000-01-03", "outside overwrite"},
		{"/druid/task?table=notime.events&dataSource=e&constantTime=yesterday", "constantTime"},
		{"/druid/task?table=notime.events&dataSource=e&constantTime=10000-01-01T00:00:00Z", "years 1 to 9999"},
		{"/druid/task?table=notime.events&dataSource=e", "timestampColumn is required (or constantTime"},
		{"/changes?table=notime.events&timeColumn=ts&constantTime=2000-01-01T00:00:00Z", "timeColumn and constantTime exclude each other"},
		{"/changes?table=notime.events&constantTime=10000-01-01T00:00:00Z", "years 1 to 9999"},
		{"/changes?table=notime.events", "timeColumn is required (or constantTime"},
	} {
		resp, body := srv.Get(t, tc.path)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s; want 400 containing %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
}
