//go:build druid

package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/token"
)

// TestRealDruid: what /druid/task and /druid/sql write for each table,
// unedited, submitted to a real Druid (tools/druid/druid.sh start; the
// DRUID_OVERLORD and DRUID_BROKER it prints), succeeds; the datasource then
// holds the table's live rows (iceberg-go's oracle), value by value; every
// column has the Druid type of the docs' table in every segment (but the
// segments of nested data that hold no object, which docs/values.md says
// Druid types by what they hold) and in the Broker's merge; and the model
// of Druid (internal/druidsim), given the same task or statement, holds
// what Druid holds (checkModel). Each run writes datasources of its own
// names, so a cluster serves many runs.
func TestRealDruid(t *testing.T) {
	d := realDruidFromEnv(t)
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	demoSrv := localServer(t, dir)
	allCat, allDir, _ := allTypesNullDay(t)
	allSrv := localServer(t, allDir)
	// v3: variants shredded and not, geometry, geography, unknown,
	// timestamp_ns, and deletion vectors.
	v3Cat, v3Dir := localWarehouse(t)
	v3, err := tablegen.V3Types(ctx, v3Cat, table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	v3Srv := localServer(t, v3Dir)
	tnCat, tnDir := localWarehouse(t)
	if err := timeNamedTable(ctx, tnCat); err != nil {
		t.Fatal(err)
	}
	tnSrv := localServer(t, tnDir)
	run := fmt.Sprintf("%d", time.Now().Unix())
	for _, tc := range []struct {
		name, table, timeColumn string
		srv                     *testServer
		extra                   url.Values
		// minVersion is the Druid release that docs/druid.md's version
		// table says the table's specs need.
		minVersion int
	}{
		{"orders", "demo.orders", "order_ts", demoSrv, nil, 0},
		// customers has no delete file, so mode=auto serves raw Parquet,
		// which a Druid without the Parquet extension cannot read.
		{"customers_rows", "demo.customers", "signup_date", demoSrv, q("mode", "rows"), 0},
		// DAY segments, the default. castToType and MSQ's ARRAY columns
		// need Druid 29 and 28.
		{"all_types", "db.all", "id", allSrv, nil, 29},
		{"v3", "db.v3", "id", v3Srv, nil, 0},
		// A table exported from Druid: its time column is named __time.
		// No delete file: the row path, as for customers.
		{"time_named", "db.t", "__time", tnSrv, q("mode", "rows"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d.major < tc.minVersion {
				t.Skipf("its specs need Druid %d (docs/druid.md#druid-versions); this is Druid %s", tc.minVersion, d.version)
			}
			c := map[*testServer]catalog.Catalog{demoSrv: cat, allSrv: allCat, v3Srv: v3Cat, tnSrv: tnCat}[tc.srv]
			tbl, err := c.LoadTable(ctx, table.Identifier(strings.Split(tc.table, ".")))
			if err != nil {
				t.Fatal(err)
			}
			// iceberg-go's scan cannot read geometry, so for v3 the oracle
			// is the rows the builder wrote.
			lines := v3.Current().Rows
			if tc.srv != v3Srv {
				if lines, err = tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID); err != nil {
					t.Fatal(err)
				}
			}
			types := druid.Types(tbl.Schema().Fields(), token.Encoding{})
			want := realExpect(t, lines, tc.timeColumn, types)
			params := func(ds string) url.Values {
				v := q("table", tc.table, "dataSource", ds, "timestampColumn", tc.timeColumn)
				for k, vs := range tc.extra {
					v[k] = vs
				}
				return v
			}
			t.Run("task", func(t *testing.T) {
				ds := "real_" + tc.name + "_task_" + run
				task := tc.srv.druidTask(t, params(ds))
				id := d.submitTask(t, task)
				d.waitTask(t, id)
				d.checkModel(t, ds, d.check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecTask(ctx, task) })
			})
			t.Run("sql", func(t *testing.T) {
				ds := "real_" + tc.name + "_sql_" + run
				st := tc.srv.druidSQL(t, params(ds))
				id, ok := d.submitSQL(t, st)
				if !ok {
					t.Skip("this Druid has no SQL-based ingestion (the Broker answers POST /druid/v2/sql/task with 405)")
				}
				d.waitTask(t, id)
				d.checkModel(t, ds, d.check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecSQL(ctx, st.Query, st.Context) })
			})
			t.Run("sql_replace", func(t *testing.T) {
				ds := "real_" + tc.name + "_replace_" + run
				v := params(ds)
				v.Set("statement", "replace")
				st := tc.srv.druidSQL(t, v)
				id, ok := d.submitSQL(t, st)
				if !ok {
					t.Skip("this Druid has no SQL-based ingestion (the Broker answers POST /druid/v2/sql/task with 405)")
				}
				d.waitTask(t, id)
				d.checkModel(t, ds, d.check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecSQL(ctx, st.Query, st.Context) })
			})
		})
	}
}

// realDruid is a Druid cluster the test talks to over HTTP.
type realDruid struct {
	overlord, broker string
	client           *http.Client
	// version is the Druid release, major its first number.
	version string
	major   int
}

// realDruidFromEnv is the Druid of DRUID_OVERLORD and DRUID_BROKER; without
// them the test cannot run (testenv.Missing).
func realDruidFromEnv(t *testing.T) *realDruid {
	t.Helper()
	d := &realDruid{overlord: os.Getenv("DRUID_OVERLORD"), broker: os.Getenv("DRUID_BROKER"),
		client: &http.Client{Timeout: time.Minute}}
	if d.overlord == "" || d.broker == "" {
		testenv.Missing(t, `no Druid: run "set -a; eval \"$(tools/druid/druid.sh start)\"; set +a" for DRUID_OVERLORD and DRUID_BROKER`)
	}
	var status struct {
		Version string `json:"version"`
	}
	d.do(t, http.MethodGet, d.overlord+"/status", nil, &status)
	d.version = status.Version
	major, _, _ := strings.Cut(status.Version, ".")
	d.major, _ = strconv.Atoi(major)
	t.Logf("Druid %s: Overlord %s, Broker %s", status.Version, d.overlord, d.broker)
	return d
}

// do sends a request and decodes a 2xx JSON answer into out; any other
// answer fails t.
func (d *realDruid) do(t testing.TB, method, u string, body []byte, out any) {
	t.Helper()
	if code, b := d.send(t, method, u, body); code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, u, code, b)
	} else if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, u, err, b)
		}
	}
}

func (d *realDruid) send(t testing.TB, method, u string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return resp.StatusCode, b
}

// submitTask posts a task to the Overlord and answers its id.
func (d *realDruid) submitTask(t testing.TB, task []byte) string {
	t.Helper()
	var out struct {
		Task string `json:"task"`
	}
	d.do(t, http.MethodPost, d.overlord+"/druid/indexer/v1/task", task, &out)
	return out.Task
}

// submitSQL posts a statement to the Broker's /druid/v2/sql/task and
// answers its task id; ok is false when the Broker has no SQL-based
// ingestion.
func (d *realDruid) submitSQL(t testing.TB, st sqlTaskBody) (id string, ok bool) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": st.Query, "context": st.Context})
	if err != nil {
		t.Fatal(err)
	}
	code, b := d.send(t, http.MethodPost, d.broker+"/druid/v2/sql/task", body)
	if code == http.StatusMethodNotAllowed || code == http.StatusNotFound {
		return "", false
	}
	if code/100 != 2 {
		t.Fatalf("Druid refuses the statement: %d %s\n%s", code, b, st.Query)
	}
	var out struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return out.TaskID, true
}

// waitTask waits for a task to end, and fails t unless it succeeded.
func (d *realDruid) waitTask(t testing.TB, id string) {
	t.Helper()
	if code, msg := d.taskEnd(t, id); code != "SUCCESS" {
		t.Fatalf("task %s failed: %s", id, msg)
	}
}

// taskEnd waits for a task to end and answers its status code (SUCCESS or
// FAILED) and error message.
func (d *realDruid) taskEnd(t testing.TB, id string) (code, errorMsg string) {
	t.Helper()
	start := time.Now()
	for {
		var st struct {
			Status struct {
				StatusCode string `json:"statusCode"`
				ErrorMsg   string `json:"errorMsg"`
				Duration   int64  `json:"duration"`
			} `json:"status"`
		}
		d.do(t, http.MethodGet, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status", nil, &st)
		switch st.Status.StatusCode {
		case "SUCCESS", "FAILED":
			t.Logf("task %s: %s in %s (Druid's duration %d ms)", id, st.Status.StatusCode,
				time.Since(start).Round(time.Millisecond), st.Status.Duration)
			return st.Status.StatusCode, st.Status.ErrorMsg
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatalf("task %s still %s after %s", id, st.Status.StatusCode, time.Since(start).Round(time.Second))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// sql runs a Druid SQL query on the Broker; code is its HTTP status and
// rows its rows when it succeeded.
func (d *realDruid) sql(t testing.TB, query string, params ...any) (code int, rows []map[string]any, body []byte) {
	t.Helper()
	ps := make([]map[string]any, len(params))
	for i, p := range params {
		typ := "VARCHAR"
		if _, ok := p.(int); ok {
			typ = "BIGINT"
		}
		ps[i] = map[string]any{"type": typ, "value": p}
	}
	req, err := json.Marshal(map[string]any{"query": query, "parameters": ps, "context": map[string]any{"sqlTimeZone": "UTC", "sqlStringifyArrays": false}})
	if err != nil {
		t.Fatal(err)
	}
	code, body = d.send(t, http.MethodPost, d.broker+"/druid/v2/sql", req)
	if code != http.StatusOK {
		return code, nil, body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("%s: %v in %s", query, err, body)
	}
	return code, rows, body
}

// waitLoaded waits until the Broker serves every published segment of ds
// and its SQL knows the datasource.
func (d *realDruid) waitLoaded(t testing.TB, ds string) {
	t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < 2*time.Minute {
		_, rows, body := d.sql(t, `SELECT COUNT(*) AS "n", SUM("is_available") AS "a" FROM sys.segments
			WHERE "datasource" = ? AND "is_published" = 1 AND "is_overshadowed" = 0`, ds)
		last = string(body)
		if len(rows) == 1 && fmt.Sprint(rows[0]["n"]) != "0" && fmt.Sprint(rows[0]["n"]) == fmt.Sprint(rows[0]["a"]) {
			code, _, b := d.sql(t, `SELECT COUNT(*) FROM "`+ds+`"`)
			if code == http.StatusOK {
				t.Logf("%s queryable after %s", ds, time.Since(start).Round(time.Millisecond))
				return
			}
			last = string(b)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s not loaded after %s: %s", ds, time.Since(start).Round(time.Second), last)
}

// waitSchema waits, up to a minute, until the Broker's SQL types every
// column of ds as types says. The Broker builds a datasource's SQL schema
// from its segments' metadata in the background, so for a while after
// the segments load it can type a column from some of them only (a
// nested column STRING from an all-null segment, and then a query of it
// fails). check reports the types it then has.
func (d *realDruid) waitSchema(t testing.TB, ds string, types map[string]string) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < time.Minute {
		_, cols, _ := d.sql(t, `SELECT "COLUMN_NAME", "DATA_TYPE" FROM INFORMATION_SCHEMA.COLUMNS WHERE "TABLE_NAME" = ?`, ds)
		same := len(cols) > 0
		for _, c := range cols {
			col, _ := c["COLUMN_NAME"].(string)
			if typ, _ := c["DATA_TYPE"].(string); col != "__time" && typ != sqlType(types[col]) {
				same = false
			}
		}
		if same {
			if waited := time.Since(start); waited > time.Second {
				t.Logf("the Broker typed %s as its segments are after %s", ds, waited.Round(time.Millisecond))
			}
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// realState is what Druid holds of a datasource: its rows as Row.String
// spells them, sorted; the column types of each segment of each time
// chunk (by interval), and the segments' row counts in the same order;
// and the Broker's merge of them, in Druid types.
type realState struct {
	rows        []string
	segments    map[string][]map[string]string
	segmentRows map[string][]int
	types       map[string]string
}

// check holds the datasource ds to the rows want (as druidExpect spells
// them) and each column's type in every segment to types, the Druid types
// of the docs' table, and answers what Druid holds.
func (d *realDruid) check(t testing.TB, ds string, want []string, types map[string]string) realState {
	t.Helper()
	d.waitLoaded(t, ds)
	d.waitSchema(t, ds, types)
	_, rows, body := d.sql(t, `SELECT * FROM "`+ds+`"`)
	if rows == nil {
		t.Fatalf("SELECT * FROM %s: %s", ds, body)
	}
	got := make([]string, 0, len(rows))
	for _, r := range rows {
		got = append(got, realRow(t, r, types))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Druid holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// segmentMetadata without merging: one answer per segment.
	q, err := json.Marshal(map[string]any{"queryType": "segmentMetadata", "dataSource": ds,
		"intervals": []string{"-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z"},
		"merge":     false, "analysisTypes": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var segments []struct {
		ID      string `json:"id"`
		NumRows int    `json:"numRows"`
		Columns map[string]struct {
			TypeSignature string `json:"typeSignature"`
		} `json:"columns"`
	}
	d.do(t, http.MethodPost, d.broker+"/druid/v2/", q, &segments)
	if len(segments) == 0 {
		t.Fatalf("no segment of %s answers segmentMetadata", ds)
	}
	unpinned := 0
	state := realState{rows: got, segments: map[string][]map[string]string{}, segmentRows: map[string][]int{}, types: map[string]string{}}
	for _, s := range segments {
		// A segment's id is its datasource, start, end, version and
		// partition number (but 0).
		parts := strings.Split(strings.TrimPrefix(s.ID, ds+"_"), "_")
		if len(parts) < 3 {
			t.Fatalf("segment id %s: no interval", s.ID)
		}
		iv := parts[0] + "/" + parts[1]
		st := map[string]string{}
		state.segments[iv] = append(state.segments[iv], st)
		state.segmentRows[iv] = append(state.segmentRows[iv], s.NumRows)
		for col, c := range s.Columns {
			if col != "__time" {
				st[col] = c.TypeSignature
			}
			w, ok := types[col]
			switch {
			case col == "__time":
			case !ok:
				t.Errorf("segment %s: column %s, which the table does not have", s.ID, col)
			case c.TypeSignature == w:
			case w == "COMPLEX<json>" && (c.TypeSignature == "STRING" || c.TypeSignature == "ARRAY<LONG>"):
				// Nested data cannot be pinned (docs/values.md): a segment
				// without an object in the column is typed by what it holds.
				unpinned++
			default:
				t.Errorf("segment %s: column %s is %s, want %s", s.ID, col, c.TypeSignature, w)
			}
		}
	}
	// The Broker's merge of the segments' types, as SQL sees them.
	_, cols, body := d.sql(t, `SELECT "COLUMN_NAME", "DATA_TYPE" FROM INFORMATION_SCHEMA.COLUMNS WHERE "TABLE_NAME" = ?`, ds)
	if cols == nil {
		t.Fatalf("INFORMATION_SCHEMA.COLUMNS of %s: %s", ds, body)
	}
	for _, c := range cols {
		col, typ := c["COLUMN_NAME"].(string), c["DATA_TYPE"].(string)
		if col == "__time" {
			continue
		}
		state.types[col] = typ
		if w := sqlType(types[col]); typ != w {
			t.Errorf("the Broker types %s as %s, want %s (%s)", col, typ, w, types[col])
		}
	}
	t.Logf("%s: %d rows, %d segments, %d columns; %d column segments of nested data without an object, typed by what they hold",
		ds, len(got), len(segments), len(cols), unpinned)
	return state
}

// checkModel runs ingest (the task or statement Druid ran into ds, the
// same bytes) through the model of Druid, internal/druidsim, of this
// Druid's version, and fails t where the model disagrees with what Druid
// holds: the rows, the segments' time chunks, each segment's row count
// and column types, and the Broker's merge of them. Where they disagree, Druid is
// right and the model is to change (docs/testing.md).
func (d *realDruid) checkModel(t testing.TB, ds string, real realState, ingest func(*druidsim.Druid) error) {
	t.Helper()
	start := time.Now()
	m := druidsim.New()
	m.Version = d.major
	if err := ingest(m); err != nil {
		t.Fatalf("the model of Druid %s refuses what Druid ran: %v", d.version, err)
	}
	if rows := m.RowStrings(ds); !slices.Equal(rows, real.rows) {
		t.Errorf("the model of Druid %s disagrees with Druid on the rows of %s:\n%s", d.version, ds, rowsDiff(rows, real.rows))
	}
	// The segments of a time chunk, each its row count and column types,
	// compared as sets: Druid numbers a chunk's segments in the order its
	// subtasks end.
	chunk := func(segs []map[string]string, rows []int) []string {
		out := make([]string, len(segs))
		for i, s := range segs {
			out[i] = fmt.Sprintf("%d rows: %s", rows[i], canonicalTypes(s))
		}
		slices.Sort(out)
		return out
	}
	modelSegs, modelRows := map[string][]map[string]string{}, map[string][]int{}
	for _, s := range m.Segments(ds) {
		modelSegs[s.Interval] = append(modelSegs[s.Interval], s.Types)
		modelRows[s.Interval] = append(modelRows[s.Interval], s.Rows)
	}
	nsegs := 0
	for iv, dt := range real.segments {
		nsegs += len(dt)
		if got, want := chunk(modelSegs[iv], modelRows[iv]), chunk(dt, real.segmentRows[iv]); !slices.Equal(got, want) {
			t.Errorf("the segments of %s in %s: Druid types their columns\n  %s\nthe model\n  %s",
				ds, iv, strings.Join(want, "\n  "), strings.Join(got, "\n  "))
		}
	}
	for iv := range modelSegs {
		if _, ok := real.segments[iv]; !ok {
			t.Errorf("the model has a segment of %s in %s, Druid none", ds, iv)
		}
	}
	for col, typ := range m.Types(ds) {
		if col == "__time" {
			continue
		}
		if w := real.types[col]; sqlType(typ) != w {
			t.Errorf("the Broker types %s of %s as %s, the model %s", col, ds, w, typ)
		}
	}
	if !t.Failed() {
		t.Logf("the model of Druid %s agrees with Druid on %s: %d rows, %d segments in %d time chunks (the model took %s)",
			d.version, ds, len(real.rows), nsegs, len(real.segments), time.Since(start).Round(time.Millisecond))
	}
}

// canonicalTypes spells a segment's column types in column order.
func canonicalTypes(types map[string]string) string {
	var b strings.Builder
	for _, col := range slices.Sorted(maps.Keys(types)) {
		fmt.Fprintf(&b, "%s:%s ", col, types[col])
	}
	return strings.TrimSpace(b.String())
}

// rowsDiff lists the rows only one of model and real holds.
func rowsDiff(model, real []string) string {
	var b strings.Builder
	for _, r := range model {
		if !slices.Contains(real, r) {
			fmt.Fprintf(&b, "  only the model: %s\n", r)
		}
	}
	for _, r := range real {
		if !slices.Contains(model, r) {
			fmt.Fprintf(&b, "  only Druid:     %s\n", r)
		}
	}
	if b.Len() == 0 {
		return "  the same rows, other counts"
	}
	return b.String()
}

// sqlType is the SQL type Druid's INFORMATION_SCHEMA gives a column of
// the Druid type typ.
func sqlType(typ string) string {
	switch {
	case strings.HasPrefix(typ, "ARRAY<"):
		return "ARRAY"
	case typ == "LONG":
		return "BIGINT"
	case typ == "STRING":
		return "VARCHAR"
	}
	return typ
}

// realRow spells a row of the Broker's SQL answer as druidsim.Row.String
// does: __time in epoch milliseconds, each value in the Go type the model
// holds for its column's Druid type.
func realRow(t testing.TB, r map[string]any, types map[string]string) string {
	t.Helper()
	ts, ok := r["__time"].(string)
	if !ok {
		t.Fatalf("a row without __time: %v", r)
	}
	tm, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		t.Fatal(err)
	}
	cols := make(map[string]any, len(r))
	for k, v := range r {
		if k == "__time" {
			continue
		}
		cols[k] = realValue(t, v, types[k])
	}
	return druidsim.Row{Time: tm.UnixMilli(), Columns: cols}.String()
}

// realValue is a JSON value of the Broker's answer in the Go type the
// model holds for the Druid type typ.
func realValue(t testing.TB, v any, typ string) any {
	t.Helper()
	if str, ok := v.(string); ok && typ == "COMPLEX<json>" {
		// Druid SQL answers a nested column's value as the JSON it holds,
		// in a string.
		dec := json.NewDecoder(strings.NewReader(str))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("a COMPLEX<json> of %q: %v", str, err)
		}
		typ = ""
	}
	switch x := v.(type) {
	case json.Number:
		switch typ {
		case "LONG":
			n, err := x.Int64()
			if err != nil {
				t.Fatalf("a LONG of %s: %v", x, err)
			}
			return n
		case "FLOAT":
			f, err := x.Float64()
			if err != nil {
				t.Fatal(err)
			}
			return float32(f)
		}
		if n, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return n
		}
		f, err := x.Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	case []any:
		elem := strings.TrimSuffix(strings.TrimPrefix(typ, "ARRAY<"), ">")
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = realValue(t, e, elem)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = realValue(t, e, "")
		}
		return out
	}
	return v
}

// TestRealDruidFixtures: every engine-written table of testdata/fixtures
// through /druid/task and /druid/sql with constantTime, the path of a table
// without a time column: Druid ingests every live row at that one time,
// and holds the rows the sidecar serves (which TestFixtures holds to each
// fixture's expected.json) in the types of the docs' table.
func TestRealDruidFixtures(t *testing.T) {
	d := realDruidFromEnv(t)
	ctx := context.Background()
	run := fmt.Sprintf("%d", time.Now().Unix())
	const at = "2000-01-01T00:00:00Z"
	atMillis := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			srv := f.server(t)
			resp, body := srv.get(t, "/splits?"+q("table", "fixtures.t", "mode", "rows").Encode())
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /splits: %d %s", resp.StatusCode, body)
			}
			var p struct {
				Columns []struct{ Name, DruidType string } `json:"columns"`
			}
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			types := make(map[string]string, len(p.Columns))
			for _, c := range p.Columns {
				types[c.Name] = c.DruidType
			}
			want := constantExpect(t, srv.rows(t, srv.plan(t, q("table", "fixtures.t", "mode", "rows"))), atMillis, types)
			params := func(ds string) url.Values {
				return q("table", "fixtures.t", "dataSource", ds, "constantTime", at)
			}
			t.Run("task", func(t *testing.T) {
				ds := fmt.Sprintf("real_fixture%d_task_%s", i, run)
				task := srv.druidTask(t, params(ds))
				d.waitTask(t, d.submitTask(t, task))
				d.checkMaybeEmpty(t, ds, want, types, func(m *druidsim.Druid) error { return m.ExecTask(ctx, task) })
			})
			t.Run("sql", func(t *testing.T) {
				ds := fmt.Sprintf("real_fixture%d_sql_%s", i, run)
				st := srv.druidSQL(t, params(ds))
				id, ok := d.submitSQL(t, st)
				if !ok {
					t.Skip("this Druid has no SQL-based ingestion (the Broker answers POST /druid/v2/sql/task with 405)")
				}
				if len(want) == 0 && d.major < 29 {
					// docs/druid.md#druid-versions: before Druid 29 a
					// statement that reads nothing fails.
					if code, msg := d.taskEnd(t, id); code != "FAILED" || !strings.Contains(msg, "InsertCannotBeEmpty") {
						t.Fatalf("a statement of no rows on Druid %s: %s %s, want FAILED with InsertCannotBeEmpty", d.version, code, msg)
					}
					m := druidsim.New()
					m.Version = d.major
					if err := m.ExecSQL(ctx, st.Query, st.Context); err == nil || !strings.Contains(err.Error(), "InsertCannotBeEmpty") {
						t.Errorf("Druid %s fails a statement of no rows with InsertCannotBeEmpty; the model: %v", d.version, err)
					}
					return
				}
				d.waitTask(t, id)
				d.checkMaybeEmpty(t, ds, want, types, func(m *druidsim.Druid) error { return m.ExecSQL(ctx, st.Query, st.Context) })
			})
		})
	}
}

// checkMaybeEmpty is check and checkModel, or for no rows, that Druid
// published no segment of ds and the model none either.
func (d *realDruid) checkMaybeEmpty(t testing.TB, ds string, want []string, types map[string]string, ingest func(*druidsim.Druid) error) {
	t.Helper()
	if len(want) > 0 {
		d.checkModel(t, ds, d.check(t, ds, want, types), ingest)
		return
	}
	m := druidsim.New()
	m.Version = d.major
	if err := ingest(m); err != nil {
		t.Fatalf("the model of Druid %s refuses what Druid ran: %v", d.version, err)
	}
	if segs := m.Segments(ds); len(segs) > 0 {
		t.Errorf("the model of Druid %s writes %d segments of no rows, Druid none", d.version, len(segs))
	}
	_, rows, body := d.sql(t, `SELECT COUNT(*) AS "n" FROM sys.segments WHERE "datasource" = ? AND "is_published" = 1`, ds)
	// Druid answers a COUNT over no rows of sys.segments with no row.
	if rows == nil || len(rows) > 1 || len(rows) == 1 && fmt.Sprint(rows[0]["n"]) != "0" {
		t.Fatalf("no rows to ingest, but Druid published segments of %s: %s", ds, body)
	}
	t.Logf("%s: no rows, no segment", ds)
}

// constantExpect is druidExpect for rows that all get the time millis.
func constantExpect(t testing.TB, lines []string, millis int64, types map[string]string) []string {
	t.Helper()
	const key = "__sidecar_test_time"
	timed := make([]string, len(lines))
	for i, l := range lines {
		sep := ","
		if strings.TrimSpace(l) == "{}" {
			sep = ""
		}
		timed[i] = fmt.Sprintf(`{"%s":%d%s`, key, millis, sep) + strings.TrimPrefix(l, "{")
	}
	rows, err := druidsim.Expect(timed, key, types)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		delete(r.Columns, key)
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// realExpect is druidExpect with the values of nested columns
// (COMPLEX<json>) as the sidecar serves them: Druid keeps a nested
// column's JSON as it reads it, booleans too. A value where the model's
// Expect holds otherwise fails t: the model is the one to change.
func realExpect(t testing.TB, lines []string, timeColumn string, types map[string]string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		rows, err := druidsim.Expect([]string{l}, timeColumn, types)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			continue
		}
		r := rows[0]
		// A time column named __time is Druid's __time, no column of
		// its own.
		delete(r.Columns, "__time")
		var raw map[string]any
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		for col, typ := range types {
			v, ok := raw[col]
			if typ != "COMPLEX<json>" || !ok {
				continue
			}
			served := realValue(t, v, "")
			model := strings.TrimPrefix(druidsim.Row{Columns: map[string]any{col: r.Columns[col]}}.String(), "0 ")
			if kept := strings.TrimPrefix(druidsim.Row{Columns: map[string]any{col: served}}.String(), "0 "); kept != model {
				t.Errorf("the model of Druid holds %s of the row at %d as %s; Druid keeps %s", col, r.Time, model, kept)
			}
			r.Columns[col] = served
		}
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

// timeNamedTable writes db.t, whose time column is named __time, as in a
// table exported from Druid: three rows, one without a time (which Druid
// does not ingest), with microseconds that Druid truncates.
func timeNamedTable(ctx context.Context, cat catalog.Catalog) error {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "__time", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String})
	tbl, err := icewrite.CreateTable(ctx, cat, table.Identifier{"db", "t"}, sc, 2)
	if err != nil {
		return err
	}
	asc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for i, us := range []int64{1_709_284_500_000_000, 1_709_390_832_123_456, -1} {
		if us < 0 {
			rb.Field(0).AppendNull()
		} else {
			rb.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(us))
		}
		rb.Field(1).(*array.Int64Builder).Append(int64(i + 1))
		rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i+1))
	}
	batch := rb.NewRecordBatch()
	defer batch.Release()
	_, _, err = icewrite.AppendBatch(ctx, tbl, 1, batch)
	return err
}
