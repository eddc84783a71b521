package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// positionalFixture is a small engine-written table with positional deletes.
func positionalFixture(t testing.TB) fixture {
	return namedFixture(t, "impala__iceberg_v2_delete_positional")
}

// partitionedFixture is a partitioned engine-written table (id, user,
// action, event_time) with positional deletes.
func partitionedFixture(t testing.TB) fixture {
	return namedFixture(t, "impala__iceberg_v2_partitioned_position_deletes")
}

func TestErrors(t *testing.T) {
	srv := positionalFixture(t).server(t)
	p := srv.plan(t, q("table", "fixtures.t"))
	if p.Mode != "v2" || len(p.Splits) == 0 {
		t.Fatalf("want a v2 plan, got %s with %d splits", p.Mode, len(p.Splits))
	}
	rowsPath := strings.TrimPrefix(p.Splits[0].URI, srv.URL)
	token := strings.TrimSuffix(strings.TrimPrefix(rowsPath, "/splits/"), "/rows")

	// Flip one byte in the payload and one in the signature: each still
	// decodes, so both must be refused as forged, not as garbage.
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	dot := strings.IndexByte(token, '.')

	tests := []struct {
		name   string
		path   string
		header []string
		status int
		code   string
	}{
		{"payload byte changed", "/splits/" + flip(token, dot/2) + "/rows", nil, 403, "bad_signature"},
		{"signature byte changed", "/splits/" + flip(token, dot+5) + "/rows", nil, 403, "bad_signature"},
		{"garbage token", "/splits/not-a-token/rows", nil, 400, "malformed_token"},
		{"rows token on the file route", "/files/" + token, nil, 403, "bad_signature"},
		{"unknown table", "/splits?table=fixtures.nope", nil, 404, "table_not_found"},
		{"no table", "/splits", nil, 400, "bad_request"},
		{"table without namespace", "/splits?table=t", nil, 400, "bad_request"},
		{"unknown parameter", "/splits?table=fixtures.t&snapshotid=1", nil, 400, "bad_request"},
		{"bad mode", "/splits?table=fixtures.t&mode=fast", nil, 400, "bad_request"},
		{"unknown snapshot", "/splits?table=fixtures.t&snapshotId=42", nil, 404, "snapshot_not_found"},
		{"unknown ref", "/splits?table=fixtures.t&ref=nope", nil, 404, "snapshot_not_found"},
		{"two selectors", "/splits?table=fixtures.t&ref=main&snapshotId=1", nil, 400, "bad_request"},
		{"bad snapshot time", "/splits?table=fixtures.t&snapshotTime=yesterday", nil, 400, "bad_request"},
		{"before the first snapshot", "/splits?table=fixtures.t&snapshotTime=2000-01-01T00:00:00Z", nil, 404, "snapshot_not_found"},
		{"files with deletes", "/splits?table=fixtures.t&mode=files", nil, 409, "conflict"},
		{"unknown column", "/splits?table=fixtures.t&columns=id,nope", nil, 400, "bad_request"},
		{"empty column", "/splits?table=fixtures.t&columns=id,,data", nil, 400, "bad_request"},
		{"columns on raw files", "/splits?table=fixtures.t&columns=id&mode=files", nil, 400, "bad_request"},
		{"iso on raw files", "/splits?table=fixtures.t&timestamps=iso&mode=files", nil, 400, "bad_request"},
		{"bad timestamps", "/splits?table=fixtures.t&timestamps=nanos", nil, 400, "bad_request"},
		{"bad binaryAsString", "/splits?table=fixtures.t&binaryAsString=maybe", nil, 400, "bad_request"},
		{"toSnapshot and snapshotId", "/splits?table=fixtures.t&toSnapshot=1&snapshotId=1", nil, 400, "bad_request"},
		{"bad fromSnapshot", "/splits?table=fixtures.t&fromSnapshot=first", nil, 400, "bad_request"},
		{"unknown fromSnapshot", "/splits?table=fixtures.t&fromSnapshot=42", nil, 404, "snapshot_not_found"},
		{"bad applyResidual", "/splits?table=fixtures.t&applyResidual=yes", nil, 400, "bad_request"},
		{"bad minSplits", "/splits?table=fixtures.t&minSplits=many", nil, 400, "bad_request"},
		{"negative minSplits", "/splits?table=fixtures.t&minSplits=-1", nil, 400, "bad_request"},
		{"too many minSplits", "/splits?table=fixtures.t&minSplits=10001", nil, 400, "bad_request"},
		{"bad compression", "/splits?table=fixtures.t&compression=brotli", nil, 400, "bad_request"},
		{"suffix range", rowsPath, []string{"Range", "bytes=-10"}, 416, "bad_range"},
		{"unknown route", "/nope", nil, 404, "not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.get(t, tc.path, tc.header...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			if code := errorCode(t, body); code != tc.code {
				t.Fatalf("code %q, want %q: %s", code, tc.code, body)
			}
		})
	}
}

// TestRowsRange checks that a full read equals its first N bytes followed by
// the body of a `Range: bytes=N-` request, for every N, as Druid resumes.
func TestRowsRange(t *testing.T) {
	f := positionalFixture(t)
	srv := f.server(t)
	p := srv.plan(t, q("table", "fixtures.t"))
	path := strings.TrimPrefix(p.Splits[0].URI, srv.URL)

	resp, full := srv.get(t, path)
	if resp.StatusCode != http.StatusOK || len(full) == 0 {
		t.Fatalf("full read: %d, %d bytes", resp.StatusCode, len(full))
	}
	_, again := srv.get(t, path)
	if !bytes.Equal(full, again) {
		t.Fatal("two reads of one token differ")
	}
	// Druid's first request, bytes=0-, is the whole body: a plain 200.
	resp, first := srv.get(t, path, "Range", "bytes=0-")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Range") != "" || !bytes.Equal(first, full) {
		t.Fatalf("bytes=0-: %d, Content-Range %q", resp.StatusCode, resp.Header.Get("Content-Range"))
	}
	for n := 1; n <= len(full); n++ {
		resp, rest := srv.get(t, path, "Range", fmt.Sprintf("bytes=%d-", n))
		if resp.StatusCode != http.StatusPartialContent {
			t.Fatalf("bytes=%d-: status %d", n, resp.StatusCode)
		}
		if cr := resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-*/*", n) {
			t.Fatalf("bytes=%d-: Content-Range %q", n, cr)
		}
		if got := append(append([]byte{}, full[:n]...), rest...); !bytes.Equal(got, full) {
			t.Fatalf("bytes=%d-: prefix+rest differs from the full read", n)
		}
	}
	resp, mid := srv.get(t, path, "Range", "bytes=2-5")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(mid, full[2:6]) || resp.Header.Get("Content-Range") != "bytes 2-5/*" {
		t.Fatalf("bytes=2-5: %d %q %q, want %q", resp.StatusCode, resp.Header.Get("Content-Range"), mid, full[2:6])
	}
}

func TestHealthAndMetrics(t *testing.T) {
	srv := positionalFixture(t).server(t)
	for _, path := range []string{"/healthz", "/readyz", "/openapi.yaml"} {
		if resp, body := srv.get(t, path); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	p := srv.plan(t, q("table", "fixtures.t"))
	lines := srv.rows(t, p)

	if got := metricSum(t, srv, "sidecar_rows_emitted_total"); got != float64(len(lines)) {
		t.Fatalf("sidecar_rows_emitted_total = %v, want %d", got, len(lines))
	}
	resp, body := srv.get(t, "/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{
		`sidecar_http_requests_total{code="200",method="GET",route="/splits/{token}/rows"}`,
		`sidecar_splits_planned_total{path="v2"}`,
		`sidecar_rows_deleted_total{kind="position"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), p.Splits[0].ID) || strings.Contains(string(body), "fixtures.t") {
		t.Error("/metrics leaks a split id or table name into a label")
	}
}

// metricSum is sidecartest.MetricSum.
func metricSum(t *testing.T, srv *testServer, name string) float64 {
	t.Helper()
	return sidecartest.MetricSum(t, srv.served(), name)
}

// TestPublicURL: the URIs handed out start with --public-url when it is set,
// else with the base the request came in on.
func TestPublicURL(t *testing.T) {
	f := positionalFixture(t)
	srv := newServer(t, sidecatalog.Config{
		Type:   "static",
		Tables: map[string]string{"fixtures.t": filepath.Join(f.Dir, f.Metadata)},
	}, f.mappings(), func(c *handlers.Config) { c.PublicURL = "https://sidecar.example:8443/" })
	for _, u := range srv.plan(t, q("table", "fixtures.t")).InputSource.URIs {
		if !strings.HasPrefix(u, "https://sidecar.example:8443/splits/") {
			t.Fatalf("uri %s does not start with the public URL", u)
		}
	}
	own := f.server(t)
	for _, u := range own.plan(t, q("table", "fixtures.t")).InputSource.URIs {
		if !strings.HasPrefix(u, own.URL+"/splits/") {
			t.Fatalf("uri %s does not start with the request's base %s", u, own.URL)
		}
	}
}

// TestExpiredToken: a token past its TTL answers 410 with a message that
// says to plan again; the expiry is inside the signed payload.
func TestExpiredToken(t *testing.T) {
	f := positionalFixture(t)
	srv := f.server(t)
	p := srv.plan(t, q("table", "fixtures.t"))
	good := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(p.Splits[0].URI, srv.URL), "/splits/"), "/rows")
	verifier, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := verifier.Verify(token.KindRows, good)
	if err != nil {
		t.Fatal(err)
	}
	past := func() time.Time { return time.Now().Add(-2 * time.Hour) }
	expired, err := verifier.WithTTL(time.Hour, past).Sign(token.KindRows, sp)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := srv.get(t, "/splits/"+expired+"/rows")
	if resp.StatusCode != http.StatusGone || errorCode(t, body) != "token_expired" || !strings.Contains(string(body), "plan again") {
		t.Fatalf("expired token: %d %s", resp.StatusCode, body)
	}
}

// TestAdmission: past --max-streams a row stream is refused at once with 503
// and Retry-After, and the slot is free again when the running stream ends.
func TestAdmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	// A stream of a few MB: the first one is read by a client whose
	// buffers, and the server's, hold a few KiB, so its handler blocks
	// long before the end, holding its slot.
	// Snappy: the stream's length is its rows', whatever the codec.
	if _, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"adm", "t"}, 10_000, 1, 0.01, 0); err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	srv := newServerListening(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil, testDeleteCacheSize,
		func(l net.Listener) net.Listener { return smallBuffers{Listener: l} },
		func(c *handlers.Config) { c.MaxStreams, c.Logger = 1, slog.New(slog.NewJSONHandler(&logs, nil)) })
	p := srv.plan(t, q("table", "adm.t"))
	path := strings.TrimPrefix(p.Splits[0].URI, srv.URL)

	// The first stream holds the only slot while its body is not read.
	first := nonReader(t, strings.TrimPrefix(srv.URL, "http://"), path)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %d", first.StatusCode)
	}
	resp, body := srv.get(t, path)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || errorCode(t, body) != "overloaded" {
		t.Fatalf("a second stream past --max-streams: %d %s", resp.StatusCode, body)
	}
	if n := metricSum(t, srv, "sidecar_admission_rejected_total"); n < 1 {
		t.Fatalf("sidecar_admission_rejected_total = %v", n)
	}
	// The bound is per kind, not per route: a raw file is a stream too.
	first0 := srv.plan(t, q("table", "adm.t", "snapshotId", strconv.FormatInt(firstSnapshot(t, cat), 10)))
	if resp, body := srv.get(t, strings.TrimPrefix(first0.Splits[0].URI, srv.URL)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a file stream past --max-streams: %d %s", resp.StatusCode, body)
	}
	// Planning has its own bound and is not held up.
	srv.plan(t, q("table", "adm.t"))

	if _, err := io.Copy(io.Discard, first.Body); err != nil {
		t.Fatal(err)
	}
	first.Body.Close()
	// The first stream's request line is logged once its handler has
	// left the admission, its slot free; the only stream answered 200.
	awaitRequests(t, &logs, "/splits/{token}/rows", "200", 1)
	if resp, body := srv.get(t, path, "Range", "bytes=0-99"); resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("a stream once the first has ended: %d %.200s, want 206: its slot is free", resp.StatusCode, body)
	}
}

// firstSnapshot is the id of the first snapshot of adm.t, before its deletes.
func firstSnapshot(t *testing.T, cat *hadoop.Catalog) int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"adm", "t"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Metadata().Snapshots()[0].SnapshotID
}

// TestMaxSplits: --max-splits bounds the URIs of one answer. A raw-file
// plan of more data files is a 422 in mode=files that says how to narrow
// it, and takes the packed row path in mode=auto; the row path packs
// larger splits rather than hand out more, and says so.
func TestMaxSplits(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	tbl, err := tablegen.Bench(ctx, cat, table.Identifier{"max", "t"}, 300, 3, 0.01, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	first := strconv.FormatInt(tbl.Metadata().Snapshots()[0].SnapshotID, 10) // three files, no delete file
	srv := splittingServer(t, dir, splits.WithMaxSplits(2), splits.WithTargetSplitSize(1))
	resp, body := srv.get(t, "/splits?table=max.t&mode=files&snapshotId="+first)
	if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "too_many_splits" || !strings.Contains(string(body), "icebergFilter") {
		t.Fatalf("3 raw files past --max-splits=2: %d %s", resp.StatusCode, body)
	}
	for _, query := range []url.Values{q("table", "max.t", "snapshotId", first), q("table", "max.t")} {
		p := srv.plan(t, query)
		if p.Mode != "v2" || len(p.Splits) > 2 || !strings.Contains(strings.Join(p.Warnings, "\n"), "--max-splits") {
			t.Fatalf("%s: plan %s with %d splits, warnings %q; want at most 2 packed splits and a warning", query.Encode(), p.Mode, len(p.Splits), p.Warnings)
		}
	}
}

// TestHTTPDetails: what proxies and Druid meet at the HTTP level: every
// GET route answers HEAD, a 405 says which methods a route takes, and a
// raw file's range error is JSON like every error before the first byte.
func TestHTTPDetails(t *testing.T) {
	srv := localServer(t, sharedDemo(t))
	rowsPath := strings.TrimPrefix(srv.plan(t, q("table", "demo.orders")).Splits[0].URI, srv.URL)
	files := srv.plan(t, q("table", "demo.customers"))
	if files.Mode != "v1" {
		t.Fatalf("demo.customers plans %s", files.Mode)
	}
	filePath := strings.TrimPrefix(files.Splits[0].URI, srv.URL)
	for _, path := range []string{"/splits?table=demo.orders", rowsPath, filePath, "/healthz", "/openapi.yaml", "/?table=demo.orders",
		"/druid/sql?table=demo.orders&dataSource=o&timestampColumn=order_ts"} {
		get, _ := srv.do(t, http.MethodGet, path)
		head, body := srv.do(t, http.MethodHead, path)
		if head.StatusCode != get.StatusCode || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || len(body) != 0 {
			t.Errorf("HEAD %s: %d %q (%d bytes), GET: %d %q", path, head.StatusCode, head.Header.Get("Content-Type"), len(body),
				get.StatusCode, get.Header.Get("Content-Type"))
		}
	}
	if resp, _ := srv.do(t, http.MethodHead, "/splits/AAAA.BBBB/rows"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("HEAD of a malformed token: %d", resp.StatusCode)
	}
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodDelete, "/splits?table=demo.orders", "GET, HEAD, POST"},
		{http.MethodPost, rowsPath, "GET, HEAD"},
		{http.MethodPut, "/healthz", "GET, HEAD"},
	} {
		resp, body := srv.do(t, tc.method, tc.path)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow || errorCode(t, body) != "method_not_allowed" {
			t.Errorf("%s %s: %d Allow %q %s; want 405 Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), body, tc.allow)
		}
	}
	// A range past a raw file's end is a JSON 416 that gives its size.
	size := files.Splits[0].DataFileSizeInBytes
	resp, body := srv.get(t, filePath, "Range", fmt.Sprintf("bytes=%d-", size))
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || errorCode(t, body) != "bad_range" ||
		resp.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) {
		t.Errorf("bytes=%d- of a %d-byte file: %d %q %s", size, size, resp.StatusCode, resp.Header.Get("Content-Range"), body)
	}
	if resp, body := srv.get(t, filePath, "Range", "bytes=2-5"); resp.StatusCode != http.StatusPartialContent || len(body) != 4 {
		t.Errorf("bytes=2-5: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// do sends a request without a body and reads the answer.
func (s *testServer) do(t testing.TB, method, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
