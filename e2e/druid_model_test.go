package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/golden"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestDruidIngestsEveryType: the all-types table through /druid/sql
// (INSERT, REPLACE of an interval, with ISO timestamps), /druid/task and
// /changes, each run by the Druid model: no value is lost on the way,
// both engines give each column the Druid type of the docs' table, and the
// datasource holds the table's rows in those types.
func TestDruidIngestsEveryType(t *testing.T) {
	ctx := context.Background()
	dir, b := sharedAllTypes(t)
	srv := sidecartest.LocalServer(t, dir)
	want := sidecartest.DruidExpect(t, b.Current().Rows, "id", b.Table.Schema().Fields())
	base := sidecartest.Q("table", "db.all", "dataSource", "ds", "timestampColumn", "id")
	with := func(kv ...string) url.Values {
		v := maps.Clone(base)
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	wantTypes := druid.Types(b.Table.Schema().Fields(), token.Encoding{})
	run := func(t *testing.T, exec func(d *druidsim.Druid) error, nullTimes ...int) *druidsim.Druid {
		t.Helper()
		d := druidsim.New()
		d.Client = srv.Client()
		if err := exec(d); err != nil {
			t.Fatalf("Druid refuses it: %v", err)
		}
		sidecartest.CleanModel(t, d, nullTimes...)
		return d
	}
	// The generated text, held to golden files.
	for name, path := range map[string]string{
		"alltypes_msq_replace.json": "/druid/sql?" + with("statement", "replace", "overwrite", "1970-01-01/P1Y", "partitionedBy", "year").Encode(),
		"alltypes_task.json":        "/druid/task?" + with("segmentGranularity", "week").Encode(),
	} {
		resp, body := srv.Get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		golden.Check(t, name, sidecartest.NormalizeURIs(srv.URL, body))
	}
	var statements []string
	sqlOf := func(t *testing.T, v url.Values) func(d *druidsim.Druid) error {
		task := srv.DruidSQL(t, v)
		statements = append(statements, task.Query)
		return func(d *druidsim.Druid) error { return d.ExecSQL(ctx, task.Query, task.Context) }
	}
	taskOf := func(t *testing.T, v url.Values) func(d *druidsim.Druid) error {
		spec := srv.DruidTask(t, v)
		return func(d *druidsim.Druid) error { return d.ExecTask(ctx, spec) }
	}
	var typesSeen []map[string]string
	for _, tc := range []struct {
		name string
		exec func(t *testing.T) func(d *druidsim.Druid) error
	}{
		{"MSQ INSERT", func(t *testing.T) func(d *druidsim.Druid) error { return sqlOf(t, with("statement", "insert")) }},
		{"MSQ REPLACE ALL", func(t *testing.T) func(d *druidsim.Druid) error { return sqlOf(t, with("statement", "replace")) }},
		{"MSQ REPLACE of the first rows' year", func(t *testing.T) func(d *druidsim.Druid) error {
			// ids 1 to 4 are epoch milliseconds: all in 1970.
			return sqlOf(t, with("statement", "replace", "overwrite", "1970-01-01/P1Y", "partitionedBy", "year"))
		}},
		{"index_parallel", func(t *testing.T) func(d *druidsim.Druid) error { return taskOf(t, base) }},
		{"index_parallel by week", func(t *testing.T) func(d *druidsim.Druid) error {
			return taskOf(t, with("segmentGranularity", "P1W"))
		}},
		{"the initial load of /changes, as a statement", func(t *testing.T) func(d *druidsim.Druid) error {
			c := srv.Changes(t, url.Values{"table": {"db.all"}, "timeColumn": {"id"}, "dataSource": {"ds"}})
			if len(c.Changes) != 1 || c.Changes[0].Interval != "ALL" {
				t.Fatalf("changes %v", c.Intervals())
			}
			statements = append(statements, c.Changes[0].SQL.Query)
			return func(d *druidsim.Druid) error { return d.ExecSQL(ctx, c.Changes[0].SQL.Query, c.Changes[0].SQL.Context) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := run(t, tc.exec(t))
			if got := sidecartest.ModelRows(d, "ds"); !slices.Equal(got, want) {
				t.Fatalf("Druid holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			types := d.Types("ds")
			for col, typ := range wantTypes {
				if got := types[col]; got != typ {
					t.Errorf("column %s is %s in Druid, want %s", col, got, typ)
				}
			}
			typesSeen = append(typesSeen, types)
		})
	}
	// The engines agree on every column's type.
	for i := 1; i < len(typesSeen); i++ {
		for col, typ := range typesSeen[0] {
			if got := typesSeen[i][col]; got != typ {
				t.Errorf("column %s: %s in one run, %s in another", col, typ, got)
			}
		}
	}

	// With timestamps=iso the timestamps are strings: STRING columns, and
	// __time is TIME_PARSE of the ISO text.
	t.Run("ISO timestamps", func(t *testing.T) {
		task := srv.DruidSQL(t, sidecartest.Q("table", "db.all", "dataSource", "ds", "timestampColumn", "tstz", "timestamps", "iso", "statement", "replace"))
		statements = append(statements, task.Query)
		if !strings.Contains(task.Query, `TIME_PARSE("tstz") AS "__time"`) || !strings.Contains(task.Query, `{"name":"tstz","type":"string"}`) {
			t.Fatalf("statement %s", task.Query)
		}
		d := run(t, func(d *druidsim.Druid) error { return d.ExecSQL(ctx, task.Query, task.Context) })
		if ty := d.Types("ds"); ty["tstz"] != "STRING" || ty["ts"] != "STRING" || ty["dt"] != "LONG" {
			t.Fatalf("types %v", ty)
		}
		spec := srv.DruidTask(t, sidecartest.Q("table", "db.all", "dataSource", "ds", "timestampColumn", "tstz", "timestamps", "iso"))
		// Row 2's tstz is null: a native task counts it as unparseable.
		d2 := run(t, func(d *druidsim.Druid) error { return d.ExecTask(ctx, spec) }, 1)
		if got, want := sidecartest.ModelRows(d2, "ds"), sidecartest.ModelRows(d, "ds"); !slices.Equal(got, want) || len(got) != 3 {
			t.Fatalf("native holds\n  %s\nMSQ\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	})
	sqlcheck.Require(t, statements...)
}

// TestRawFilesReadLikeRows: for every column of the all-types table, Druid
// (the model's Parquet reader, which follows Druid's) ingesting the raw
// data file and ingesting the row stream give the same datasource, under
// MSQ and native ingestion, exactly for the columns auto mode serves raw.
// For the others (timestamp_ns, uuid, maps with non-string keys) they
// differ, which is why the table plans on the row path. NaN and the
// infinities differ too: the raw file keeps them, JSON serves null.
func TestRawFilesReadLikeRows(t *testing.T) {
	ctx := context.Background()
	dir, built := sharedAllTypes(t)
	srv := sidecartest.LocalServer(t, dir)
	auto := srv.Plan(t, sidecartest.Q("table", "db.all"))
	if auto.Mode != "v2" || !strings.Contains(strings.Join(auto.Warnings, " "), `column "ts_ns" is timestamp_ns`) {
		t.Fatalf("auto mode on the all-types table: %s, warnings %q", auto.Mode, auto.Warnings)
	}
	resp, body := srv.Get(t, "/splits?table=db.all&mode=files")
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "timestamp_ns") {
		t.Fatalf("mode=files: %d %s", resp.StatusCode, body)
	}
	if len(auto.Splits) != 1 {
		t.Fatalf("%d splits", len(auto.Splits))
	}
	// The raw file, served as Druid would fetch it.
	files := httptest.NewServer(http.FileServer(http.Dir("/")))
	defer files.Close()
	rawURI := files.URL + filepath.ToSlash(strings.TrimPrefix(auto.Splits[0].DataFile, "file://"))

	tbl := built.Table
	idField, _ := tbl.Schema().FindFieldByName("id")
	differ := map[string]bool{"ts_ns": true, "tstz_ns": true, "u": true, "m_int": true, "f": true, "d": true}
	for _, f := range tbl.Schema().Fields() {
		if f.Name == "id" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			fields := []iceberg.NestedField{idField, f}
			rows := srv.Plan(t, sidecartest.Q("table", "db.all", "mode", "rows", "columns", "id,"+f.Name))
			sources := map[string]druid.Source{
				"raw": {InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{rawURI}}, InputFormat: druid.InputFormat{Type: "parquet"},
					Fields: fields, TimeField: idField},
				"rows": {InputSource: druid.HTTPInputSource{Type: "http", URIs: rows.InputSource.URIs}, InputFormat: druid.InputFormat{Type: "json"},
					Fields: fields, TimeField: idField},
			}
			got := map[string]string{}
			for path, src := range sources {
				st := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityAll}
				sql, err := st.SQL(src)
				if err != nil {
					t.Fatal(err)
				}
				spec, err := druid.Task{DataSource: "ds", SegmentGranularity: druid.GranularityAll, SubTasks: 1}.Spec(src)
				if err != nil {
					t.Fatal(err)
				}
				specJSON, _ := json.Marshal(spec)
				for engine, exec := range map[string]func(d *druidsim.Druid) error{
					"MSQ":    func(d *druidsim.Druid) error { return d.ExecSQL(ctx, sql, st.Context(src)) },
					"native": func(d *druidsim.Druid) error { return d.ExecTask(ctx, specJSON) },
				} {
					d := druidsim.New()
					d.Client = srv.Client()
					if path == "raw" {
						d.Client = files.Client()
					}
					if err := exec(d); err != nil {
						t.Fatalf("%s over %s: %v", engine, path, err)
					}
					got[path+" "+engine] = fmt.Sprintf("%v %s", d.Types("ds"), strings.Join(sidecartest.ModelRows(d, "ds"), "; "))
				}
			}
			for _, engine := range []string{"MSQ", "native"} {
				same := got["raw "+engine] == got["rows "+engine]
				if same == differ[f.Name] {
					t.Errorf("%s: raw file and row stream alike: %v, want %v\n raw:  %s\n rows: %s",
						engine, same, !differ[f.Name], got["raw "+engine], got["rows "+engine])
				}
			}
		})
	}
}

// TestDruidSQLOverwrite: a bounded REPLACE reads only its interval's rows
// and leaves the rest of the datasource alone; what Druid would refuse is
// a 400 that says why; an interval with nothing to read is emptied; an
// INSERT or a task with nothing to read is a 409.
func TestDruidSQLOverwrite(t *testing.T) {
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"ow", "events"}, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	if err != nil {
		t.Fatal(err)
	}
	hour := func(d, h int) *int64 {
		v := (int64(19_783+d)*24 + int64(h)) * 3600 * 1_000_000 // 2024-03-01 + d days
		return &v
	}
	if err := h.Append(ctx, tablegen.HistoryRow{ID: 1, TS: hour(0, 1)}, tablegen.HistoryRow{ID: 2, TS: hour(1, 2)},
		tablegen.HistoryRow{ID: 3, TS: hour(1, 3)}, tablegen.HistoryRow{ID: 4, TS: hour(2, 4)}); err != nil {
		t.Fatal(err)
	}
	srv := sidecartest.LocalServer(t, dir)
	d := druidsim.New()
	d.Client = srv.Client()
	// A cluster whose SQL time zone is not UTC: the statements must say
	// sqlTimeZone, or their bounds would move.
	d.SQLTimeZone = "America/New_York"
	base := sidecartest.Q("table", "ow.events", "dataSource", "ev", "timestampColumn", "ts", "statement", "replace")
	with := func(kv ...string) url.Values {
		v := maps.Clone(base)
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	exec := func(task sidecartest.SQLTask) {
		t.Helper()
		if err := d.ExecSQL(ctx, task.Query, task.Context); err != nil {
			t.Fatalf("Druid refuses it: %v\n%s", err, task.Query)
		}
		sidecartest.CleanModel(t, d)
	}
	ids := func() string {
		var out []string
		for _, r := range d.Rows("ev") {
			out = append(out, fmt.Sprint(r.Columns["id"]))
		}
		return strings.Join(out, ",")
	}
	all := srv.DruidSQL(t, base)
	exec(all)
	if ids() != "1,2,3,4" {
		t.Fatalf("after REPLACE ALL: %s", ids())
	}
	if err := h.Delete(ctx, table.WriteModeMergeOnRead, 2); err != nil {
		t.Fatal(err)
	}
	day2 := srv.DruidSQL(t, with("overwrite", "2024-03-02/P1D"))
	var statements = []string{all.Query, day2.Query}
	exec(day2)
	if ids() != "1,3,4" {
		t.Fatalf("after REPLACE of 2024-03-02: %s", ids())
	}
	if err := h.Delete(ctx, table.WriteModeMergeOnRead, 3); err != nil {
		t.Fatal(err)
	}
	// The day's file is still planned, but its rows are all deleted:
	// the REPLACE reads nothing and empties the day.
	noRows := srv.DruidSQL(t, with("overwrite", "2024-03-02T00:00:00Z/2024-03-03T00:00:00Z"))
	if noRows.Context["failOnEmptyInsert"] != false {
		t.Fatalf("a REPLACE's context %v", noRows.Context)
	}
	exec(noRows)
	if ids() != "1,4" {
		t.Fatalf("after emptying 2024-03-02: %s", ids())
	}
	// No file at all for the day: the inline stand-in, and a warning.
	empty := srv.DruidSQL(t, with("overwrite", "2024-03-05T00:00:00+00:00/P1D"))
	statements = append(statements, noRows.Query, empty.Query)
	if !strings.Contains(empty.Query, `"type":"inline"`) || !strings.Contains(strings.Join(empty.Warnings, " "), "Druid 29") {
		t.Fatalf("the empty day reads %s, warnings %q", empty.Query, empty.Warnings)
	}
	exec(empty)
	if ids() != "1,4" {
		t.Fatalf("after emptying 2024-03-05: %s", ids())
	}
	// Before Druid 29 an empty REPLACE fails (the docs say so).
	old := druidsim.New()
	old.Client, old.Version = srv.Client(), 28
	if err := old.ExecSQL(ctx, empty.Query, empty.Context); err == nil || !strings.Contains(err.Error(), "InsertCannotBeEmpty") {
		t.Fatalf("Druid 28: %v", err)
	}
	sqlcheck.Require(t, statements...)

	for _, tc := range []struct{ name, query, status, want string }{
		{"not aligned", with("overwrite", "2024-03-02T06:00:00Z/2024-03-03T00:00:00Z").Encode(), "400", "not aligned to partitionedBy DAY"},
		{"not aligned to a month", with("overwrite", "2024-03-02/P1D", "partitionedBy", "month").Encode(), "400", "not aligned to partitionedBy MONTH"},
		{"bounded with ALL", with("overwrite", "2024-03-02/P1D", "partitionedBy", "all").Encode(), "400", "PARTITIONED BY ALL TIME"},
		{"a granularity Druid does not name", with("partitionedBy", "P2D").Encode(), "400", "partitionedBy"},
		{"an INSERT of nothing", with("statement", "insert", "icebergFilter", `{"type":"equals","filterColumn":"id","filterValue":99}`).Encode(),
			"409", "nothing_to_read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.Get(t, "/druid/sql?"+tc.query)
			if strconv.Itoa(resp.StatusCode) != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s; want %s containing %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	resp, body := srv.Get(t, "/druid/task?"+sidecartest.Q("table", "ow.events", "dataSource", "ev", "timestampColumn", "ts",
		"icebergFilter", `{"type":"equals","filterColumn":"id","filterValue":99}`).Encode())
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "nothing_to_read") {
		t.Fatalf("a task of nothing: %d %s", resp.StatusCode, body)
	}
}

// TestDemoTablesInDruid: the demo tables through every generator, run by
// the Druid model, hold their live rows.
func TestDemoTablesInDruid(t *testing.T) {
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	srv := sidecartest.LocalServer(t, dir)
	for _, tc := range []struct{ table, timeColumn string }{{"demo.orders", "order_ts"}, {"demo.customers", "signup_date"}} {
		t.Run(tc.table, func(t *testing.T) {
			tbl, err := cat.LoadTable(ctx, table.Identifier(strings.Split(tc.table, ".")))
			if err != nil {
				t.Fatal(err)
			}
			lines, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			want := sidecartest.DruidExpect(t, lines, tc.timeColumn, tbl.Schema().Fields())
			v := sidecartest.Q("table", tc.table, "dataSource", "ds", "timestampColumn", tc.timeColumn)
			task := srv.DruidSQL(t, v)
			spec := srv.DruidTask(t, v)
			c := srv.Changes(t, url.Values{"table": {tc.table}, "timeColumn": {tc.timeColumn}, "dataSource": {"ds"}})
			sqlcheck.Require(t, task.Query, c.Changes[0].SQL.Query)
			for name, exec := range map[string]func(d *druidsim.Druid) error{
				"/druid/sql":  func(d *druidsim.Druid) error { return d.ExecSQL(ctx, task.Query, task.Context) },
				"/druid/task": func(d *druidsim.Druid) error { return d.ExecTask(ctx, spec) },
				"/changes":    func(d *druidsim.Druid) error { return d.ExecSQL(ctx, c.Changes[0].SQL.Query, c.Changes[0].SQL.Context) },
			} {
				d := druidsim.New()
				d.Client = srv.Client()
				if err := exec(d); err != nil {
					t.Fatalf("%s: Druid refuses it: %v", name, err)
				}
				sidecartest.CleanModel(t, d)
				if got := sidecartest.ModelRows(d, "ds"); !slices.Equal(got, want) {
					t.Fatalf("%s: Druid holds\n  %s\nwant\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
			}
		})
	}
}
