package sidecartest

import (
	"bytes"
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

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// RealDruid is a Druid cluster a test talks to over HTTP: its Overlord and
// Broker. A real Druid sends no notification when a task ends or the
// Broker learns of a segment, so its waits ask again until the answer
// comes (testenv.Poll).
type RealDruid struct {
	overlord, broker string
	client           *http.Client
	// Version is the Druid release, Major its first number.
	Version string
	Major   int
}

// RealDruidFromEnv is the Druid of DRUID_OVERLORD and DRUID_BROKER; without
// them the test cannot run (testenv.Missing).
func RealDruidFromEnv(t testing.TB) *RealDruid {
	t.Helper()
	d := &RealDruid{overlord: os.Getenv("DRUID_OVERLORD"), broker: os.Getenv("DRUID_BROKER"),
		client: &http.Client{Timeout: time.Minute}}
	if d.overlord == "" || d.broker == "" {
		testenv.Missing(t, `no Druid: run "set -a; eval \"$(tools/druid/druid.sh start)\"; set +a" for DRUID_OVERLORD and DRUID_BROKER`)
	}
	var status struct {
		Version string `json:"version"`
	}
	d.do(t, http.MethodGet, d.overlord+"/status", nil, &status)
	d.Version = status.Version
	major, _, _ := strings.Cut(status.Version, ".")
	d.Major, _ = strconv.Atoi(major)
	t.Logf("Druid %s: Overlord %s, Broker %s", status.Version, d.overlord, d.broker)
	return d
}

// do sends a request and decodes a 2xx JSON answer into out; any other
// answer fails t.
func (d *RealDruid) do(t testing.TB, method, u string, body []byte, out any) {
	t.Helper()
	if code, b := d.send(t, method, u, body); code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, u, code, b)
	} else if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, u, err, b)
		}
	}
}

func (d *RealDruid) send(t testing.TB, method, u string, body []byte) (int, []byte) {
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

// SubmitTask posts a task to the Overlord and answers its id.
func (d *RealDruid) SubmitTask(t testing.TB, task []byte) string {
	t.Helper()
	var out struct {
		Task string `json:"task"`
	}
	d.do(t, http.MethodPost, d.overlord+"/druid/indexer/v1/task", task, &out)
	return out.Task
}

// SubmitSQL posts a statement to the Broker's /druid/v2/sql/task and
// answers its task id; ok is false when the Broker has no SQL-based
// ingestion.
func (d *RealDruid) SubmitSQL(t testing.TB, st SQLTask) (id string, ok bool) {
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

// WaitTask waits for a task to end, and fails t unless it succeeded.
func (d *RealDruid) WaitTask(t testing.TB, id string) {
	t.Helper()
	if code, msg := d.TaskEnd(t, id); code != "SUCCESS" {
		t.Fatalf("task %s failed: %s", id, msg)
	}
}

// TaskEnd waits, up to five minutes, for a task to end and answers its
// status code (SUCCESS or FAILED) and error message.
func (d *RealDruid) TaskEnd(t testing.TB, id string) (code, errorMsg string) {
	t.Helper()
	start := time.Now()
	var st struct {
		Status struct {
			StatusCode string `json:"statusCode"`
			ErrorMsg   string `json:"errorMsg"`
			Duration   int64  `json:"duration"`
		} `json:"status"`
	}
	testenv.Poll(t, 5*time.Minute, func() error {
		d.do(t, http.MethodGet, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status", nil, &st)
		switch st.Status.StatusCode {
		case "SUCCESS", "FAILED":
			return nil
		}
		return fmt.Errorf("task %s still %s after %s", id, st.Status.StatusCode, time.Since(start).Round(time.Second))
	})
	t.Logf("task %s: %s in %s (Druid's duration %d ms)", id, st.Status.StatusCode,
		time.Since(start).Round(time.Millisecond), st.Status.Duration)
	return st.Status.StatusCode, st.Status.ErrorMsg
}

// SQL runs a Druid SQL query on the Broker, in UTC with arrays as arrays;
// code is its HTTP status and rows its rows when it succeeded.
func (d *RealDruid) SQL(t testing.TB, query string, params ...any) (code int, rows []map[string]any, body []byte) {
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

// WaitPublished waits, up to two minutes, until the Broker knows a
// published segment of ds that the task id wrote (a segment's version is
// the time its task locked the interval, after the task was created).
func (d *RealDruid) WaitPublished(t testing.TB, ds, id string) {
	t.Helper()
	var st struct {
		Status struct {
			CreatedTime string `json:"createdTime"`
		} `json:"status"`
	}
	d.do(t, http.MethodGet, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status", nil, &st)
	created, err := time.Parse(time.RFC3339Nano, st.Status.CreatedTime)
	if err != nil {
		t.Fatalf("task %s: createdTime %q: %v", id, st.Status.CreatedTime, err)
	}
	since := created.UTC().Format("2006-01-02T15:04:05.000Z")
	testenv.Poll(t, 2*time.Minute, func() error {
		_, rows, _ := d.SQL(t, `SELECT COUNT(*) AS "n" FROM sys.segments WHERE "datasource" = ? AND "is_published" = 1 AND "version" >= ?`, ds, since)
		if len(rows) == 1 && fmt.Sprint(rows[0]["n"]) != "0" {
			return nil
		}
		return fmt.Errorf("the Broker knows no segment of %s that task %s published (version from %s)", ds, id, since)
	})
}

// WaitEmpty waits, up to two minutes, until the Broker answers no row of
// ds (a datasource of tombstones only is no table to its SQL).
func (d *RealDruid) WaitEmpty(t testing.TB, ds string) {
	t.Helper()
	testenv.Poll(t, 2*time.Minute, func() error {
		code, rows, body := d.SQL(t, `SELECT COUNT(*) AS "n" FROM "`+ds+`"`)
		if code == http.StatusOK && (len(rows) == 0 || fmt.Sprint(rows[0]["n"]) == "0") ||
			code != http.StatusOK && strings.Contains(string(body), "not found") {
			return nil
		}
		return fmt.Errorf("%s still holds rows: %s", ds, body)
	})
}

// waitLoaded waits, up to two minutes, until the Broker serves every
// published segment of ds and its SQL knows the datasource.
func (d *RealDruid) waitLoaded(t testing.TB, ds string) {
	t.Helper()
	start := time.Now()
	testenv.Poll(t, 2*time.Minute, func() error {
		_, rows, body := d.SQL(t, `SELECT COUNT(*) AS "n", SUM("is_available") AS "a" FROM sys.segments
			WHERE "datasource" = ? AND "is_published" = 1 AND "is_overshadowed" = 0`, ds)
		if len(rows) != 1 || fmt.Sprint(rows[0]["n"]) == "0" || fmt.Sprint(rows[0]["n"]) != fmt.Sprint(rows[0]["a"]) {
			return fmt.Errorf("%s not loaded: %s", ds, body)
		}
		if code, _, b := d.SQL(t, `SELECT COUNT(*) FROM "`+ds+`"`); code != http.StatusOK {
			return fmt.Errorf("%s loaded but not queryable: %s", ds, b)
		}
		return nil
	})
	t.Logf("%s queryable after %s", ds, time.Since(start).Round(time.Millisecond))
}

// waitSchema waits, up to a minute, until the Broker's SQL types every
// column of ds as types says. The Broker builds a datasource's SQL schema
// from its segments' metadata in the background, so for a while after
// the segments load it can type a column from some of them only (a
// nested column STRING from an all-null segment, and then a query of it
// fails). A column typed otherwise after the minute fails t, as the
// Broker's merge check of Check would.
func (d *RealDruid) waitSchema(t testing.TB, ds string, types map[string]string) {
	t.Helper()
	start := time.Now()
	testenv.Poll(t, time.Minute, func() error {
		_, cols, body := d.SQL(t, `SELECT "COLUMN_NAME", "DATA_TYPE" FROM INFORMATION_SCHEMA.COLUMNS WHERE "TABLE_NAME" = ?`, ds)
		if len(cols) == 0 {
			return fmt.Errorf("the Broker's SQL has no column of %s: %s", ds, body)
		}
		for _, c := range cols {
			col, _ := c["COLUMN_NAME"].(string)
			if typ, _ := c["DATA_TYPE"].(string); col != "__time" && typ != SQLType(types[col]) {
				return fmt.Errorf("the Broker types %s of %s as %s, want %s (%s)", col, ds, typ, SQLType(types[col]), types[col])
			}
		}
		return nil
	})
	if waited := time.Since(start); waited > time.Second {
		t.Logf("the Broker typed %s as its segments are after %s", ds, waited.Round(time.Millisecond))
	}
}

// RealState is what Druid holds of a datasource: its rows as Row.String
// spells them, sorted; the column types of each segment of each time
// chunk (by interval), and the segments' row counts in the same order;
// and the Broker's merge of them, in Druid types.
type RealState struct {
	Rows        []string
	Segments    map[string][]map[string]string
	SegmentRows map[string][]int
	Types       map[string]string
}

// Check holds the datasource ds to the rows want (as RealExpect spells
// them) and each column's type in every segment to types, the Druid types
// of the docs' table, and answers what Druid holds.
func (d *RealDruid) Check(t testing.TB, ds string, want []string, types map[string]string) RealState {
	t.Helper()
	d.waitLoaded(t, ds)
	d.waitSchema(t, ds, types)
	_, rows, body := d.SQL(t, `SELECT * FROM "`+ds+`"`)
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
	state := RealState{Rows: got, Segments: map[string][]map[string]string{}, SegmentRows: map[string][]int{}, Types: map[string]string{}}
	for _, s := range segments {
		// A segment's id is its datasource, start, end, version and
		// partition number (but 0).
		parts := strings.Split(strings.TrimPrefix(s.ID, ds+"_"), "_")
		if len(parts) < 3 {
			t.Fatalf("segment id %s: no interval", s.ID)
		}
		iv := parts[0] + "/" + parts[1]
		st := map[string]string{}
		state.Segments[iv] = append(state.Segments[iv], st)
		state.SegmentRows[iv] = append(state.SegmentRows[iv], s.NumRows)
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
	_, cols, body := d.SQL(t, `SELECT "COLUMN_NAME", "DATA_TYPE" FROM INFORMATION_SCHEMA.COLUMNS WHERE "TABLE_NAME" = ?`, ds)
	if cols == nil {
		t.Fatalf("INFORMATION_SCHEMA.COLUMNS of %s: %s", ds, body)
	}
	for _, c := range cols {
		col, typ := c["COLUMN_NAME"].(string), c["DATA_TYPE"].(string)
		if col == "__time" {
			continue
		}
		state.Types[col] = typ
		if w := SQLType(types[col]); typ != w {
			t.Errorf("the Broker types %s as %s, want %s (%s)", col, typ, w, types[col])
		}
	}
	t.Logf("%s: %d rows, %d segments, %d columns; %d column segments of nested data without an object, typed by what they hold",
		ds, len(got), len(segments), len(cols), unpinned)
	return state
}

// CheckModel runs ingest (the task or statement Druid ran into ds, the
// same bytes) through the model of Druid, internal/druidsim, of this
// Druid's version, and fails t where the model disagrees with what Druid
// holds: the rows, the segments' time chunks, each segment's row count
// and column types, and the Broker's merge of them. Where they disagree,
// Druid is right and the model is to change (docs/testing.md).
func (d *RealDruid) CheckModel(t testing.TB, ds string, real RealState, ingest func(*druidsim.Druid) error) {
	t.Helper()
	start := time.Now()
	m := d.Model()
	if err := ingest(m); err != nil {
		t.Fatalf("the model of Druid %s refuses what Druid ran: %v", d.Version, err)
	}
	if rows := m.RowStrings(ds); !slices.Equal(rows, real.Rows) {
		t.Errorf("the model of Druid %s disagrees with Druid on the rows of %s:\n%s", d.Version, ds, rowsDiff(rows, real.Rows))
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
	for iv, dt := range real.Segments {
		nsegs += len(dt)
		if got, want := chunk(modelSegs[iv], modelRows[iv]), chunk(dt, real.SegmentRows[iv]); !slices.Equal(got, want) {
			t.Errorf("the segments of %s in %s: Druid types their columns\n  %s\nthe model\n  %s",
				ds, iv, strings.Join(want, "\n  "), strings.Join(got, "\n  "))
		}
	}
	for iv := range modelSegs {
		if _, ok := real.Segments[iv]; !ok {
			t.Errorf("the model has a segment of %s in %s, Druid none", ds, iv)
		}
	}
	for col, typ := range m.Types(ds) {
		if col == "__time" {
			continue
		}
		if w := real.Types[col]; SQLType(typ) != w {
			t.Errorf("the Broker types %s of %s as %s, the model %s", col, ds, w, typ)
		}
	}
	if !t.Failed() {
		t.Logf("the model of Druid %s agrees with Druid on %s: %d rows, %d segments in %d time chunks (the model took %s)",
			d.Version, ds, len(real.Rows), nsegs, len(real.Segments), time.Since(start).Round(time.Millisecond))
	}
}

// CheckMaybeEmpty is Check and CheckModel, or for no rows, that Druid
// published no segment of ds and the model none either.
func (d *RealDruid) CheckMaybeEmpty(t testing.TB, ds string, want []string, types map[string]string, ingest func(*druidsim.Druid) error) {
	t.Helper()
	if len(want) > 0 {
		d.CheckModel(t, ds, d.Check(t, ds, want, types), ingest)
		return
	}
	m := d.Model()
	if err := ingest(m); err != nil {
		t.Fatalf("the model of Druid %s refuses what Druid ran: %v", d.Version, err)
	}
	if segs := m.Segments(ds); len(segs) > 0 {
		t.Errorf("the model of Druid %s writes %d segments of no rows, Druid none", d.Version, len(segs))
	}
	_, rows, body := d.SQL(t, `SELECT COUNT(*) AS "n" FROM sys.segments WHERE "datasource" = ? AND "is_published" = 1`, ds)
	// Druid answers a COUNT over no rows of sys.segments with no row.
	if rows == nil || len(rows) > 1 || len(rows) == 1 && fmt.Sprint(rows[0]["n"]) != "0" {
		t.Fatalf("no rows to ingest, but Druid published segments of %s: %s", ds, body)
	}
	t.Logf("%s: no rows, no segment", ds)
}

// Model is a new model of Druid of this Druid's version.
func (d *RealDruid) Model() *druidsim.Druid {
	m := druidsim.New()
	m.Version = d.Major
	return m
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

// SQLType is the SQL type Druid's INFORMATION_SCHEMA gives a column of
// the Druid type typ.
func SQLType(typ string) string {
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

// RealExpect is DruidExpect with the values of nested columns
// (COMPLEX<json>) as the sidecar serves them: Druid keeps a nested
// column's JSON as it reads it, booleans too. A value where the model's
// Expect holds otherwise fails t: the model is the one to change.
func RealExpect(t testing.TB, lines []string, timeColumn string, types map[string]string) []string {
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
