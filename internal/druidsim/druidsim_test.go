package druidsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// stmt writes a statement of the sidecar's shape over inline rows.
func stmt(head, where, gran string, rows ...string) string {
	src, _ := json.Marshal(map[string]any{"type": "inline", "data": strings.Join(rows, "\n")})
	q := head + "\nSELECT\n  MILLIS_TO_TIMESTAMP(\"t\") AS \"__time\",\n  \"v\"\nFROM TABLE(\n  EXTERN(\n    '" +
		strings.ReplaceAll(string(src), "'", "''") + "',\n    '{\"type\":\"json\"}',\n    '[{\"name\":\"t\",\"type\":\"long\"},{\"name\":\"v\",\"type\":\"string\"}]'\n  )\n)\n"
	if where != "" {
		q += "WHERE " + where + "\n"
	}
	return q + "PARTITIONED BY " + gran
}

const (
	day1 = 1709251200000 // 2024-03-01
	day2 = day1 + 86_400_000
	day3 = day2 + 86_400_000
)

func row(t int64, v string) string { return fmt.Sprintf(`{"t":%d,"v":%q}`, t, v) }

func values(d *Druid, ds string) string {
	var out []string
	for _, r := range d.Rows(ds) {
		out = append(out, fmt.Sprint(r.Columns["v"]))
	}
	return strings.Join(out, ",")
}

// TestModel: the semantics the sidecar's specs are held against.
func TestModel(t *testing.T) {
	ctx := context.Background()
	d := New()
	replaceDay2 := `REPLACE INTO "ds" OVERWRITE WHERE "__time" >= TIMESTAMP '2024-03-02 00:00:00.000' AND "__time" < TIMESTAMP '2024-03-03 00:00:00.000'`
	steps := []struct {
		sql, want, err string
	}{
		{stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a"), row(day2, "b"), row(day3, "c")), "a,b,c", ""},
		{stmt(`INSERT INTO "ds"`, "", "DAY", row(day2+1, "b2")), "a,b,b2,c", ""},
		// REPLACE swaps the interval it names, and nothing else.
		{stmt(replaceDay2, "", "DAY", row(day2+5, "B")), "a,B,c", ""},
		// Rows outside the OVERWRITE range are refused, the datasource kept.
		{stmt(replaceDay2, "", "DAY", row(day3, "x")), "a,B,c", "InsertTimeOutOfBounds"},
		// unless the statement's WHERE drops them first.
		{stmt(replaceDay2, `MILLIS_TO_TIMESTAMP("t") >= TIMESTAMP '2024-03-02 00:00:00.000' AND MILLIS_TO_TIMESTAMP("t") < TIMESTAMP '2024-03-03 00:00:00.000'`,
			"DAY", row(day3, "x")), "a,c", ""},
		{stmt(replaceDay2, "", "MONTH", row(day2, "x")), "a,c", "not aligned"},
		{stmt(`INSERT INTO "ds"`, "", "DAY", `{"v":"no time"}`), "a,c", "InsertTimeNull"},
		{stmt(`REPLACE INTO "ds" OVERWRITE ALL`, `"t" IS NOT NULL`, "ALL TIME", `{"v":"no time"}`, row(day1, "z")), "z", ""},
		{stmt(`REPLACE INTO "ds" OVERWRITE ALL`, "", "DAY") + " --", "z", "unexpected"},
		{`REPLACE INTO "ds" OVERWRITE ALL SELECT "v" FROM "other" PARTITIONED BY DAY`, "z", "MILLIS_TO_TIMESTAMP"},
	}
	for i, s := range steps {
		err := d.ExecSQL(ctx, s.sql, map[string]any{"failOnEmptyInsert": false})
		if (err == nil) != (s.err == "") || (err != nil && !strings.Contains(err.Error(), s.err)) {
			t.Fatalf("step %d: error %v, want %q", i, err, s.err)
		}
		if got := values(d, "ds"); got != s.want {
			t.Fatalf("step %d: %s, want %s", i, got, s.want)
		}
	}

	// index_parallel: dropExisting replaces its intervals; without
	// intervals, the time chunks its rows fall into.
	task := func(intervals []string, drop bool, rows ...string) []byte {
		gs := map[string]any{"segmentGranularity": "DAY"}
		if intervals != nil {
			gs["intervals"] = intervals
		}
		b, _ := json.Marshal(map[string]any{"type": "index_parallel", "spec": map[string]any{
			"dataSchema": map[string]any{"dataSource": "ds", "timestampSpec": map[string]any{"column": "t", "format": "millis"}, "granularitySpec": gs},
			"ioConfig": map[string]any{"type": "index_parallel", "inputSource": map[string]any{"type": "inline", "data": strings.Join(rows, "\n")},
				"inputFormat": map[string]any{"type": "json"}, "appendToExisting": false, "dropExisting": drop},
		}})
		return b
	}
	if err := d.ExecTask(ctx, task(nil, false, row(day2, "y"))); err != nil || values(d, "ds") != "z,y" {
		t.Fatalf("by time chunk: %v %s", err, values(d, "ds"))
	}
	if err := d.ExecTask(ctx, task([]string{"2024-03-01/2024-03-02"}, true, row(day1-1, "thrown away"))); err != nil || values(d, "ds") != "y" {
		t.Fatalf("an interval emptied: %v %s", err, values(d, "ds"))
	}
}

// TestServer: the task API validates what Druid documents and reports
// the outcome a test picks.
func TestServer(t *testing.T) {
	s := NewServer()
	s.Username, s.Password = "u", "p"
	s.Decide = func(id string, _ Submission) Outcome {
		if id == "query-0002" {
			return Lose
		}
		return Succeed
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	post := func(body, user string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/druid/v2/sql/task", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(user, "p")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, json.NewDecoder(resp.Body).Decode(new(any)))
		return resp.StatusCode, b.String()
	}
	good, _ := json.Marshal(map[string]any{"query": stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a")), "context": map[string]any{}})
	for _, tc := range []struct {
		body, user string
		status     int
	}{
		{string(good), "nobody", 401},
		{`{"query":"x","context":{},"extra":1}`, "u", 400},
		{`{"context":{}}`, "u", 400},
		{string(good), "u", 200},
		{string(good), "u", 200},
	} {
		if status, _ := post(tc.body, tc.user); status != tc.status {
			t.Fatalf("%s as %s: %d, want %d", tc.body, tc.user, status, tc.status)
		}
	}
	status := func(id string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/druid/indexer/v1/task/"+id+"/status", nil)
		req.SetBasicAuth("u", "p")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status("query-0001") != 200 || status("query-0002") != 404 || status("query-9999") != 404 {
		t.Fatal("task status")
	}
	// The lost task did its work: both inserts are in.
	if got := values(s.Druid, "ds"); got != "a,a" {
		t.Fatalf("rows %s", got)
	}
}
