package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/testlog"
)

// requestLine waits for the one-per-request line of the request with id:
// it is written when the handler returns, which may be just after the
// client has read the last byte.
func requestLine(t *testing.T, logs *testlog.Buffer, id string) map[string]any {
	t.Helper()
	var line map[string]any
	awaitLog(t, logs, fmt.Sprintf("a request line for %s", id), func(lines []map[string]any) bool {
		for _, l := range lines {
			if l["msg"] == "request" && l["request_id"] == id {
				line = l
				return true
			}
		}
		return false
	})
	return line
}

// awaitRequests waits until logs hold n request lines of route with
// status ("200", "aborted", ...). The router writes a request's line once
// its handler has returned: past the admission that frees its slot, and
// after the metrics of its end (stream aborts, write stalls) are counted.
func awaitRequests(t *testing.T, logs *testlog.Buffer, route, status string, n int) {
	t.Helper()
	awaitLog(t, logs, fmt.Sprintf("%d request lines of %s with status %s", n, route, status), func(lines []map[string]any) bool {
		seen := 0
		for _, l := range lines {
			if l["msg"] == "request" && l["route"] == route && l["status"] == status {
				seen++
			}
		}
		return seen >= n
	})
}

// awaitLog waits until cond holds of the JSON lines of logs, and fails t
// with what names what was awaited if a minute passes without.
func awaitLog(t *testing.T, logs *testlog.Buffer, what string, cond func(lines []map[string]any) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := logs.Await(ctx, func(string) bool { return cond(logs.JSONLines(t)) }); err != nil {
		t.Fatalf("no %s within a minute (%v) in\n%s", what, err, logs.String())
	}
}

func TestRequestIDHeader(t *testing.T) {
	srv := newDemoServer(t)
	tests := []struct {
		name string
		in   string
		keep bool
	}{
		{"kept", "druid-task-0042/attempt.1", true},
		{"absent", "", false},
		{"too long", strings.Repeat("a", 129), false},
		{"longest kept", strings.Repeat("a", 128), true},
		{"space", "a b", false},
		{"newline", "a\nlevel=ERROR", false},
		{"non-ascii", "ünïcode", false},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/healthz", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.in != "" {
				// Set the raw header map: net/http refuses a newline
				// in Header.Set values only when sending, so check
				// what reaches the server with a valid-on-the-wire id.
				req.Header[handlers.RequestIDHeader] = []string{tc.in}
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				if tc.name == "newline" {
					return // the client refused to send it; nothing to check
				}
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Get(handlers.RequestIDHeader)
			if tc.keep && got != tc.in {
				t.Fatalf("X-Request-Id %q, want %q kept", got, tc.in)
			}
			if !tc.keep {
				if got == "" || got == tc.in {
					t.Fatalf("X-Request-Id %q: want a fresh id instead of %q", got, tc.in)
				}
				if seen[got] {
					t.Fatalf("generated id %q twice", got)
				}
				seen[got] = true
			}
		})
	}
}

// TestRequestLogs: every line logged while serving a request carries its id;
// the request's own line has route, status, bytes, rows and duration; no
// token, password or raw path reaches the log.
func TestRequestLogs(t *testing.T) {
	var logs testlog.Buffer
	const user, password = "druid", "s3cret-Pa55word"
	srv := newDemoServer(t, func(c *handlers.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		c.BasicAuth = []handlers.Credential{{Username: user, Password: password}}
	})
	do := func(path, id string, auth bool) (*http.Response, []byte) {
		t.Helper()
		if !auth {
			return srv.get(t, path, handlers.RequestIDHeader, id)
		}
		return srv.get(t, path, handlers.RequestIDHeader, id, "Authorization", basicAuth(user, password))
	}

	resp, body := do("/splits?table=demo.orders", "plan-1", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("plan: %d %s", resp.StatusCode, body)
	}
	var p plan
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	var rows int64
	var tokens []string
	for i, u := range p.InputSource.URIs {
		path := strings.TrimPrefix(u, srv.URL)
		tokens = append(tokens, strings.TrimSuffix(strings.TrimPrefix(path, "/splits/"), "/rows"))
		id := "rows-" + string(rune('a'+i))
		resp, body := do(path, id, true)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("rows: %d %s", resp.StatusCode, body)
		}
		line := requestLine(t, &logs, id)
		if line["route"] != "/splits/{token}/rows" || line["status"] != "200" || line["method"] != "GET" {
			t.Fatalf("request line %v", line)
		}
		if line["bytes"] != float64(len(body)) {
			t.Fatalf("request line bytes %v, body has %d", line["bytes"], len(body))
		}
		if _, ok := line["duration"]; !ok {
			t.Fatalf("request line has no duration: %v", line)
		}
		rows += int64(line["rows"].(float64))
	}
	if rows != 3 {
		t.Fatalf("request lines count %d rows, demo.orders has 3 live rows", rows)
	}

	// Failures log a second line ("request failed"); it carries the id too.
	if resp, _ := do("/splits/"+tokens[0]+"x/rows", "forged-1", true); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("forged token: %d", resp.StatusCode)
	}
	if resp, _ := do("/splits/"+tokens[0]+"/rows", "noauth-1", false); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d", resp.StatusCode)
	}
	requestLine(t, &logs, "forged-1")
	requestLine(t, &logs, "noauth-1")

	failed := map[string]bool{}
	for _, l := range logs.JSONLines(t) {
		id, _ := l["request_id"].(string)
		if id == "" {
			t.Errorf("log line without request_id: %v", l)
		}
		if l["msg"] == "request failed" {
			failed[id] = true
		}
	}
	if !failed["forged-1"] || !failed["noauth-1"] {
		t.Errorf("want request failed lines for forged-1 and noauth-1, got %v", failed)
	}
	all := logs.String()
	for _, secret := range append([]string{password, "Authorization", base64.StdEncoding.EncodeToString([]byte(user + ":" + password)), "table=demo"}, tokens...) {
		if strings.Contains(all, secret) {
			t.Errorf("the log holds %q:\n%s", secret, all)
		}
	}
}
