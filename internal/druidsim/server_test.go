package druidsim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// call sends one request as a client with the credentials u:p would, and
// does not follow redirects.
func call(t *testing.T, method, url, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("u", "p")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func sqlBody(query string, ctx map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "context": ctx})
	return string(b)
}

// TestProcesses: each Druid process serves its own endpoints. The Broker
// takes SQL tasks but has no task API; the Overlord the reverse; a Router
// proxies the task API only with the management proxy; a standby Overlord
// redirects to the leader.
func TestProcesses(t *testing.T) {
	s := NewServer()
	s.Username, s.Password = "u", "p"
	leader := httptest.NewServer(s.Overlord())
	defer leader.Close()
	s.LeaderURL = leader.URL
	servers := map[string]*httptest.Server{
		"broker": httptest.NewServer(s.Broker()), "standby": httptest.NewServer(s.Standby()),
		"router": httptest.NewServer(s.Router(false)), "proxy": httptest.NewServer(s.Router(true)),
	}
	for _, srv := range servers {
		defer srv.Close()
	}
	good := sqlBody(stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a")), utc)
	named := sqlBody(stmt(`INSERT INTO "other"`, "", "DAY", row(day1, "a")), map[string]any{"sqlTimeZone": "UTC", "sqlQueryId": "mine"})
	for _, tc := range []struct {
		process, method, path, body string
		status                      int
		want                        string
	}{
		{"broker", "GET", "/druid/v2/sql/task/enabled", "", 200, `"enabled":true`},
		{"broker", "POST", "/druid/v2/sql/task", good, 202, `"taskId":"query-0001"`},
		{"broker", "GET", "/druid/indexer/v1/task/query-0001/status", "", 404, "HTTP ERROR 404"},
		{"broker", "GET", "/druid/indexer/v1/isLeader", "", 404, "HTTP ERROR 404"},
		{"leader", "POST", "/druid/v2/sql/task", good, 404, "HTTP ERROR 404"},
		{"leader", "GET", "/druid/indexer/v1/task/query-0001/status", "", 200, `"statusCode":"SUCCESS"`},
		{"leader", "GET", "/druid/indexer/v1/task/query-0999/status", "", 400, "Cannot find any task with id: [query-0999]"},
		{"leader", "GET", "/druid/indexer/v1/isLeader", "", 200, `"leader":true`},
		{"router", "GET", "/druid/v2/sql/task/enabled", "", 200, `"enabled":true`},
		{"router", "GET", "/druid/indexer/v1/task/query-0001/status", "", 404, "HTTP ERROR 404"},
		{"router", "GET", "/druid/indexer/v1/isLeader", "", 404, "HTTP ERROR 404"},
		{"proxy", "GET", "/druid/indexer/v1/task/query-0001/status", "", 200, `"statusCode":"SUCCESS"`},
		{"proxy", "GET", "/druid/indexer/v1/isLeader", "", 200, `"leader":true`},
		{"standby", "GET", "/druid/indexer/v1/isLeader", "", 404, `"leader":false`},
		{"standby", "GET", "/druid/indexer/v1/leader", "", 200, leader.URL},
		// SqlTaskResource names the task after the context's sqlQueryId;
		// a second task of one id is refused.
		{"broker", "POST", "/druid/v2/sql/task", named, 202, `"taskId":"query-mine"`},
		{"broker", "POST", "/druid/v2/sql/task", named, 500, "Task [query-mine] already exists."},
		{"leader", "GET", "/druid/indexer/v1/task/query-mine/status", "", 200, `"statusCode":"SUCCESS"`},
		{"broker", "GET", "/status", "", 200, `"version":"29.0.0"`},
		// The Coordinator's markUnused, through the Overlord (a Coordinator
		// that runs it) or a Router with the management proxy.
		{"leader", "POST", "/druid/coordinator/v1/datasources/ds/markUnused", `{"interval":"2023-01-01T00:00:00Z/2023-01-02T00:00:00Z"}`, 200, `"numChangedSegments":0`},
		{"proxy", "POST", "/druid/coordinator/v1/datasources/ds/markUnused", `{"interval":"2024-03-01T00:00:00Z/2099-01-01T00:00:00Z"}`, 200, `"numChangedSegments":1`},
		{"leader", "POST", "/druid/coordinator/v1/datasources/ds/markUnused", `{}`, 400, "interval or segmentIds"},
		{"router", "POST", "/druid/coordinator/v1/datasources/ds/markUnused", `{"interval":"2023-01-01T00:00:00Z/2023-01-02T00:00:00Z"}`, 404, "HTTP ERROR 404"},
		{"leader", "DELETE", "/druid/coordinator/v1/datasources/ds", "", 200, `"numChangedSegments":0`},
	} {
		base := leader.URL
		if tc.process != "leader" {
			base = servers[tc.process].URL
		}
		status, _, body := call(t, tc.method, base+tc.path, tc.body)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s %s: %d %q, want %d with %q", tc.process, tc.method, tc.path, status, body, tc.status, tc.want)
		}
	}
	if rows, other := s.Rows("ds"), s.Rows("other"); len(rows) != 0 || len(other) != 1 {
		t.Errorf("after markUnused: ds holds %v, other %v", rows, other)
	}
	status, h, _ := call(t, "GET", servers["standby"].URL+"/druid/indexer/v1/task/query-0001/status?x=1", "")
	if status != http.StatusTemporaryRedirect || h.Get("Location") != leader.URL+"/druid/indexer/v1/task/query-0001/status?x=1" {
		t.Errorf("standby: %d to %q", status, h.Get("Location"))
	}
	// The leader checks the credentials of a redirected request too.
	req, _ := http.NewRequest(http.MethodGet, leader.URL+"/druid/indexer/v1/task/query-0001/status", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without credentials: %d", resp.StatusCode)
	}
}

// TestTaskSlots: statements run in the cluster's slots. Four at once of
// maxNumTasks 2 in four slots start their four controllers, whose workers
// then find no slot: they fail with TaskStartTimeout, as MSQ's
// controllers do. Two at once run.
func TestTaskSlots(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(n int) (*Server, []string) {
		s := NewServer()
		s.Capacity, s.StartupTime, s.RunTime = 4, 30*time.Second, time.Minute
		s.Clock = func() time.Time { return now }
		srv := httptest.NewServer(s)
		defer srv.Close()
		var ids []string
		for i := range n {
			q := stmt(`INSERT INTO "ds"`, "", "DAY", row(day1+int64(i), "a"))
			_, _, body := call(t, "POST", srv.URL+"/druid/v2/sql/task", sqlBody(q, map[string]any{"maxNumTasks": 2}))
			var ans struct{ TaskID string }
			if err := json.Unmarshal([]byte(body), &ans); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, ans.TaskID)
		}
		if s.InFlight() != 2*n {
			t.Fatalf("%d statements: %d Druid tasks in flight", n, s.InFlight())
		}
		var states []string
		for _, id := range ids {
			_, _, body := call(t, "GET", srv.URL+"/druid/indexer/v1/task/"+id+"/status", "")
			states = append(states, body)
		}
		// An hour later every task has ended, one way or the other.
		now = now.Add(time.Hour)
		var out []string
		for _, id := range ids {
			_, _, body := call(t, "GET", srv.URL+"/druid/indexer/v1/task/"+id+"/status", "")
			out = append(out, body)
		}
		if !strings.Contains(strings.Join(states, ""), `"runnerStatusCode":"RUNNING"`) {
			t.Fatalf("no task was running: %s", states)
		}
		return s, out
	}
	// Each controller that times out frees its slot, which lets the next
	// one's worker start: half of them fail.
	s, out := run(4)
	timedOut := 0
	for _, body := range out {
		if strings.Contains(body, `"statusCode":"FAILED"`) && strings.Contains(body, "TaskStartTimeout") {
			timedOut++
		}
	}
	if timedOut != 2 || s.Peak() != 8 || s.InFlight() != 0 || len(s.Rows("ds")) != 2 {
		t.Fatalf("%d timed out, peak %d, in flight %d, rows %d:\n%s", timedOut, s.Peak(), s.InFlight(), len(s.Rows("ds")), out)
	}
	s, out = run(2)
	for _, body := range out {
		if !strings.Contains(body, `"statusCode":"SUCCESS"`) {
			t.Fatalf("a statement that fits: %s", body)
		}
	}
	if s.Peak() != 4 || len(s.Rows("ds")) != 2 {
		t.Fatalf("peak %d, rows %d", s.Peak(), len(s.Rows("ds")))
	}

	// While the slots are full, the next statement waits: its status says
	// PENDING, and the capacity says every slot is used.
	s = NewServer()
	s.Capacity, s.RunTime = 2, time.Minute
	s.Clock = func() time.Time { return now }
	srv := httptest.NewServer(s)
	defer srv.Close()
	q := stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a"))
	for range 2 {
		call(t, "POST", srv.URL+"/druid/v2/sql/task", sqlBody(q, nil))
	}
	if _, _, body := call(t, "GET", srv.URL+"/druid/indexer/v1/task/query-0002/status", ""); !strings.Contains(body, `"runnerStatusCode":"PENDING"`) {
		t.Fatalf("a waiting task: %s", body)
	}
	if _, _, body := call(t, "GET", srv.URL+"/druid/indexer/v1/totalWorkerCapacity", ""); !strings.Contains(body, `"usedClusterCapacity":2`) ||
		!strings.Contains(body, `"currentClusterCapacity":2`) {
		t.Fatalf("capacity %s", body)
	}
}

// TestPayloadLimits: the task runners refuse payloads they cannot hand a
// worker: ZooKeeper's znodes and Kubernetes' TASK_JSON variable. An MSQ
// statement's URIs count twice (its querySpec and its sqlQuery).
func TestPayloadLimits(t *testing.T) {
	uris := func(n int) string {
		var us []string
		for range n {
			b := make([]byte, 150)
			_, _ = rand.Read(b)
			us = append(us, "http://sidecar:8080/splits/"+base64.RawURLEncoding.EncodeToString(b)+"/rows")
		}
		src, _ := json.Marshal(map[string]any{"type": "http", "uris": us})
		return string(src)
	}
	q := func(n int) string {
		return stmtOver(uris(n), `[{"name":"t","type":"long"}]`, `INSERT INTO "ds"`, `MILLIS_TO_TIMESTAMP("t") AS "__time"`, "", "DAY")
	}
	for _, tc := range []struct {
		runner Runner
		uris   int
		want   string
	}{
		{RunnerKubernetes, 150, ""},
		{RunnerKubernetes, 400, "TASK_JSON"},
		{RunnerZooKeeper, 400, ""},
		{RunnerZooKeeper, 1300, "Length of raw bytes for task too large"},
		{RunnerHTTP, 1300, ""},
	} {
		s := NewServer()
		s.Runner = tc.runner
		s.Decide = func(string, Submission) Outcome { return Fail } // reading the URIs is not the point
		srv := httptest.NewServer(s)
		_, _, body := call(t, "POST", srv.URL+"/druid/v2/sql/task", sqlBody(q(tc.uris), nil))
		var ans struct{ TaskID string }
		_ = json.Unmarshal([]byte(body), &ans)
		s.mu.Lock()
		msg := s.tasks[ans.TaskID].errorMsg
		s.mu.Unlock()
		srv.Close()
		if tc.want == "" && strings.Contains(msg, "payload") || !strings.Contains(msg, tc.want) {
			t.Errorf("runner %d, %d URIs: %q, want %q", tc.runner, tc.uris, msg, tc.want)
		}
	}
}

// TestTooManyBuckets: one statement writes at most 5,000 time chunks.
func TestTooManyBuckets(t *testing.T) {
	var rows []string
	for h := range 5001 {
		rows = append(rows, row(day1+int64(h)*3_600_000, "a"))
	}
	d := New()
	if err := d.ExecSQL(t.Context(), stmt(`INSERT INTO "ds"`, "", "HOUR", rows...), utc); err == nil ||
		!strings.Contains(err.Error(), "TooManyBuckets") {
		t.Fatalf("5,001 hours: %v", err)
	}
	if err := d.ExecSQL(t.Context(), stmt(`INSERT INTO "ds"`, "", "DAY", rows...), utc); err != nil {
		t.Fatalf("the same rows by day: %v", err)
	}
	if n := len(d.Rows("ds")); n != 5001 {
		t.Fatal(fmt.Sprint(n, " rows"))
	}
}

// TestReservedTimeName: __time is Druid's time column. MSQ refuses a
// second __time in the SELECT list (validateNoDuplicateAliases); native
// ingestion a __time dimension that is not the first, long-typed one
// (DataSchema.computeAndValidateOutputFieldNames).
func TestReservedTimeName(t *testing.T) {
	d := New()
	dup := stmtOver(inline(row(day1, "a")), `[{"name":"t","type":"long"},{"name":"v","type":"string"}]`, `INSERT INTO "ds"`,
		`MILLIS_TO_TIMESTAMP("t") AS "__time", "v" AS "__time"`, "", "DAY")
	if err := d.ExecSQL(t.Context(), dup, utc); err == nil || !strings.Contains(err.Error(), "Duplicate field in SELECT: [__time]") {
		t.Fatalf("a second __time: %v", err)
	}
	for _, tc := range []struct {
		dims []any
		want string
	}{
		{[]any{map[string]any{"type": "long", "name": "__time"}, "v"}, ""},
		{[]any{"v", map[string]any{"type": "long", "name": "__time"}}, "at position[1]"},
		{[]any{map[string]any{"type": "string", "name": "__time"}}, "Type must be 'long'"},
	} {
		err := d.ExecTask(t.Context(), taskSpec(nil, false, `"DAY"`, tc.dims, row(day1, "a")))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("dimensions %v: %v, want %q", tc.dims, err, tc.want)
		}
	}
}
