package handlers_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	differ "github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"

	// The local catalog is iceberg-go's hadoop catalog, registered on import.
	_ "github.com/apache/iceberg-go/catalog/hadoop"
)

// testKey is a fixed signing key so that tests can forge and compare tokens.
var testKey = bytes.Repeat([]byte{7}, 32)

type testServer struct {
	*httptest.Server
	reg *prometheus.Registry
	// cache is the delete cache the server's reader decodes through; nil
	// when it has none.
	cache *deletes.Cache
}

// testDeleteCacheSize is the delete cache of the test servers: the
// sidecar's default.
const testDeleteCacheSize = 256 << 20

// newServer starts the real router over the given catalog on an httptest
// server, with a delete cache wired to the metrics as the sidecar does.
func newServer(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return newServerWithCache(t, cfg, mappings, testDeleteCacheSize, opts...)
}

// newServerWithCache is newServer with a delete cache of cacheSize bytes;
// with 0 the reader reads every delete file of every split.
func newServerWithCache(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, cacheSize int64, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return newServerListening(t, cfg, mappings, cacheSize, nil, opts...)
}

// connStateHook is a listener that wants http.Server's ConnState calls.
type connStateHook interface {
	ConnState(net.Conn, http.ConnState)
}

// newServerListening is newServerWithCache with the server's listener
// wrapped by listen (nil: as it is).
func newServerListening(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, cacheSize int64,
	listen func(net.Listener) net.Listener, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	signer, reg, m := sidecarBasics(t)
	var cache *deletes.Cache
	if cacheSize > 0 {
		cache = deletes.NewCache(cacheSize, reg)
	}
	hc := handlers.Config{
		Catalogs: []handlers.Catalog{testCatalog(t, cfg, mappings, signer, reg, reader.WithDeleteCache(cache))},
		Signer:   signer,
		Metrics:  m,
		Gatherer: reg,
	}
	for _, o := range opts {
		o(&hc)
	}
	srv := httptest.NewUnstartedServer(nil)
	if listen != nil {
		srv.Listener = listen(srv.Listener)
		// A listener that tracks its connections' states (a
		// connlimit.Listener) is told them.
		if l, ok := srv.Listener.(connStateHook); ok {
			srv.Config.ConnState = l.ConnState
		}
	}
	if len(hc.BasicAuth) > 0 && hc.PublicURL == "" {
		// Basic auth builds URIs from the public URL only.
		hc.PublicURL = "http://" + srv.Listener.Addr().String()
	}
	srv.Config.Handler = handlers.New(hc)
	srv.Start()
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, reg: reg, cache: cache}
}

// testCatalog wires one catalog the way the sidecar does: the catalog,
// with mappings as its location map, a planner over it, and a reader whose
// metrics go on reg.
func testCatalog(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, signer *token.Signer, reg prometheus.Registerer, opts ...reader.Option) handlers.Catalog {
	t.Helper()
	c := plannerCatalog(t, cfg, mappings, signer)
	c.Rows = reader.New(reg, opts...)
	return c
}

// plannerCatalog is testCatalog with planner options.
func plannerCatalog(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, signer *token.Signer, opts ...splits.PlannerOption) handlers.Catalog {
	t.Helper()
	if mappings != nil {
		cfg.LocationMap = mappings
	}
	cat := catalogtest.Open(t, cfg)
	planner, err := splits.NewPlanner(cat, signer, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return wireCatalog(cat, planner, reader.New(nil))
}

// serveCatalog serves cat, a catalog the test built with options of its
// own, through the real router, with a planner that signs with signer.
func serveCatalog(t testing.TB, cat *sidecatalog.Catalog, signer *token.Signer) *testServer {
	t.Helper()
	planner, err := splits.NewPlanner(cat, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(handlers.New(handlers.Config{
		Catalogs: []handlers.Catalog{wireCatalog(cat, planner, reader.New(reg))},
		Signer:   signer, Metrics: metrics.New(reg), Gatherer: reg,
	}))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, reg: reg}
}

// registererOf is the registry of a test server's configuration, for the
// components a test wires in its configure function to register on.
func registererOf(c *handlers.Config) prometheus.Registerer {
	return c.Gatherer.(prometheus.Registerer)
}

// sidecarBasics are what every test sidecar has of its own: the signer of
// testKey, and a private registry with the sidecar's metrics on it.
func sidecarBasics(t testing.TB) (*token.Signer, *prometheus.Registry, *metrics.Metrics) {
	t.Helper()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	return signer, reg, metrics.New(reg)
}

// startSidecar serves the catalog of cfg as cmd/sidecar wires it, on an
// httptest server that shares nothing with another but the token key: the
// catalog and a planner (with opts) that report to the sidecar's own
// metrics, and a reader; configure, when not nil, sets more of the
// handlers' configuration.
func startSidecar(t testing.TB, cfg sidecatalog.Config, opts []splits.PlannerOption, configure func(*handlers.Config)) *testServer {
	t.Helper()
	signer, reg, m := sidecarBasics(t)
	cat := catalogtest.OpenRegistered(t, cfg, reg)
	planner, err := splits.NewPlanner(cat, signer, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hc := handlers.Config{Catalogs: []handlers.Catalog{wireCatalog(cat, planner, reader.New(reg))}, Signer: signer, Metrics: m, Gatherer: reg}
	if configure != nil {
		configure(&hc)
	}
	srv := httptest.NewServer(handlers.New(hc))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, reg: reg}
}

// wireCatalog wires a catalog, its planner and a reader into the route
// families as cmd/sidecar does.
func wireCatalog(cat *sidecatalog.Catalog, p *splits.Planner, rd *reader.Reader) handlers.Catalog {
	return handlers.Catalog{Type: cat.Type(), Name: cat.Name(), Plans: p, Changes: differ.New(p), Splits: p, Rows: rd, Tables: cat}
}

// plan is the part of GET /splits' answer the tests read.
type plan struct {
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

// basicAuth is the Authorization header value of HTTP Basic credentials.
func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func (s *testServer) get(t testing.TB, path string, header ...string) (*http.Response, []byte) {
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

// plan calls GET /splits and fails the test unless it answers 200.
func (s *testServer) plan(t testing.TB, query url.Values) plan {
	t.Helper()
	resp, body := s.get(t, "/splits?"+query.Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /splits?%s: %d %s", query.Encode(), resp.StatusCode, body)
	}
	var p plan
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("decode plan: %v\n%s", err, body)
	}
	if len(p.InputSource.URIs) != len(p.Splits) {
		t.Fatalf("plan has %d uris but %d splits", len(p.InputSource.URIs), len(p.Splits))
	}
	return p
}

// rows reads every split of a v2 plan and returns the NDJSON lines.
func (s *testServer) rows(t testing.TB, p plan) []string {
	t.Helper()
	if p.Mode != "v2" || p.InputFormat.Type != "json" {
		t.Fatalf("plan is %s/%s, want v2/json", p.Mode, p.InputFormat.Type)
	}
	var lines []string
	for _, u := range p.InputSource.URIs {
		path := strings.TrimPrefix(u, s.URL)
		resp, body := s.get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
			t.Fatalf("Content-Type %q", ct)
		}
		lines = append(lines, ndjsonLines(t, body)...)
	}
	return lines
}

// ndjsonLines splits an NDJSON body, checking the framing: every line is one
// valid JSON object, `\n`-terminated, no blank lines.
func ndjsonLines(t testing.TB, body []byte) []string {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	if body[len(body)-1] != '\n' {
		t.Fatalf("body does not end with a newline: %q", tail(body))
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

func tail(b []byte) []byte {
	if len(b) > 80 {
		return b[len(b)-80:]
	}
	return b
}

func errorCode(t testing.TB, body []byte) string {
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

// fixturesDir is the engine-written fixture tables (testdata/fixtures,
// read-only: see its README).
func fixturesDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %v: %v", v, err))
	}
	return string(b)
}
