package sidecartest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Plan is the part of GET /splits' answer the tests read.
type Plan struct {
	Table       string `json:"table"`
	SnapshotID  *int64 `json:"snapshotId"`
	Mode        string `json:"mode"`
	InputSource struct {
		Type string   `json:"type"`
		URIs []string `json:"uris"`
	} `json:"inputSource"`
	InputFormat struct {
		Type string `json:"type"`
	} `json:"inputFormat"`
	Splits []struct {
		ID                  string `json:"id"`
		URI                 string `json:"uri"`
		DataFile            string `json:"dataFile"`
		DataFiles           int    `json:"dataFiles"`
		RecordCount         int64  `json:"recordCount"`
		PositionDeleteFiles int    `json:"positionDeleteFiles"`
		EqualityDeleteFiles int    `json:"equalityDeleteFiles"`
		DeletionVectorFiles int    `json:"deletionVectorFiles"`
		DataFileSizeInBytes int64  `json:"dataFileSizeInBytes"`
	} `json:"splits"`
	Warnings []string `json:"warnings"`
}

// Changes is the part of GET /changes' answer the tests read.
type Changes struct {
	Table        string `json:"table"`
	DataSource   string `json:"dataSource"`
	FromSnapshot *int64 `json:"fromSnapshot"`
	ToSnapshot   *int64 `json:"toSnapshot"`
	Changes      []struct {
		Interval string   `json:"interval"`
		Reasons  []string `json:"reasons"`
		Splits   int      `json:"splits"`
		SQL      struct {
			Query   string         `json:"query"`
			Context map[string]any `json:"context"`
		} `json:"sql"`
		Task json.RawMessage `json:"task"`
	} `json:"changes"`
	Statements []struct {
		Intervals []string `json:"intervals"`
		SQL       struct {
			Query   string         `json:"query"`
			Context map[string]any `json:"context"`
		} `json:"sql"`
	} `json:"statements"`
	Warnings []string `json:"warnings"`
}

// Intervals lists the answer's intervals, each with its reasons.
func (c Changes) Intervals() []string {
	var out []string
	for _, ch := range c.Changes {
		out = append(out, ch.Interval+" "+strings.Join(ch.Reasons, ","))
	}
	return out
}

// SQLTask is the answer of /druid/sql and a change's sql.
type SQLTask struct {
	Query    string         `json:"query"`
	Context  map[string]any `json:"context"`
	Warnings []string       `json:"warnings"`
}

// Get sends a GET of path (with the query) to the server, with the
// headers given as name, value pairs, and returns the answer and its body,
// read whole.
func (s *Server) Get(t testing.TB, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	return resp, body
}

// Plan calls GET /splits and fails the test unless it answers 200 with as
// many URIs as splits.
func (s *Server) Plan(t testing.TB, query url.Values) Plan {
	t.Helper()
	resp, body := s.Get(t, "/splits?"+query.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /splits?%s: %d %s", query.Encode(), resp.StatusCode, body)
	}
	var p Plan
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("decode plan: %v\n%s", err, body)
	}
	if len(p.InputSource.URIs) != len(p.Splits) {
		t.Fatalf("plan has %d uris but %d splits", len(p.InputSource.URIs), len(p.Splits))
	}
	return p
}

// Rows reads every split of a v2 plan and returns the NDJSON lines.
func (s *Server) Rows(t testing.TB, p Plan) []string {
	t.Helper()
	if p.Mode != "v2" || p.InputFormat.Type != "json" {
		t.Fatalf("plan is %s/%s, want v2/json", p.Mode, p.InputFormat.Type)
	}
	var lines []string
	for _, u := range p.InputSource.URIs {
		path := strings.TrimPrefix(u, s.URL)
		resp, body := s.Get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
			t.Fatalf("Content-Type %q", ct)
		}
		lines = append(lines, NDJSONLines(t, body)...)
	}
	return lines
}

// Changes calls GET /changes and fails the test unless it answers 200.
func (s *Server) Changes(t testing.TB, params url.Values) Changes {
	t.Helper()
	resp, body := s.Get(t, "/changes?"+params.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /changes?%s: %d %s", params.Encode(), resp.StatusCode, body)
	}
	var c Changes
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// DruidSQL calls GET /druid/sql and fails the test unless it answers 200.
func (s *Server) DruidSQL(t testing.TB, query url.Values) SQLTask {
	t.Helper()
	resp, body := s.Get(t, "/druid/sql?"+query.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /druid/sql?%s: %d %s", query.Encode(), resp.StatusCode, body)
	}
	var task SQLTask
	if err := json.Unmarshal(body, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

// DruidTask calls GET /druid/task and returns the task, failing the test
// unless it answers 200.
func (s *Server) DruidTask(t testing.TB, query url.Values) []byte {
	t.Helper()
	resp, body := s.Get(t, "/druid/task?"+query.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /druid/task?%s: %d %s", query.Encode(), resp.StatusCode, body)
	}
	return body
}

// NDJSONLines splits an NDJSON body, checking the framing: every line is
// one valid JSON object, `\n`-terminated, no blank lines.
func NDJSONLines(t testing.TB, body []byte) []string {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	if body[len(body)-1] != '\n' {
		tail := body
		if len(tail) > 80 {
			tail = tail[len(tail)-80:]
		}
		t.Fatalf("body does not end with a newline: %q", tail)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || !json.Valid([]byte(line)) || line[0] != '{' {
			t.Fatalf("bad NDJSON line %q", line)
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// ErrorCode is the code of a JSON error body, failing the test unless the
// body is one with a code and a message.
func ErrorCode(t testing.TB, body []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not an error body: %s", body)
	}
	return e.Error.Code
}

// Q is the query of the name, value pairs kv.
func Q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// MustJSON is v in JSON; it panics where v cannot be encoded, a mistake
// of the test.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %v: %v", v, err))
	}
	return string(b)
}
