package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// fakeClock is the time of a sync and of the Druid model it talks to:
// sleeping moves it, at once.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	return nil
}

// localhost is a test server's URL under the name localhost rather than
// 127.0.0.1: another host to Go's client, which drops Authorization on a
// redirect between them.
func localhost(srv *httptest.Server) string {
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

// TestSyncPaced: a thousand changed days against a Druid of four task
// slots, as an operator deploys it: statements to the Broker, status from
// the Overlords. The days are a few statements, never more Druid tasks in
// flight than --max-tasks; the Overlord answers some status requests with
// a Router's 404 (a load balancer that sometimes reaches one without the
// management proxy) and then fails over, redirecting to the new leader on
// another host. The sync asks again, follows the leader with its
// credentials, and Druid ends up holding the table's rows.
func TestSyncPaced(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	model := e.druid
	model.Polls, model.Clock = 0, clock.now
	model.Capacity, model.StartupTime, model.RunTime = 4, 30*time.Second, time.Minute
	model.Concurrency = 4 // the statements' workers read their URIs at once

	broker := httptest.NewServer(model.Broker())
	t.Cleanup(broker.Close)
	var leaderCalls atomic.Int64
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaderCalls.Add(1)
		model.Overlord().ServeHTTP(w, r)
	}))
	t.Cleanup(leader.Close)
	model.LeaderURL = localhost(leader)
	var statusCalls, misrouted atomic.Int64
	var failedOver atomic.Bool
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/status") {
			n := statusCalls.Add(1)
			if n%3 == 0 {
				misrouted.Add(1)
				model.Router(false).ServeHTTP(w, r)
				return
			}
			if n == 40 {
				failedOver.Store(true)
			}
		}
		if failedOver.Load() {
			model.Standby().ServeHTTP(w, r)
			return
		}
		model.Overlord().ServeHTTP(w, r)
	}))
	t.Cleanup(first.Close)

	h, err := tablegen.NewHistory(e.ctx, e.cat, table.Identifier{"sync", "paced"},
		tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutUnpartitioned, Properties: snappy})
	if err != nil {
		t.Fatal(err)
	}
	// 2,000 rows, one every other day, in ten data files of 200 days each.
	for f := range 10 {
		var rows []tablegen.HistoryRow
		for i := 200 * f; i < 200*(f+1); i++ {
			rows = append(rows, tablegen.HistoryRow{ID: int64(i + 1), TS: micros(2*i-19_000, 5), Cat: "a", V: int64(i)})
		}
		if err := h.Append(e.ctx, rows...); err != nil {
			t.Fatal(err)
		}
	}
	p := syncPair{Table: "sync.paced", DataSource: "paced", TimeColumn: "ts", Granularity: "DAY", Mode: "rows"}
	cfg := e.cfg
	cfg.DruidURL, cfg.BrokerURL, cfg.OverlordURLs = "", broker.URL, first.URL+","+localhost(leader)
	cfg.MaxTasks, cfg.PollInterval, cfg.TaskTimeout = 4, 10*time.Second, time.Hour
	cfg.Pairs = []syncPair{p}
	logs := &bytes.Buffer{}
	run := func() error {
		s := newSyncer(cfg, slog.New(slog.NewTextHandler(logs, nil)), &bytes.Buffer{})
		s.now, s.sleep = clock.now, clock.sleep
		return s.once(e.ctx)
	}
	if err := run(); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	e.matches(t, h.Table(), p, "initial load")

	// Every other row goes: a thousand days, none adjacent to another.
	var gone []int64
	for i := 0; i < 2000; i += 2 {
		gone = append(gone, int64(i+1))
	}
	if err := h.EqualityDelete(e.ctx, true, gone...); err != nil {
		t.Fatal(err)
	}
	n := len(model.Submitted())
	if err := run(); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	e.matches(t, h.Table(), p, "after a thousand changed days")
	statements := len(model.Submitted()) - n
	if days := len(e.intervals(t, n)); days != 1000 || statements > 50 {
		t.Fatalf("%d days in %d statements", days, statements)
	}
	if peak := model.Peak(); peak > cfg.MaxTasks {
		t.Fatalf("%d Druid tasks in flight at once, more than --max-tasks %d", peak, cfg.MaxTasks)
	}
	if misrouted.Load() == 0 || !failedOver.Load() || !strings.Contains(logs.String(), "following the Overlord leader") ||
		!strings.Contains(logs.String(), "not as the Overlord does") {
		t.Fatalf("%d misrouted, failed over %v:\n%s", misrouted.Load(), failedOver.Load(), logs)
	}
	if leaderCalls.Load() == 0 {
		t.Fatal("the new leader was never asked")
	}
	t.Logf("%d statements, at most %d Druid tasks at once, %d status answers misrouted", statements, model.Peak(), misrouted.Load())
}

// TestSyncEndpoints: sync checks, before it submits anything, that the
// Broker takes statements and an Overlord answers for the task API, and
// names the fix when not.
func TestSyncEndpoints(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "ends")
	p := syncPair{Table: "sync.ends", DataSource: "ends", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
	model := e.druid
	serve := func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	broker, overlord, router := serve(model.Broker()), serve(model.Overlord()), serve(model.Router(false))
	for _, tc := range []struct {
		name, druid, broker, overlords, want string
	}{
		{"statements to an Overlord", "", overlord, overlord, "does not serve SQL-based ingestion"},
		{"status from a default Router", router, "", "", "druid.router.managementProxy.enabled=true"},
		{"status from a Broker", "", broker, broker, "does not serve the Overlord's task API"},
		{"nothing answers", "", broker, "http://127.0.0.1:1", "no Druid Overlord answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.cfg
			cfg.DruidURL, cfg.BrokerURL, cfg.OverlordURLs = tc.druid, tc.broker, tc.overlords
			s := newSyncer(cfg, slog.New(slog.DiscardHandler), &bytes.Buffer{})
			n := len(model.Submitted())
			err := s.once(e.ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(model.Submitted()) != n {
				t.Fatalf("%v; want %q and nothing submitted", err, tc.want)
			}
		})
	}
	// A Broker and an Overlord, each for its own.
	cfg := e.cfg
	cfg.DruidURL, cfg.BrokerURL, cfg.OverlordURLs = "", broker, overlord
	cfg.Pairs = []syncPair{p}
	if err := newSyncer(cfg, slog.New(slog.DiscardHandler), &bytes.Buffer{}).once(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.matches(t, h.Table(), p, "through a Broker and an Overlord")
}

// TestSyncRedirects: a standby Overlord redirects to the leader. Sync
// follows to a configured host with its credentials (Go's client drops
// them for another host, and the leader would answer 401), and refuses to
// follow anywhere else.
func TestSyncRedirects(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "redirect")
	p := syncPair{Table: "sync.redirect", DataSource: "redirect", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
	model := e.druid
	leader := httptest.NewServer(model.Overlord())
	t.Cleanup(leader.Close)
	standby := httptest.NewServer(model.Standby())
	t.Cleanup(standby.Close)
	broker := httptest.NewServer(model.Broker())
	t.Cleanup(broker.Close)
	model.LeaderURL = localhost(leader)

	// The leader under another name than configured: not followed.
	cfg := e.cfg
	cfg.DruidURL, cfg.BrokerURL, cfg.OverlordURLs = "", broker.URL, standby.URL+","+leader.URL
	cfg.Pairs = []syncPair{p}
	logs := &bytes.Buffer{}
	s := newSyncer(cfg, slog.New(slog.NewTextHandler(logs, nil)), &bytes.Buffer{})
	s.druid.overlord = standby.URL // as if the leader had just moved
	s.probed = true
	err := s.once(e.ctx)
	if err == nil || !strings.Contains(logs.String(), "not a configured Druid host") || !strings.Contains(logs.String(), localhost(leader)) {
		t.Fatalf("a redirect to an unlisted host: %v\n%s", err, logs)
	}
	if st := e.state(t, "redirect"); st == nil || len(st.Pending) == 0 {
		t.Fatalf("the work is not pending: %+v", st)
	}

	// Listed: followed, with the credentials.
	cfg.OverlordURLs = standby.URL + "," + localhost(leader)
	logs.Reset()
	s = newSyncer(cfg, slog.New(slog.NewTextHandler(logs, nil)), &bytes.Buffer{})
	s.druid.overlord, s.probed = standby.URL, true
	if err := s.once(e.ctx); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	if !strings.Contains(logs.String(), "following the Overlord leader") {
		t.Fatalf("no redirect followed:\n%s", logs)
	}
	e.matches(t, h.Table(), p, "after following the leader")

	// Go's own client, for contrast: the redirected request has no
	// credentials, and the leader refuses it.
	req, _ := http.NewRequest(http.MethodGet, standby.URL+"/druid/indexer/v1/task/query-0001/status", nil)
	req.SetBasicAuth(druidUser, druidPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Go's client after the redirect: %d, want 401", resp.StatusCode)
	}
	if !errors.Is(s.druid.checkRedirect(req, []*http.Request{req}), nil) {
		t.Fatal("a redirect to a configured host refused")
	}
}
