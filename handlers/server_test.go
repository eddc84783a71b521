package handlers_test

import (
	"encoding/base64"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// The test servers are sidecartest's; the names below keep the
// package's tests as they were written.

// testKey is the fixed key the test servers sign with, so that tests can
// forge and compare tokens.
var testKey = sidecartest.SigningKey()

// testServer is a sidecartest.Server under the names of this package's
// tests: reg is its registry, cache its delete cache (nil when it has
// none).
type testServer struct {
	*httptest.Server
	reg   *prometheus.Registry
	cache *deletes.Cache
}

// testDeleteCacheSize is the delete cache of the test servers: the
// sidecar's default.
const testDeleteCacheSize = sidecartest.DeleteCacheSize

func wrap(s *sidecartest.Server) *testServer {
	return &testServer{Server: s.Server, reg: s.Reg, cache: s.Cache}
}

// served is the server as sidecartest serves it.
func (s *testServer) served() *sidecartest.Server {
	return &sidecartest.Server{Server: s.Server, Reg: s.reg, Cache: s.cache}
}

// newServer is sidecartest.NewServer.
func newServer(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return wrap(sidecartest.NewServer(t, cfg, mappings, opts...))
}

// newServerWithCache is sidecartest.NewServerWithCache.
func newServerWithCache(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, cacheSize int64, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return wrap(sidecartest.NewServerWithCache(t, cfg, mappings, cacheSize, opts...))
}

// newServerListening is sidecartest.NewServerListening.
func newServerListening(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, cacheSize int64,
	listen func(net.Listener) net.Listener, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return wrap(sidecartest.NewServerListening(t, cfg, mappings, cacheSize, listen, opts...))
}

// serveCatalog is sidecartest.ServeCatalog.
func serveCatalog(t testing.TB, cat *sidecatalog.Catalog, signer *token.Signer) *testServer {
	t.Helper()
	return wrap(sidecartest.ServeCatalog(t, cat, signer))
}

// plan is the part of GET /splits' answer the tests read.
type plan sidecartest.Plan

// basicAuth is the Authorization header value of HTTP Basic credentials.
func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func (s *testServer) get(t testing.TB, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	return s.served().Get(t, path, header...)
}

// plan calls GET /splits and fails the test unless it answers 200.
func (s *testServer) plan(t testing.TB, query url.Values) plan {
	t.Helper()
	return plan(s.served().Plan(t, query))
}

// rows reads every split of a v2 plan and returns the NDJSON lines.
func (s *testServer) rows(t testing.TB, p plan) []string {
	t.Helper()
	return s.served().Rows(t, sidecartest.Plan(p))
}

// changes is the part of GET /changes' answer the tests read.
type changes sidecartest.Changes

// intervals lists the answer's intervals with their reasons.
func (c changes) intervals() []string { return sidecartest.Changes(c).Intervals() }

// changes calls GET /changes and fails the test unless it answers 200.
func (s *testServer) changes(t testing.TB, params url.Values) changes {
	t.Helper()
	return changes(s.served().Changes(t, params))
}

// druidSQL calls GET /druid/sql and fails the test unless it answers 200.
func (s *testServer) druidSQL(t testing.TB, query url.Values) sidecartest.SQLTask {
	t.Helper()
	return s.served().DruidSQL(t, query)
}

// druidTask calls GET /druid/task and fails the test unless it answers 200.
func (s *testServer) druidTask(t testing.TB, query url.Values) []byte {
	t.Helper()
	return s.served().DruidTask(t, query)
}

// errorCode is sidecartest.ErrorCode.
func errorCode(t testing.TB, body []byte) string {
	t.Helper()
	return sidecartest.ErrorCode(t, body)
}

func q(kv ...string) url.Values { return sidecartest.Q(kv...) }

// druidClient is a sidecartest.DruidClient under the names of this
// package's tests.
type druidClient struct {
	c        *http.Client
	rnd      *rand.Rand
	cutsLeft int
	cuts     int
}

// read is sidecartest.DruidClient.Read.
func (d *druidClient) read(t *testing.T, uri string) []byte {
	t.Helper()
	dc := &sidecartest.DruidClient{Client: d.c, Rand: d.rnd, CutsLeft: d.cutsLeft}
	got := dc.Read(t, uri)
	d.cutsLeft, d.cuts = dc.CutsLeft, d.cuts+dc.Cuts
	return got
}
