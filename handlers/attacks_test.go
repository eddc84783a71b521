package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/sharedtables"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
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
	t.Parallel()
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

	// Three times the 100 series the check below allows the attack to
	// add: a label per method would show at any count, in the labels.
	const odd = 300
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
	t.Parallel()
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
	t.Parallel()
	ctx := context.Background()
	cat, srv := demoWarehouse(t)
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
			if err := os.WriteFile(path, []byte(sidecartest.MustJSON(m)), 0o644); err != nil {
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
		// The edited metadata files are elsewhere than the table's files,
		// whose folder the operator gives as a data root.
		st := newServer(t, sidecatalog.Config{Type: "static", Tables: tables, DataRoots: []string{tbl.Location()}}, nil)
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
	t.Parallel()
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
	t.Parallel()
	_, srv := demoWarehouse(t)
	p := srv.plan(t, q("table", "demo.customers", "mode", "files"))
	path := strings.TrimPrefix(p.InputSource.URIs[0], srv.URL)
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := signer.Verify(token.KindFile, strings.TrimPrefix(path, "/files/"))
	if err != nil {
		t.Fatal(err)
	}
	resp, orig := srv.get(t, path)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || int64(len(orig)) != sp.Data.Size || etag == "" {
		t.Fatalf("%s: %d, %d bytes of %d, ETag %q", path, resp.StatusCode, len(orig), sp.Data.Size, etag)
	}

	// The data file is replaced in place by a longer one (framed as
	// Parquet is, so that /files's magic-bytes check passes).
	replaced := append(append(bytes.Clone(orig[:4]), "another file's bytes"...), orig[4:]...)
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
	token, err := signer.Sign(token.KindFile, sp)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := srv.get(t, "/files/"+token, "Range", "bytes=10-", "If-Range", etag)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, replaced) || resp.Header.Get("ETag") == etag {
		t.Errorf("If-Range with the old ETag on the new size: %d, %d bytes, ETag %q (was %q); want 200, the whole new file, another ETag",
			resp.StatusCode, len(body), resp.Header.Get("ETag"), etag)
	}
}

// demoWarehouse writes the demo tables into a local warehouse of their own
// and serves it; the catalog lets a test change the tables.
func demoWarehouse(t *testing.T) (*hadoop.Catalog, *testServer) {
	t.Helper()
	cat, dir := localWarehouse(t)
	if err := demo.Write(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	return cat, localServer(t, dir)
}

// smallBuffers is sidecartest.SmallBuffers: a client that stops reading
// blocks the server's writes after a few KiB, so the attacks below need
// answers of a few MB, not the 59 MB of the streams they were first tried
// with.
type smallBuffers = sidecartest.SmallBuffers

// nonReader sends one GET for path on a connection of its own, whose
// receive buffer is a few KiB, reads the answer's head and then nothing:
// the server's writes of the body block once the buffers between are full.
// Its body, read later, tells whether and how the server ended it.
func nonReader(t testing.TB, addr, path string) *http.Response {
	t.Helper()
	resp, c, err := sidecartest.DialNonReader(addr, path, nil)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// rowsTable is the warehouse of bench.t, a table whose one split streams a
// few MB of rows, shared by the tests that only read it
// (sharedtables.Warehouse).
func rowsTable(t *testing.T) (dir string) {
	t.Helper()
	dir, _ = sharedtables.Warehouse(t, "rows", func(ctx context.Context, cat *hadoop.Catalog) (struct{}, error) {
		_, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"bench", "t"}, 10_000, 1, 0.05, 0)
		return struct{}{}, err
	})
	return dir
}

// TestHostileNonReaders: 64 connections that asked for a 59 MB row stream
// and never read it held every stream slot, and 1 to 1.5 GB, for as long as
// they stayed open: the server has no write deadline. A write that moves
// no byte for WriteStallTimeout now cuts the connection (no clean end, so
// the client sees a truncated body, never a short complete one), and the
// slots are free again; a slow reader that keeps reading is not cut.
func TestHostileNonReaders(t *testing.T) {
	t.Parallel()
	// A bound of seconds: a reader that reads all the time must never
	// be cut, even on a machine so loaded that it is scheduled late.
	const streams, stall = 4, 2 * time.Second
	var logs testlog.Buffer
	srv := newServerListening(t, sidecatalog.Config{Type: "local", Warehouse: rowsTable(t)}, nil, testDeleteCacheSize,
		func(l net.Listener) net.Listener { return smallBuffers{Listener: l} },
		func(c *handlers.Config) {
			c.MaxStreams, c.WriteStallTimeout = streams, stall
			c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		})
	addr := strings.TrimPrefix(srv.URL, "http://")
	path := strings.TrimPrefix(srv.plan(t, q("table", "bench.t")).InputSource.URIs[0], srv.URL)
	_, want := srv.get(t, path)

	var held []*http.Response
	for i := range streams {
		resp := nonReader(t, addr, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("non-reader %d: %d", i, resp.StatusCode)
		}
		held = append(held, resp)
	}
	// The server cuts each non-reader once a write of its stream has
	// moved no byte for stall: its request line, logged "aborted", comes
	// after its slot is free and its cut is counted. Waiting for all of
	// them, not just a free slot: reading a non-reader's body before the
	// server cut it would let its stream end cleanly.
	awaitRequests(t, &logs, "/splits/{token}/rows", "aborted", streams)
	if resp, body := srv.get(t, path); resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Fatalf("the stream after the %d non-readers were cut: %d, %d bytes, want 200 and the %d of the reference",
			streams, resp.StatusCode, len(body), len(want))
	}
	for i, resp := range held {
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil || n >= int64(len(want)) {
			t.Errorf("non-reader %d: the body ended cleanly after %d of %d bytes (%v), want a cut", i, n, len(want), err)
		}
	}
	if got := metricValue(t, srv, "sidecar_stream_aborts_total", "cause", "client_stalled"); got != streams {
		t.Errorf("sidecar_stream_aborts_total{cause=\"client_stalled\"} = %v, want %d", got, streams)
	}
	if got := metricSum(t, srv, "sidecar_http_write_stalls_total"); got != streams {
		t.Errorf("sidecar_http_write_stalls_total = %v, want %d", got, streams)
	}

	// A reader that reads a little every stall/20 is never cut. The pace
	// is what is under test: slow on purpose, for longer than the bound.
	resp := nonReader(t, addr, path)
	var got bytes.Buffer
	buf := make([]byte, 16<<10)
	pace := time.NewTicker(stall / 20)
	defer pace.Stop()
	for start := time.Now(); time.Since(start) < 2*stall; <-pace.C {
		n, err := io.ReadFull(resp.Body, buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("a slow reader was cut after %d bytes: %v", got.Len(), err)
		}
	}
	if _, err := io.Copy(&got, resp.Body); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the slow reader's stream: %d bytes (%v), want the %d of the reference", got.Len(), err, len(want))
	}
}

// metricValue is sidecartest.MetricValue.
func metricValue(t *testing.T, srv *testServer, name, label, value string) float64 {
	t.Helper()
	return sidecartest.MetricValue(t, srv.served(), name, label, value)
}

// TestHostilePlanNonReaders: the planning slot was released only once the
// answer was written, and a write to a client that does not read blocks
// with no deadline: 16 connections that pipelined /druid/task requests and
// never read held every planning slot for as long as they liked (with
// --plan-timeout 5s, still 503 at 15 s). The answer is now rendered, the
// slot released, and only then written: clients that do not read hold
// connections and their answers, never a slot.
func TestHostilePlanNonReaders(t *testing.T) {
	t.Parallel()
	const plans = 2
	cat, dir := localWarehouse(t)
	if _, err := tablegen.Wide(context.Background(), cat, table.Identifier{"wide", "t"}, 1000, 0); err != nil {
		t.Fatal(err)
	}
	srv := newServerListening(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil, testDeleteCacheSize,
		func(l net.Listener) net.Listener { return smallBuffers{Listener: l} },
		func(c *handlers.Config) { c.MaxPlans, c.PlanTimeout = plans, time.Minute })
	addr := strings.TrimPrefix(srv.URL, "http://")
	// Answers of a megabyte or more: far more than the buffers between
	// the server and a client that does not read.
	for _, path := range []string{
		"/splits?table=wide.t&minSplits=1000",
		"/druid/task?table=wide.t&minSplits=1000&dataSource=w&timestampColumn=event_date",
	} {
		for i := range plans {
			// Once the answer's head is in, its writer is past its
			// slot, or (before) blocked on the rest while holding it.
			if resp := nonReader(t, addr, path); resp.StatusCode != http.StatusOK {
				t.Fatalf("non-reader %d of %s: %d, want 200: the non-readers before it hold no planning slot", i, path, resp.StatusCode)
			}
		}
	}
	for _, path := range []string{"/splits?table=wide.t", "/druid/sql?table=wide.t&dataSource=w&timestampColumn=event_date", "/?table=wide.t"} {
		if resp, body := srv.get(t, path); resp.StatusCode != http.StatusOK {
			t.Errorf("%s beside %d non-readers of plans on each of %d slots: %d %.200s", path, 2*plans, plans, resp.StatusCode, body)
		}
	}
}

// TestHostileUnauthenticatedConnections: a 401 kept its connection alive,
// so a client without credentials held a file descriptor for as long as
// the idle timeout let it. A 401 (and a 429) now closes the connection.
func TestHostileUnauthenticatedConnections(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t, func(c *handlers.Config) {
		c.BasicAuth = []handlers.Credential{{Username: "druid", Password: "pw"}}
	})
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	resp, err := testnet.Ask(c, br, "GET /splits?table=demo.orders HTTP/1.1\r\nHost: sidecar\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("%d, Connection: close %v; want a 401 that closes the connection", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the 401 the connection reads %v, want EOF: the server closed it", err)
	}
}

// TestHostileOverwriteYear: overwrite=2024-01-01/P100000000Y wrote a
// 9-digit year into the statement's TIMESTAMP literals, which Druid's SQL
// parser refuses (Calcite's TimestampString has four-digit years): a
// statement handed out that Druid cannot run. An interval outside years
// 0000 to 9999 is now a 400 that says so.
func TestHostileOverwriteYear(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for _, overwrite := range []string{"2024-01-01/P100000000Y", "P3000Y/2024-01-01", "2024-01-01/10000-01-01"} {
		resp, body := srv.get(t, "/druid/sql?"+q("table", "demo.orders", "dataSource", "o", "timestampColumn", "order_ts",
			"statement", "replace", "partitionedBy", "DAY", "overwrite", overwrite).Encode())
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "four-digit year") {
			t.Errorf("overwrite=%s: %d %.300s, want a 400 about the year", overwrite, resp.StatusCode, body)
		}
	}
	resp, body := srv.get(t, "/druid/sql?"+q("table", "demo.orders", "dataSource", "o", "timestampColumn", "order_ts",
		"statement", "replace", "partitionedBy", "DAY", "overwrite", "2024-01-01/9999-12-31").Encode())
	if resp.StatusCode != http.StatusOK {
		t.Errorf("overwrite up to 9999-12-31: %d %.300s", resp.StatusCode, body)
	}
}

// TestHostileRestoredMetadata: a plan-reference token whose metadata file
// was rewritten in place is a 409 plan_mismatch; but the replica kept the
// mismatched plan (and the rewritten metadata) cached, so the token stayed
// a 409 after the metadata file was restored. A mismatch now reads the
// metadata file again, and a file that changed since is planned again.
func TestHostileRestoredMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	tbl, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"ref", "t"}, 3000, 30, 0.02, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	planner := splittingServer(t, dir, splits.WithTargetSplitSize(80_000))
	p := planner.plan(t, q("table", "ref.t"))
	path := strings.TrimPrefix(p.InputSource.URIs[0], planner.URL)
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := signer.Decode(token.KindRows, strings.TrimSuffix(strings.TrimPrefix(path, "/splits/"), "/rows")); err != nil || tok.Ref == nil {
		t.Fatalf("the first split is not a plan reference: %v", err)
	}
	_, want := planner.get(t, path)

	// The metadata file is rewritten in place: the current snapshot lists
	// its parent's manifests, without the delete files.
	loc := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	orig, err := os.ReadFile(loc)
	if err != nil {
		t.Fatal(err)
	}
	parent := tbl.SnapshotByID(*tbl.CurrentSnapshot().ParentSnapshotID)
	rewritten := bytes.Replace(orig, []byte(`"`+tbl.CurrentSnapshot().ManifestList+`"`), []byte(`"`+parent.ManifestList+`"`), 1)
	if bytes.Equal(rewritten, orig) {
		t.Fatal("the metadata file does not name the current snapshot's manifest list")
	}
	if err := os.WriteFile(loc, rewritten, 0o644); err != nil {
		t.Fatal(err)
	}
	// A replica that meets the token now plans it again from the
	// rewritten file: a mismatch.
	replica := splittingServer(t, dir, splits.WithTargetSplitSize(80_000))
	resp, body := replica.get(t, path)
	if resp.StatusCode != http.StatusConflict || errorCode(t, body) != "plan_mismatch" {
		t.Fatalf("the token against the rewritten metadata: %d %.300s, want 409 plan_mismatch", resp.StatusCode, body)
	}
	// Restored, the token reads again.
	if err := os.WriteFile(loc, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	resp, body = replica.get(t, path)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Fatalf("the token after the metadata was restored: %d %.300s, want the %d bytes the planner serves", resp.StatusCode, body, len(want))
	}
}
