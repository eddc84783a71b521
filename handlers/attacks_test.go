package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/splits/split"
)

// The tests of this file replay a third round of attacks, each against the
// real router over a real listener, as TestHostile* in hostile_test.go do.

// oddMethod is the i-th of many request methods that no route serves: token
// characters, so that net/http passes them to the router.
func oddMethod(i int) string { return fmt.Sprintf("M%d", i) }

// TestHostileMethods: the HTTP metrics were labelled with the request's raw
// method, and the request log repeated it whole: 80,000 requests with
// distinct methods (none authenticated, none routed) made 1.2 M series, and
// 40 with 500 KB methods a 391 MB scrape and 500 KB log lines. The method
// label is now one of the methods the routes serve or OTHER, and the log
// and the 405 answer quote a method shortened.
func TestHostileMethods(t *testing.T) {
	var logs testlog.Buffer
	srv := newDemoServer(t, func(c *handlers.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	send := func(method, path string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%.40s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// The routes' own methods first, so that their series exist before
	// the scrape the attack is measured against.
	send(http.MethodGet, "/healthz")
	send(http.MethodHead, "/healthz")
	send(http.MethodPost, "/healthz")
	before := scrape(t, srv)

	const odd = 2000
	paths := []string{"/nowhere", "/splits", "/healthz", "/metrics", "/splits/x/rows"}
	for i := range odd {
		if st := send(oddMethod(i), paths[i%len(paths)]); st != http.StatusMethodNotAllowed && st != http.StatusNotFound {
			t.Fatalf("%s %s: %d, want 405 or 404", oddMethod(i), paths[i%len(paths)], st)
		}
	}
	huge := strings.Repeat("M", 500_000)
	for i := range 4 {
		send(huge+fmt.Sprint(i), paths[i%len(paths)])
	}
	after := scrape(t, srv)

	methods := map[string]bool{}
	for _, m := range regexp.MustCompile(`method="([^"]*)"`).FindAllStringSubmatch(after.text, -1) {
		methods[m[1]] = true
	}
	var got []string
	for m := range methods {
		got = append(got, m)
	}
	slices.Sort(got)
	if want := []string{"GET", "HEAD", "OTHER", "POST"}; !slices.Equal(got, want) {
		t.Errorf("method labels after %d requests with odd methods: %d of them (%.200v), want %v", odd+4, len(got), got, want)
	}
	t.Logf("%d odd methods and 4 of 500 KB: HTTP series %d before, %d after; scrape %d bytes before, %d after",
		odd, before.series, after.series, len(before.text), len(after.text))
	// The attack adds the OTHER series of a few routes and codes, not a
	// series per method.
	if after.series-before.series > 100 || len(after.text)-len(before.text) > 64<<10 {
		t.Errorf("the attack grew the HTTP series from %d to %d and the scrape from %d to %d bytes",
			before.series, after.series, len(before.text), len(after.text))
	}
	longest := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		longest = max(longest, len(line))
	}
	if longest > 8<<10 {
		t.Errorf("a log line of %d bytes", longest)
	}
}

// scraped is a /metrics answer: its text and how many series of the HTTP
// metrics it holds.
type scraped struct {
	text   string
	series int
}

func scrape(t *testing.T, srv *testServer) scraped {
	t.Helper()
	resp, body := srv.get(t, "/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	s := scraped{text: string(body)}
	for _, line := range strings.Split(s.text, "\n") {
		if strings.HasPrefix(line, "sidecar_http_") {
			s.series++
		}
	}
	return s
}

// TestHostileQueryEncoding: r.URL.Query() drops a parameter whose
// percent-encoding is broken, so mode=files%zz planned the row path as if
// no mode were given, and a typo planned something else. A query that does
// not parse is now a 400 that says so, on every route that reads one.
func TestHostileQueryEncoding(t *testing.T) {
	srv := newDemoServer(t)
	for _, path := range []string{
		"/splits?table=demo.orders&mode=files%zz",
		"/splits?table=demo.orders&mode=files;columns=status",
		"/splits?table=demo.orders&columns=status%",
		"/druid/task?table=demo.orders&dataSource=o&timestampColumn=order_ts&segmentGranularity=%zzDAY",
		"/druid/sql?table=demo.orders&dataSource=o&timestampColumn=order_ts&statement=replace&overwrite=%",
		"/changes?table=demo.orders&timeColumn=order_ts&fromSnapshot=%zz1",
		"/?table=demo.orders&counts=%zz",
	} {
		resp, body := srv.get(t, path)
		code, msg := apiError(t, body)
		if resp.StatusCode != http.StatusBadRequest || code != "bad_request" || !strings.Contains(msg, "query") {
			t.Errorf("%s: %d %s %q, want 400 bad_request about the query", path, resp.StatusCode, code, msg)
		}
	}
	// A query that parses plans as before.
	if p := srv.plan(t, q("table", "demo.orders", "mode", "rows")); p.Mode != "v2" {
		t.Fatalf("mode=rows planned %s", p.Mode)
	}
}

// TestHostileOddInput: input that is odd but valid was a 500: fromSnapshot
// equal to the target snapshot on /splits and /druid/* (GET /changes
// answered it), and a metadata file that is damaged, a directory, or names
// a schema it does not hold. An empty plan now answers as one does (200
// with a warning on /splits, 409 nothing_to_read where Druid needs a URI),
// and damaged metadata is a 422 that names the table.
func TestHostileOddInput(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	srv := localServer(t, dir)
	cur := srv.plan(t, q("table", "demo.orders"))
	id := fmt.Sprint(*cur.SnapshotID)

	t.Run("fromSnapshot is the target", func(t *testing.T) {
		p := srv.plan(t, q("table", "demo.orders", "fromSnapshot", id))
		if len(p.InputSource.URIs) != 0 || len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], "fromSnapshot") {
			t.Errorf("GET /splits: %d URIs, warnings %q; want none, and a warning that names fromSnapshot", len(p.InputSource.URIs), p.Warnings)
		}
		for _, path := range []string{
			"/druid/task?" + q("table", "demo.orders", "fromSnapshot", id, "dataSource", "o", "timestampColumn", "order_ts").Encode(),
			"/druid/sql?" + q("table", "demo.orders", "fromSnapshot", id, "dataSource", "o", "timestampColumn", "order_ts").Encode(),
			"/druid/task?" + q("table", "demo.orders", "fromSnapshot", id, "toSnapshot", id, "dataSource", "o", "timestampColumn", "order_ts").Encode(),
		} {
			resp, body := srv.get(t, path)
			if code, _ := apiError(t, body); resp.StatusCode != http.StatusConflict || code != "nothing_to_read" {
				t.Errorf("%s: %d %s, want 409 nothing_to_read", path, resp.StatusCode, body)
			}
		}
	})

	t.Run("damaged metadata", func(t *testing.T) {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"demo", "orders"})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(tbl.MetadataLocation())
		if err != nil {
			t.Fatal(err)
		}
		meta := t.TempDir()
		edited := func(name string, edit func(map[string]any)) string {
			// Numbers stay as written: a snapshot id does not fit a
			// float64.
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			path := filepath.Join(meta, name)
			if err := os.WriteFile(path, []byte(mustJSON(m)), 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
		cut := filepath.Join(meta, "cut.metadata.json")
		if err := os.WriteFile(cut, raw[:len(raw)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		tables := map[string]string{
			"odd.cut":    cut,
			"odd.dir":    meta,
			"odd.schema": edited("schema.metadata.json", func(m map[string]any) { m["current-schema-id"] = 99 }),
			"odd.snapshot": edited("snapshot.metadata.json", func(m map[string]any) {
				for _, s := range m["snapshots"].([]any) {
					s.(map[string]any)["schema-id"] = 99
				}
			}),
			"odd.version": edited("version.metadata.json", func(m map[string]any) { m["format-version"] = 7 }),
		}
		st := newServer(t, splits.CatalogConfig{Type: "static", Tables: tables}, nil)
		for name := range tables {
			for _, path := range []string{
				"/splits?" + q("table", name).Encode(),
				"/splits?" + q("table", name, "snapshotId", id).Encode(),
				"/druid/task?" + q("table", name, "dataSource", "o", "timestampColumn", "order_ts").Encode(),
			} {
				resp, body := st.get(t, path)
				code, msg := apiError(t, body)
				if resp.StatusCode != http.StatusUnprocessableEntity || code != "damaged_metadata" || !strings.Contains(msg, name) {
					t.Errorf("%s: %d %s %q, want 422 damaged_metadata naming the table", path, resp.StatusCode, code, msg)
				}
			}
		}
	})
}

// TestHostileRangePastEnd: a Range that starts past a row stream's end was
// answered an empty 206 after the stream's whole work, as if the stream
// were that long. At exactly the stream's length (Druid reopens there when
// a connection drops after the last byte) the answer stays an empty 206;
// past it, a 416 that gives the length, once the stream passes its end.
func TestHostileRangePastEnd(t *testing.T) {
	srv := newDemoServer(t)
	for _, compression := range []string{"none", "gzip", "zstd"} {
		t.Run(compression, func(t *testing.T) {
			p := srv.plan(t, q("table", "demo.orders", "compression", compression))
			path := strings.TrimPrefix(p.InputSource.URIs[0], srv.URL)
			resp, full := srv.get(t, path)
			if resp.StatusCode != http.StatusOK || len(full) == 0 {
				t.Fatalf("full read: %d, %d bytes", resp.StatusCode, len(full))
			}
			n := len(full)
			resp, body := srv.get(t, path, "Range", fmt.Sprintf("bytes=%d-", n))
			if resp.StatusCode != http.StatusPartialContent || len(body) != 0 || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-*/*", n) {
				t.Errorf("bytes=%d- of a %d-byte stream: %d %q, %d bytes; want an empty 206", n, n, resp.StatusCode,
					resp.Header.Get("Content-Range"), len(body))
			}
			for _, rng := range []string{fmt.Sprintf("bytes=%d-", n+1), fmt.Sprintf("bytes=%d-%d", n+100, n+200), fmt.Sprintf("bytes=%d-", 10*n)} {
				resp, body := srv.get(t, path, "Range", rng)
				if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || errorCode(t, body) != "bad_range" ||
					resp.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", n) {
					t.Errorf("%s of a %d-byte stream: %d %q %.200s; want 416 bad_range with Content-Range bytes */%d",
						rng, n, resp.StatusCode, resp.Header.Get("Content-Range"), body, n)
				}
			}
			// Within the stream the range is served as before.
			resp, body = srv.get(t, path, "Range", fmt.Sprintf("bytes=%d-", n-1))
			if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, full[n-1:]) {
				t.Errorf("bytes=%d-: %d, %d bytes", n-1, resp.StatusCode, len(body))
			}
		})
	}
}

// TestHostileReplacedFile: /files served whatever a token's path held,
// never comparing its size with the size the token pins (from the
// manifest), and its ETag came from the path alone: a data file replaced
// in place was served, and If-Range spliced the old file's bytes with the
// new one's. A size that differs from the token's is now a 409 before any
// byte, and the ETag comes from the path and the size.
func TestHostileReplacedFile(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	srv := localServer(t, dir)
	p := srv.plan(t, q("table", "demo.customers", "mode", "files"))
	path := strings.TrimPrefix(p.InputSource.URIs[0], srv.URL)
	signer, err := split.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := signer.Verify(split.KindFile, strings.TrimPrefix(path, "/files/"))
	if err != nil {
		t.Fatal(err)
	}
	resp, orig := srv.get(t, path)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || int64(len(orig)) != sp.Data.Size || etag == "" {
		t.Fatalf("%s: %d, %d bytes of %d, ETag %q", path, resp.StatusCode, len(orig), sp.Data.Size, etag)
	}

	// The data file is replaced in place by a longer one.
	replaced := append(bytes.Clone(orig), "another file's bytes"...)
	if err := os.WriteFile(strings.TrimPrefix(sp.Data.Path, "file://"), replaced, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, header := range [][]string{nil, {"Range", "bytes=10-", "If-Range", etag}} {
		resp, body := srv.get(t, path, header...)
		if resp.StatusCode != http.StatusConflict || errorCode(t, body) != "file_changed" {
			t.Errorf("the replaced file with %q: %d %.200q, want 409 file_changed", header, resp.StatusCode, body)
		}
	}

	// A token that pins the new size serves it, under another ETag: a
	// resumption that names the old one gets the whole file, never a
	// splice of the two.
	sp.Data.Size = int64(len(replaced))
	token, err := signer.Sign(split.KindFile, sp)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := srv.get(t, "/files/"+token, "Range", "bytes=10-", "If-Range", etag)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, replaced) || resp.Header.Get("ETag") == etag {
		t.Errorf("If-Range with the old ETag on the new size: %d, %d bytes, ETag %q (was %q); want 200, the whole new file, another ETag",
			resp.StatusCode, len(body), resp.Header.Get("ETag"), etag)
	}
}
