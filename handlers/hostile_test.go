package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/druid"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// The tests of this file replay what a hostile client on the network
// tried, each against the real router over a real listener: every attack
// ends in a quick 4xx that names what it crossed, or in a correct answer.

// apiError is an error body's code and message.
func apiError(t testing.TB, body []byte) (code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not an error body: %.300s", body)
	}
	return e.Error.Code, e.Error.Message
}

// TestHostileFilters: a filter nested thousands deep cost the square of its
// depth in CPU and memory (30 s and 2.7 GB for a 460 KB URL), and so did a
// wide one; each bound is now a 400 that names it, whichever route and
// spelling carries the filter.
func TestHostileFilters(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	spec := func(member, filter string) string {
		return `{"type":"iceberg","namespace":"demo","tableName":"orders","` + member + `":` + filter + `}`
	}
	for _, tc := range []struct {
		name, method, path, body string
		bound                    string
	}{
		{"GET nested 2000 deep", "GET", "/splits?" + q("table", "demo.orders", "icebergFilter", sidecartest.NestedNot(2000)).Encode(), "",
			fmt.Sprintf("more than %d levels deep", druid.MaxFilterDepth)},
		{"GET nested 9990 deep, 460 KB", "GET", "/splits?" + q("table", "demo.orders", "icebergFilter", sidecartest.NestedNot(9990)).Encode(), "",
			fmt.Sprintf("more than the %d allowed", druid.MaxFilterBytes)},
		{"GET /druid/task nested", "GET", "/druid/task?" + q("table", "demo.orders", "dataSource", "o",
			"timestampColumn", "order_ts", "icebergFilter", sidecartest.NestedNot(500)).Encode(), "", "levels deep"},
		{"GET /druid/sql nested", "GET", "/druid/sql?" + q("table", "demo.orders", "dataSource", "o",
			"timestampColumn", "order_ts", "icebergFilter", sidecartest.NestedNot(500)).Encode(), "", "levels deep"},
		{"GET wide", "GET", "/splits?" + q("table", "demo.orders", "icebergFilter", sidecartest.WideOr(druid.MaxFilterNodes)).Encode(), "",
			fmt.Sprintf("more than %d filters", druid.MaxFilterNodes)},
		{"POST nested", "POST", "/splits", spec("icebergFilter", sidecartest.NestedNot(5000)), "levels deep"},
		{"POST nested, another case", "POST", "/splits", spec("ICEBERGfilter", sidecartest.NestedNot(5000)), "levels deep"},
		{"POST nested, then a duplicate", "POST", "/splits",
			strings.TrimSuffix(spec("icebergFilter", sidecartest.NestedNot(5000)), "}") + `,"icebergFilter":{"type":"equals","filterColumn":"status","filterValue":"x"}}`,
			"levels deep"},
		{"POST wide", "POST", "/splits", spec("icebergFilter", sidecartest.WideOr(druid.MaxFilterNodes)), "filters and intervals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resp *http.Response
			var body []byte
			if tc.method == "GET" {
				resp, body = srv.get(t, tc.path)
			} else {
				resp, body = srv.post(t, tc.path, tc.body)
			}
			code, msg := apiError(t, body)
			if resp.StatusCode != http.StatusBadRequest || code != "bad_request" || !strings.Contains(msg, tc.bound) {
				t.Fatalf("%d %s %q, want 400 bad_request naming %q", resp.StatusCode, code, msg, tc.bound)
			}
		})
	}
	// Within the bounds the answer is a plan.
	for _, f := range []string{sidecartest.NestedNot(druid.MaxFilterDepth - 1), sidecartest.WideOr(druid.MaxFilterNodes - 1)} {
		srv.plan(t, q("table", "demo.orders", "icebergFilter", f))
	}
}

// TestPlanNeverHandsOutARefusedURI: a 2,000-way or with applyResidual
// planned URIs of 375 KB, which the server itself refuses (400
// malformed_token). A residual that a split cannot carry is now a 400 at
// planning; a residual within the bound plans URIs that read; a split of
// many delete files is a short reference into its plan.
func TestPlanNeverHandsOutARefusedURI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	srv := localServer(t, dir)

	t.Run("wide residual", func(t *testing.T) {
		resp, body := srv.get(t, "/splits?"+q("table", "demo.orders", "applyResidual", "true",
			"icebergFilter", sidecartest.WideOr(druid.MaxFilterNodes-1)).Encode())
		code, msg := apiError(t, body)
		if resp.StatusCode != http.StatusBadRequest || code != "bad_request" ||
			!strings.Contains(msg, fmt.Sprintf("more than the %d a split carries", splits.MaxResidualBytes)) {
			t.Fatalf("%d %s %q, want 400 naming the residual bound", resp.StatusCode, code, msg)
		}
	})

	t.Run("residual within the bound", func(t *testing.T) {
		// 149 statuses no order has, and shipped: orders 1001 and 1007.
		f := strings.Replace(sidecartest.WideOr(150), `"s149"`, `"shipped"`, 1)
		p := srv.plan(t, q("table", "demo.orders", "applyResidual", "true", "icebergFilter", f))
		var ids []string
		for _, line := range srv.rows(t, p) {
			var row struct {
				OrderID int64  `json:"order_id"`
				Status  string `json:"status"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, fmt.Sprintf("%d %s", row.OrderID, row.Status))
		}
		slices.Sort(ids)
		if want := []string{"1001 shipped", "1007 shipped"}; !slices.Equal(ids, want) {
			t.Fatalf("rows %v, want %v", ids, want)
		}
	})

	t.Run("a split too long for a token", func(t *testing.T) {
		// Positional delete files on demo.customers' one data file, whose
		// paths add up to more than the longest token the server reads:
		// every one of them would ride in the split's token. Each path
		// runs through folders of long names, so that 60 files are enough.
		tbl, err := cat.LoadTable(ctx, table.Identifier{"demo", "customers"})
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil || len(tasks) != 1 {
			t.Fatalf("%d tasks, %v", len(tasks), err)
		}
		var dels []iceberg.DataFile
		folders, pathBytes := strings.Repeat(strings.Repeat("d", 200)+"/", 6), 0
		for i := range 60 {
			loc := fmt.Sprintf("%s/data/%s%03d-%s.parquet", strings.TrimSuffix(tbl.Location(), "/"), folders, i, strings.Repeat("d", 200))
			del, err := icewrite.WritePositionalDeletes(ctx, tbl, loc,
				[]icewrite.PositionalDelete{{FilePath: tasks[0].File.FilePath(), Pos: 0}})
			if err != nil {
				t.Fatal(err)
			}
			dels = append(dels, del)
			pathBytes += len(loc)
		}
		if pathBytes <= token.MaxTokenLength {
			t.Fatalf("the delete files' paths add up to %d bytes, no more than a token may be (%d): not the case under test",
				pathBytes, token.MaxTokenLength)
		}
		tx := tbl.NewTransaction()
		if err := tx.NewRowDelta(nil).AddDeletes(dels...).Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		// Such a split is signed as a reference into its plan, a short
		// token the server reads back: its rows are the table's.
		p := srv.plan(t, q("table", "demo.customers"))
		for _, u := range p.InputSource.URIs {
			if len(u) > len(srv.URL)+len("/splits//rows")+1024 {
				t.Fatalf("a URI of %d bytes", len(u))
			}
		}
		tbl, err = cat.LoadTable(ctx, table.Identifier{"demo", "customers"})
		if err != nil {
			t.Fatal(err)
		}
		want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.rows(t, p); len(got) != len(want) || len(got) != 4 {
			t.Fatalf("%d rows, want the oracle's %d: the 5 customers but the one at position 0", len(got), len(want))
		}
	})
}

// TestHostileCounts: GET /changes planned once per include interval, and
// took any number of them (5,000 took 27 s); a request's columns are
// resolved one by one against the table's. Past their bounds both are a
// 400 that names the bound.
func TestHostileCounts(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	days := func(n int) string {
		parts := make([]string, n)
		d := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range parts {
			parts[i] = d.AddDate(0, 0, 2*i).Format("2006-01-02") + "/" + d.AddDate(0, 0, 2*i+1).Format("2006-01-02")
		}
		return strings.Join(parts, ",")
	}
	cur := srv.plan(t, q("table", "demo.orders"))
	from := fmt.Sprint(*cur.SnapshotID)
	for _, tc := range []struct{ name, path, bound string }{
		{"include", "/changes?" + q("table", "demo.orders", "timeColumn", "order_ts", "fromSnapshot", from,
			"include", days(1001)).Encode(), "include names 1001 intervals, more than the 1000 allowed"},
		{"columns", "/splits?" + q("table", "demo.orders", "columns", strings.Repeat("order_id,", 10_000)+"status").Encode(),
			"columns names 10001 columns, more than the 10000 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.get(t, tc.path)
			code, msg := apiError(t, body)
			if resp.StatusCode != http.StatusBadRequest || code != "bad_request" || !strings.Contains(msg, tc.bound) {
				t.Fatalf("%d %s %q, want 400 naming %q", resp.StatusCode, code, msg, tc.bound)
			}
		})
	}
	// Within the bound the intervals are answered, each as a change.
	resp, body := srv.get(t, "/changes?"+q("table", "demo.orders", "timeColumn", "order_ts", "fromSnapshot", from,
		"include", days(3)).Encode())
	var ch struct {
		Changes []struct{ Interval string } `json:"changes"`
	}
	if err := json.Unmarshal(body, &ch); resp.StatusCode != http.StatusOK || err != nil || len(ch.Changes) != 3 {
		t.Fatalf("%d, %d changes (%v): %.300s", resp.StatusCode, len(ch.Changes), err, body)
	}
}

// TestHostileNames: a table name with a NUL, a / or thousands of bytes
// reached the filesystem and answered 500. Names are checked before any
// catalog sees them, on every route that takes one.
func TestHostileNames(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for _, name := range []string{
		"demo.ord\x00ers", "demo.a/b", `demo.a\b`, "demo/x.orders", "demo." + strings.Repeat("x", 5000),
		"demo.\xff", "demo.a\nb", strings.Repeat("a.", 16) + "t", ".orders", "demo.", "orders",
	} {
		for _, path := range []string{
			"/splits?" + q("table", name).Encode(),
			"/druid/task?" + q("table", name, "dataSource", "o", "timestampColumn", "order_ts").Encode(),
			"/changes?" + q("table", name, "timeColumn", "order_ts").Encode(),
			"/?" + q("table", name).Encode(),
		} {
			resp, body := srv.get(t, path)
			if path[1] == '?' {
				// The status page shows the error on the page.
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "bad request: table") {
					t.Errorf("status page for %.40q: %d %.300s", name, resp.StatusCode, body)
				}
				continue
			}
			code, msg := apiError(t, body)
			if resp.StatusCode != http.StatusBadRequest || code != "bad_request" || !strings.HasPrefix(msg, "bad request: table ") {
				t.Errorf("%.60s: %d %s %q, want 400 bad_request about the table", path, resp.StatusCode, code, msg)
			}
		}
	}
	resp, body := srv.post(t, "/splits", `{"namespace":"de/mo","tableName":"orders"}`)
	if code, _ := apiError(t, body); resp.StatusCode != http.StatusBadRequest || code != "bad_request" {
		t.Errorf("POST namespace de/mo: %d %s", resp.StatusCode, body)
	}
	// A name that is a name, but not the catalog's: 404.
	resp, body = srv.get(t, "/splits?"+q("table", "demo.ordérs").Encode())
	if code, _ := apiError(t, body); resp.StatusCode != http.StatusNotFound || code != "table_not_found" {
		t.Errorf("demo.ordérs: %d %s", resp.StatusCode, body)
	}
}

// TestHostileEcho: a 900 KB name or Range value came back whole in the
// error body and in a 900 KB log line. Error bodies and log lines now
// quote client input shortened, whichever parameter carries it.
func TestHostileEcho(t *testing.T) {
	t.Parallel()
	var logs testlog.Buffer
	srv := newDemoServer(t, func(c *handlers.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	p := srv.plan(t, q("table", "demo.orders"))
	rowsPath := strings.TrimPrefix(p.InputSource.URIs[0], srv.URL)
	big := strings.Repeat("x", 900_000)
	for _, tc := range []struct {
		name, path string
		header     []string
		status     int
	}{
		{"table", "/splits?table=demo." + big, nil, http.StatusBadRequest},
		{"mode", "/splits?table=demo.orders&mode=" + big, nil, http.StatusBadRequest},
		{"columns", "/splits?table=demo.orders&columns=" + big, nil, http.StatusBadRequest},
		{"catalog", "/splits?table=demo.orders&catalog=" + big, nil, http.StatusNotFound},
		{"snapshotId", "/splits?table=demo.orders&snapshotId=" + big, nil, http.StatusBadRequest},
		{"timestamps", "/splits?table=demo.orders&timestamps=" + big, nil, http.StatusBadRequest},
		{"ref", "/splits?table=demo.orders&ref=" + big, nil, http.StatusNotFound},
		{"filter column", "/splits?" + q("table", "demo.orders", "icebergFilter",
			`{"type":"equals","filterColumn":"`+big[:4000]+`","filterValue":1}`).Encode(), nil, http.StatusBadRequest},
		{"unknown parameter", "/splits?table=demo.orders&" + big + "=1", nil, http.StatusBadRequest},
		{"granularity", "/changes?table=demo.orders&timeColumn=order_ts&granularity=" + big, nil, http.StatusBadRequest},
		{"timeColumn", "/changes?table=demo.orders&timeColumn=" + big, nil, http.StatusBadRequest},
		{"residualFilterMode", "/splits?table=demo.orders&residualFilterMode=" + big, nil, http.StatusBadRequest},
		{"Range", rowsPath, []string{"Range", "bytes=" + big}, http.StatusRequestedRangeNotSatisfiable},
		{"token", "/splits/" + big + "/rows", nil, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.String())
			resp, body := srv.get(t, tc.path, tc.header...)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %.300s, want %d", resp.StatusCode, body, tc.status)
			}
			if len(body) > 2<<10 {
				t.Errorf("a %d-byte error body: %.300s", len(body), body)
			}
			for _, line := range strings.Split(logs.String()[before:], "\n") {
				if len(line) > 8<<10 {
					t.Errorf("a %d-byte log line: %.300s", len(line), line)
				}
			}
		})
	}
}

// trickle opens a connection that sends a POST /splits header with
// Expect: 100-continue, waits for the server's 100 Continue (the router has
// begun to read the body: the request is the router's from then on), and
// then sends the body one byte every interval, until the server answers or
// closes. It returns a channel that gets the status line (or the read
// error) of the server's final answer.
func trickle(t *testing.T, addr string, interval time.Duration) <-chan string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	body := `{"type":"iceberg","namespace":"demo","tableName":"orders"}`
	if _, err := fmt.Fprintf(c, "POST /splits HTTP/1.1\r\nHost: sidecar\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("%q %v, want 100 Continue", line, err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "\r\n" {
		t.Fatalf("after the 100 Continue: %q %v", line, err)
	}
	answer := make(chan string, 1)
	go func() {
		// The pace is what is under test: a byte every interval, the
		// body overdue long before its last byte.
		pace := time.NewTicker(interval)
		defer pace.Stop()
		for i := 0; i < len(body)-1; i++ {
			if _, err := c.Write([]byte{body[i]}); err != nil {
				return
			}
			<-pace.C
		}
	}()
	go func() {
		line, err := br.ReadString('\n')
		if err != nil {
			answer <- err.Error()
			return
		}
		answer <- strings.TrimSpace(line)
	}()
	return answer
}

// TestHostileTrickle: sixteen connections that sent a POST /splits body a
// byte at a time held every planning slot for as long as they liked
// (/splits, /druid/*, /changes and the status page answered 503). A body
// now has a deadline (408, and the connection is closed), and a plan is
// admitted only once its body is in: tricklers, more of them than there
// are slots, take none.
func TestHostileTrickle(t *testing.T) {
	t.Parallel()
	const bodyTimeout = time.Second
	srv := newDemoServer(t, func(c *handlers.Config) { c.MaxPlans, c.BodyTimeout = 2, bodyTimeout })
	addr := strings.TrimPrefix(srv.URL, "http://")
	var answers []<-chan string
	for range 6 {
		answers = append(answers, trickle(t, addr, bodyTimeout/20))
	}
	// While they trickle (the router reads each body: each had its 100
	// Continue), every planning route answers.
	for _, path := range []string{"/splits?table=demo.orders", "/?table=demo.orders", "/healthz",
		"/druid/task?table=demo.orders&dataSource=o&timestampColumn=order_ts"} {
		if resp, body := srv.get(t, path); resp.StatusCode != http.StatusOK {
			t.Errorf("%s while 6 bodies trickle into 2 slots: %d %.200s", path, resp.StatusCode, body)
		}
	}
	resp, body := srv.post(t, "/splits", `{"type":"iceberg","namespace":"demo","tableName":"orders"}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /splits while bodies trickle: %d %.200s", resp.StatusCode, body)
	}
	for i, a := range answers {
		select {
		case line := <-a:
			if line != "HTTP/1.1 408 Request Timeout" {
				t.Errorf("trickler %d got %q, want 408", i, line)
			}
		case <-time.After(30 * bodyTimeout):
			t.Fatalf("trickler %d got no answer", i)
		}
	}
}

// TestHostilePlanDeadline: planning and catalog calls had no deadline but
// the client's, so a catalog that hangs held a planning slot for as long
// as the client waited. A planning request now has PlanTimeout; past it the
// answer is 503 plan_timeout with Retry-After, and the slot is free.
func TestHostilePlanDeadline(t *testing.T) {
	t.Parallel()
	catalog := sidecatalog.Config{Type: "rest", URI: "http://" + testnet.SilentAddr(t)}
	for _, path := range []string{"/splits?table=demo.orders", "/druid/sql?table=demo.orders&dataSource=o&timestampColumn=t",
		"/changes?table=demo.orders&timeColumn=t", "/?table=demo.orders", "/readyz"} {
		// A server each: a catalog's connection failure is remembered
		// for a moment, and the next request told at once.
		srv := newServer(t, catalog, nil, func(c *handlers.Config) { c.PlanTimeout, c.MaxPlans = 300*time.Millisecond, 1 })
		srv.Client().Timeout = time.Minute
		resp, body := srv.get(t, path)
		if path[1] == '?' {
			// The status page shows the catalog's error on the page.
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "the planning deadline passed") {
				t.Errorf("%s: %d %s, want the page with the deadline's error", path, resp.StatusCode, body[strings.Index(string(body), "<p>C"):])
			}
			continue
		}
		code, _ := apiError(t, body)
		if resp.StatusCode != http.StatusServiceUnavailable || code != "plan_timeout" || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d %s (Retry-After %q), want 503 plan_timeout with Retry-After", path, resp.StatusCode, body,
				resp.Header.Get("Retry-After"))
		}
		// The one slot is free again.
		resp, body = srv.get(t, "/splits?table=demo.orders")
		if code, _ := apiError(t, body); resp.StatusCode != http.StatusServiceUnavailable || code == "overloaded" {
			t.Errorf("after %s: %d %s, want the slot free", path, resp.StatusCode, body)
		}
	}
}

// TestHostileHost: without a public URL, the URIs handed to Druid were
// built from the request's Host, and with Basic auth on, the spec also told
// Druid to send its credentials to whatever host the request named. With
// Basic auth the URIs name the configured public URL only, and a router
// without one refuses to plan rather than trust a Host.
func TestHostileHost(t *testing.T) {
	t.Parallel()
	const user, password = "druid", "pw"
	spoofed := func(t *testing.T, h http.Handler, base, path string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, base+path, nil)
		req.Host = "evil.example:1"
		req.Header.Set("X-Forwarded-Proto", "http")
		req.SetBasicAuth(user, password)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	paths := []string{"/splits?table=fixtures.t", "/druid/task?table=fixtures.t&dataSource=o&timestampColumn=event_time"}
	withAuth := func(public string) http.Handler {
		return fuzzRouterWith(t, func(c *handlers.Config) {
			c.BasicAuth = []handlers.Credential{{Username: user, Password: password}}
			c.PublicURL = public
		})
	}

	t.Run("auth and a public URL", func(t *testing.T) {
		h := withAuth("https://sidecar.example:8443/")
		for _, path := range paths {
			rec := spoofed(t, h, "http://evil.example:1", path)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || strings.Contains(body, "evil.example") ||
				!strings.Contains(body, `"https://sidecar.example:8443/splits/`) {
				t.Fatalf("%s: %d %.400s, want URIs under the public URL only", path, rec.Code, body)
			}
		}
	})
	t.Run("auth without a public URL", func(t *testing.T) {
		h := withAuth("")
		for _, path := range paths {
			rec := spoofed(t, h, "http://evil.example:1", path)
			code, msg := apiError(t, rec.Body.Bytes())
			if rec.Code != http.StatusInternalServerError || !strings.Contains(msg, "--public-url") ||
				strings.Contains(rec.Body.String(), "evil.example") {
				t.Fatalf("%s: %d %s %q, want a 500 that names --public-url", path, rec.Code, code, msg)
			}
		}
	})
}

// TestHostileAuthGuessing: Basic auth failures were not limited (about
// 3,000 guesses a second on one connection). An address whose credentials
// fail more than a burst is answered 429 with Retry-After, its guesses no
// longer checked, while a request without credentials still gets the 401
// challenge and other addresses are not held back.
func TestHostileAuthGuessing(t *testing.T) {
	const user, password = "druid", "s3cret"
	srv := newDemoServer(t, func(c *handlers.Config) {
		c.BasicAuth = []handlers.Credential{{Username: user, Password: password}}
	})
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	get := func(c *http.Client, user, pass string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/splits?table=demo.orders", nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	attacker, neighbour := from("127.0.0.1"), from("127.0.0.2")
	statuses := map[int]int{}
	for i := range 50 {
		statuses[get(attacker, user, fmt.Sprint("guess-", i)).StatusCode]++
	}
	// The burst (10) is checked; the rest are held back, but a guess or two
	// may be checked as the allowance refills one a second.
	if statuses[http.StatusUnauthorized] < 10 || statuses[http.StatusUnauthorized] > 15 || statuses[http.StatusTooManyRequests] < 35 {
		t.Fatalf("50 wrong guesses from one address: %v, want 10 (or a few more) 401 and the rest 429", statuses)
	}
	resp := get(attacker, user, password)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the right password from the held-back address: %d (Retry-After %q), want 429 with Retry-After",
			resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp := get(attacker, "", ""); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no credentials from the held-back address: %d, want the 401 challenge", resp.StatusCode)
	}
	if resp := get(neighbour, user, password); resp.StatusCode != http.StatusOK {
		t.Fatalf("the right password from another address: %d", resp.StatusCode)
	}
}
