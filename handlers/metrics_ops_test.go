package handlers_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestMetricsAfterDemoRead reads demo.orders and holds the counters to the
// table's exact counts (7 rows in two data files; positions 1 and 3 of A and 0
// of B deleted by position, order 1005 by equality; 3 live rows), then checks
// the scrape with promtool.
func TestMetricsAfterDemoRead(t *testing.T) {
	srv := newDemoServer(t)
	lines := srv.rows(t, srv.plan(t, q("table", "demo.orders")))
	if len(lines) != 3 {
		t.Fatalf("demo.orders: %d live rows, want 3", len(lines))
	}
	srv.plan(t, q("table", "demo.customers"))

	m := metricsOf(t, srv)
	for name, want := range map[string]float64{
		`sidecar_rows_read_total`:                     7,
		`sidecar_rows_emitted_total`:                  3,
		`sidecar_rows_deleted_total{kind="position"}`: 3,
		`sidecar_rows_deleted_total{kind="equality"}`: 1,
		`sidecar_splits_planned_total{path="v2"}`:     1, // its two files packed into one split
		`sidecar_streams_active`:                      0,
		// File A reads the positional and the equality delete file; file B
		// finds the positional one in the delete cache.
		`sidecar_delete_file_loads_total{kind="position"}`:   1,
		`sidecar_delete_file_loads_total{kind="equality"}`:   1,
		`sidecar_delete_cache_misses_total{kind="position"}`: 1,
		`sidecar_delete_cache_misses_total{kind="equality"}`: 1,
		`sidecar_delete_cache_hits_total{kind="position"}`:   1,
		`sidecar_delete_cache_evictions_total`:               0,
		`sidecar_delete_cache_bytes`:                         float64(srv.cache.Stats().Bytes),
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if m[`sidecar_delete_cache_bytes`] <= 0 {
		t.Errorf("the delete cache holds %v bytes after a read", m[`sidecar_delete_cache_bytes`])
	}
	if m[`sidecar_splits_planned_total{path="v1"}`] < 1 {
		t.Errorf("demo.customers planned no v1 split")
	}
	if got := testutil.CollectAndCount(srv.reg, "sidecar_http_requests_total"); got < 2 {
		t.Errorf("sidecar_http_requests_total has %d series", got)
	}

	// A second read finds every delete file in the cache.
	srv.rows(t, srv.plan(t, q("table", "demo.orders")))
	m = metricsOf(t, srv)
	for name, want := range map[string]float64{
		`sidecar_rows_emitted_total`:                         6,
		`sidecar_delete_file_loads_total{kind="position"}`:   1,
		`sidecar_delete_file_loads_total{kind="equality"}`:   1,
		`sidecar_delete_cache_misses_total{kind="position"}`: 1,
		`sidecar_delete_cache_hits_total{kind="position"}`:   3,
		`sidecar_delete_cache_hits_total{kind="equality"}`:   1,
	} {
		if got := m[name]; got != want {
			t.Errorf("after a second read: %s = %v, want %v", name, got, want)
		}
	}

	_, body := srv.get(t, "/metrics")
	testenv.PromtoolCheck(t, body)
}

// TestMetricsWithoutDeleteCache: with --delete-cache-size 0 every split reads
// each of its delete files once, and the cache's metrics stay empty.
func TestMetricsWithoutDeleteCache(t *testing.T) {
	srv := newDemoServerWithCache(t, 0)
	srv.rows(t, srv.plan(t, q("table", "demo.orders")))
	m := metricsOf(t, srv)
	for name, want := range map[string]float64{
		`sidecar_rows_emitted_total`: 3,
		// Files A and B pack into one split, which scans the positional
		// delete file they share once; file A also reads the equality one.
		`sidecar_delete_file_loads_total{kind="position"}`: 1,
		`sidecar_delete_file_loads_total{kind="equality"}`: 1,
		`sidecar_delete_cache_evictions_total`:             0,
		`sidecar_delete_cache_bytes`:                       0,
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for name := range m {
		if strings.HasPrefix(name, "sidecar_delete_cache_hits_total") || strings.HasPrefix(name, "sidecar_delete_cache_misses_total") {
			t.Errorf("no cache, yet %s = %v", name, m[name])
		}
	}
}

// TestDeleteCacheMetricsFollowTheCache serves demo.orders with a delete cache
// too small for both of its delete files, so that entries are evicted, and
// holds every delete cache metric to the cache's own counts.
func TestDeleteCacheMetricsFollowTheCache(t *testing.T) {
	// What both entries take, from a cache that keeps them.
	probe := newDemoServer(t)
	probe.rows(t, probe.plan(t, q("table", "demo.orders")))
	both := probe.cache.Stats().Bytes
	if probe.cache.Stats().Entries != 2 {
		t.Fatalf("the probe cache holds %+v, want the two delete files", probe.cache.Stats())
	}

	srv := newDemoServerWithCache(t, both-1)
	for range 2 {
		srv.rows(t, srv.plan(t, q("table", "demo.orders")))
	}
	cs := srv.cache.Stats()
	if cs.Evictions == 0 || cs.Entries != 1 {
		t.Fatalf("a cache one byte short of both entries: %+v", cs)
	}
	m := metricsOf(t, srv)
	want := map[string]float64{
		`sidecar_delete_cache_evictions_total`: float64(cs.Evictions),
		`sidecar_delete_cache_bytes`:           float64(cs.Bytes),
	}
	for _, kind := range []token.DeleteKind{token.DeletePosition, token.DeleteEquality} {
		want[`sidecar_delete_cache_hits_total{kind="`+string(kind)+`"}`] = float64(cs.Hits[kind])
		want[`sidecar_delete_cache_misses_total{kind="`+string(kind)+`"}`] = float64(cs.Misses[kind])
		// Nothing failed: every miss was a load.
		want[`sidecar_delete_file_loads_total{kind="`+string(kind)+`"}`] = float64(cs.Misses[kind])
	}
	for name, w := range want {
		if got := m[name]; got != w {
			t.Errorf("%s = %v, the cache says %v", name, got, w)
		}
	}
	// Two reads of two splits: four positional and two equality lookups.
	if cs.Hits[token.DeletePosition]+cs.Misses[token.DeletePosition] != 4 ||
		cs.Hits[token.DeleteEquality]+cs.Misses[token.DeleteEquality] != 2 {
		t.Errorf("lookups %+v", cs)
	}
	_, body := srv.get(t, "/metrics")
	testenv.PromtoolCheck(t, body)
}

// metricsOf is sidecartest.MetricsOf.
func metricsOf(t *testing.T, srv *testServer) map[string]float64 {
	t.Helper()
	return sidecartest.MetricsOf(t, srv.served())
}
