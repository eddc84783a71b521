//go:build druid

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// realSyncHistories is how many random histories TestRealDruidSync runs;
// each takes a minute or two on a real Druid.
var realSyncHistories = flag.Int("real-sync-histories", 2, "random Iceberg histories TestRealDruidSync runs against the real Druid")

// TestRealDruidSync: `sidecar sync` against a real Druid with SQL-based
// ingestion (tools/druid/druid.sh start with DRUID_VERSION=27.0.0; the
// DRUID_BROKER and DRUID_OVERLORD it prints). A random table history of
// tablegen (appends, merge-on-read and copy-on-write deletes, equality
// deletes, updates, day overwrites), a column added, a compaction, and a
// sync after each step: after every sync the datasource holds the table's live
// rows (Broker SQL); the new schema's sync submits ALL; the compaction's
// sync submits nothing; the Druid
// tasks of the datasource in flight never exceed --max-tasks; and a sync
// killed after it submitted, started again, re-ingests only what the
// state file left pending and leaves the datasource right. Seeds are
// 7000, 7001, …: a failing history reruns with -real-sync-histories.
func TestRealDruidSync(t *testing.T) {
	broker, overlord := os.Getenv("DRUID_BROKER"), os.Getenv("DRUID_OVERLORD")
	if broker == "" || overlord == "" {
		testenv.Missing(t, `no Druid: run "set -a; eval \"$(DRUID_VERSION=27.0.0 tools/druid/druid.sh start)\"; set +a" for DRUID_BROKER and DRUID_OVERLORD`)
	}
	d := &syncDruid{broker: broker, overlord: overlord, client: &http.Client{Timeout: time.Minute}}
	code, body := d.get(t, overlord+"/status")
	var status struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &status); code != http.StatusOK || err != nil {
		t.Fatalf("GET %s/status: %d %s", overlord, code, body)
	}
	d.version = status.Version
	major, _, _ := strings.Cut(status.Version, ".")
	d.major, _ = strconv.Atoi(major)
	if code, _ := d.get(t, broker+"/druid/v2/sql/task/enabled"); code != http.StatusOK {
		t.Skipf("this Druid has no SQL-based ingestion (GET /druid/v2/sql/task/enabled: %d): sync needs it", code)
	}
	kinds := []struct {
		time   tablegen.TimeKind
		layout tablegen.Layout
		mode   string
	}{
		{tablegen.TimeTimestamp, tablegen.LayoutDay, "rows"},
		{tablegen.TimeLongMillis, tablegen.LayoutCategory, "rows"},
		{tablegen.TimeTimestampTz, tablegen.LayoutUnpartitioned, "rows"},
		{tablegen.TimeDate, tablegen.LayoutDay, "rows"},
	}
	run := time.Now().Unix()
	for i := range *realSyncHistories {
		k := kinds[i%len(kinds)]
		opts := tablegen.HistoryOptions{Seed: 7000 + uint64(i), Time: k.time, Layout: k.layout}
		t.Run(fmt.Sprintf("%d_%s_%s_%s", opts.Seed, k.time, k.layout, k.mode), func(t *testing.T) {
			e := newRealSyncEnv(t, d)
			h, err := tablegen.NewHistory(e.ctx, e.cat, table.Identifier{"random", "t"}, opts)
			if err != nil {
				t.Fatal(err)
			}
			p := syncPair{Table: "random.t", DataSource: fmt.Sprintf("sync_%d_%d", opts.Seed, run), TimeColumn: "ts",
				Granularity: "DAY", Mode: k.mode, Context: map[string]any{"maxNumTasks": 2}}
			const steps, schemaAt, killAt, compactAt = 5, 1, 2, 3
			var log []string
			for step := range steps {
				if step == schemaAt {
					// A schema change: the next snapshot is of the new
					// schema, which /changes answers with ALL.
					if err := h.AddColumn(e.ctx, "note"); err != nil {
						t.Fatal(err)
					}
					log = append(log, "add column note")
				}
				what, err := h.Step(e.ctx)
				if err != nil {
					t.Fatal(err)
				}
				log = append(log, what)
				why := fmt.Sprintf("step %d after %v", step, log)
				if day, ok := e.emptiedDay(t, h, p); ok {
					// Druid before 29 fails a REPLACE that reads nothing
					// (InsertCannotBeEmpty, whatever failOnEmptyInsert
					// says; docs/druid.md#druid-versions): a statement of
					// that day alone cannot be applied, and stays pending
					// for ever. One merged with a day that has rows can.
					err, log, _ := e.start(t, e.ctx, p)()
					switch {
					case err != nil && strings.Contains(err.Error(), "InsertCannotBeEmpty"):
						t.Logf("%s: %s lost its last row, and Druid %s fails the REPLACE that empties it (InsertCannotBeEmpty; "+
							"Druid 29 deletes it): sync cannot apply this change, the history ends here", why, day, e.druid.version)
						return
					case err != nil:
						t.Fatalf("%s: sync: %v\n%s", why, err, log.String())
					}
				} else if step == killAt {
					e.killedSync(t, p, why)
				} else if subs := e.sync(t, p, why); step == schemaAt && !slices.Equal(subs, []string{"ALL"}) {
					t.Fatalf("%s: the sync of a new schema submitted %q, want ALL", why, subs)
				}
				e.holds(t, h, p, why)
				if step == compactAt {
					if err := h.Compact(e.ctx); err != nil {
						t.Fatal(err)
					}
					if subs := e.sync(t, p, why+" and a compaction"); len(subs) != 0 {
						t.Fatalf("the sync of a compaction submitted %v", subs)
					}
					e.holds(t, h, p, why+" and a compaction")
				}
			}
		})
	}
}

// realSyncEnv is a local warehouse served by a sidecar router on
// 127.0.0.1 (no auth: Druid's http input source reads it as generated),
// the real Druid, and a state file.
type realSyncEnv struct {
	ctx   context.Context
	cat   *hadoop.Catalog
	druid *syncDruid
	cfg   syncConfig
}

func newRealSyncEnv(t *testing.T, d *syncDruid) *realSyncEnv {
	t.Helper()
	dir, cat, sidecar := startSyncSidecar(t, handlers.Config{})
	return &realSyncEnv{ctx: context.Background(), cat: cat, druid: d, cfg: syncConfig{
		SidecarURL: sidecar.URL, BrokerURL: d.broker, OverlordURLs: d.overlord, StateFile: filepath.Join(dir, "state.json"),
		Once: true, Interval: time.Minute, PollInterval: 500 * time.Millisecond, TaskTimeout: 5 * time.Minute, MaxTasks: 2,
		HTTPTimeout: time.Minute, LogFormat: "text",
	}}
}

// emptiedDay is a day that Druid holds rows of and the history has no
// live row in, on a Druid before 29.
func (e *realSyncEnv) emptiedDay(t *testing.T, h *tablegen.History, p syncPair) (string, bool) {
	t.Helper()
	if e.druid.major >= 29 {
		return "", false
	}
	live := map[int64]bool{}
	for _, r := range e.want(t, h) {
		var ms int64
		fmt.Sscan(r, &ms)
		live[dayOf(ms)] = true
	}
	held, _ := e.druid.rows(t, p.DataSource)
	for _, r := range held {
		var ms int64
		fmt.Sscan(r, &ms)
		if !live[dayOf(ms)] {
			return time.UnixMilli(ms).UTC().Format(time.DateOnly), true
		}
	}
	return "", false
}

func dayOf(ms int64) int64 {
	const day = 86_400_000
	if ms < 0 {
		return (ms - day + 1) / day
	}
	return ms / day
}

// syncLog is the JSON log of one sync.
type syncLog struct{ bytes.Buffer }

// submitted are the intervals of each statement the sync submitted, from
// its "task submitted" log lines.
func (l *syncLog) submitted(t *testing.T) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(l.String()) {
		var rec struct {
			Msg       string `json:"msg"`
			Intervals string `json:"intervals"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("sync log line %q: %v", line, err)
		}
		if rec.Msg == "task submitted" {
			out = append(out, rec.Intervals)
		}
	}
	return out
}

// start runs one sync of p in the background, with a watcher that counts
// the datasource's Druid tasks in flight; wait ends both and answers the
// sync's error, its log, and the most tasks seen at once.
func (e *realSyncEnv) start(t *testing.T, ctx context.Context, p syncPair) (wait func() (error, *syncLog, int)) {
	t.Helper()
	cfg := e.cfg
	cfg.Pairs = []syncPair{p}
	log := &syncLog{}
	s := newSyncer(cfg, slog.New(slog.NewJSONHandler(log, nil)), io.Discard)
	done := make(chan error, 1)
	go func() { done <- s.once(ctx) }()
	stop := make(chan struct{})
	most := make(chan int, 1)
	go func() {
		m := 0
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := e.druid.active(p.DataSource); err == nil {
				m = max(m, n)
			}
			select {
			case <-stop:
				most <- m
				return
			case <-tick.C:
			}
		}
	}()
	return func() (error, *syncLog, int) {
		err := <-done
		close(stop)
		return err, log, <-most
	}
}

// sync runs one sync of p to its end and answers the intervals of the
// statements it submitted; it fails t when the sync fails or had more
// Druid tasks in flight than --max-tasks.
func (e *realSyncEnv) sync(t *testing.T, p syncPair, why string) []string {
	t.Helper()
	err, log, most := e.start(t, e.ctx, p)()
	if err != nil {
		t.Fatalf("%s: sync: %v\n%s", why, err, log.String())
	}
	if most > e.cfg.MaxTasks {
		t.Fatalf("%s: %d Druid tasks of %s in flight at once, more than --max-tasks %d", why, most, p.DataSource, e.cfg.MaxTasks)
	}
	subs := log.submitted(t)
	t.Logf("%s: sync submitted %d statements %q, at most %d Druid tasks in flight", why, len(subs), subs, most)
	return subs
}

// killedSync runs a sync of p and cancels it once a statement was
// submitted (the state file names pending work and Druid runs a task of
// the datasource), lets Druid finish what it runs, then syncs again: the
// second sync re-ingests only intervals the state file left pending.
func (e *realSyncEnv) killedSync(t *testing.T, p syncPair, why string) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	wait := e.start(t, ctx, p)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := readState(e.cfg.StateFile)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := e.druid.active(p.DataSource)
		if cp := st.DataSources[p.DataSource]; cp != nil && len(cp.Pending) > 0 && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			err, log, _ := wait()
			t.Fatalf("%s: the sync to kill submitted nothing within 2 minutes (%v)\n%s", why, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	err, log, _ := wait()
	if !errors.Is(err, context.Canceled) {
		t.Logf("%s: the killed sync ended with %v", why, err)
	}
	st, err := readState(e.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	cp := st.DataSources[p.DataSource]
	if cp == nil || len(cp.Pending) == 0 {
		t.Fatalf("%s: a sync killed after it submitted left nothing pending", why)
	}
	killed := log.submitted(t)
	// What the killed sync submitted runs on in Druid, to its end.
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		n, err := e.druid.active(p.DataSource)
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Druid still runs %d tasks of %s 5 minutes after the sync was killed (%v)", why, n, p.DataSource, err)
		}
	}
	again := e.sync(t, p, why+", after a killed sync")
	for _, ivs := range again {
		for iv := range strings.FieldsSeq(ivs) {
			if !slices.Contains(cp.Pending, iv) {
				t.Errorf("%s: the sync after a killed one submitted %s, which was not pending %v", why, iv, cp.Pending)
			}
		}
	}
	// docs/druid.md ("sync"): the state file keeps no task ids, so the
	// intervals of statements Druid finished after the kill are pending
	// still and ingested again; REPLACE makes that safe, not free.
	t.Logf("%s: killed after submitting %q (pending %v); Druid finished them; the next sync submitted %q again",
		why, killed, cp.Pending, again)
}

// holds waits, up to 2 minutes, until Druid's SQL answers the table's
// live rows (the history's record) for the datasource, and fails t with
// the difference otherwise. Rows without a time are not ingested.
func (e *realSyncEnv) holds(t *testing.T, h *tablegen.History, p syncPair, why string) {
	t.Helper()
	want := e.want(t, h)
	start := time.Now()
	var got []string
	var last string
	for time.Since(start) < 2*time.Minute {
		got, last = e.druid.rows(t, p.DataSource)
		if slices.Equal(got, want) {
			t.Logf("%s: Druid holds the table's %d rows (after %s)", why, len(want), time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: Druid holds\n  %s\nthe table has\n  %s\n%s", why, strings.Join(got, "\n  "), strings.Join(want, "\n  "), last)
}

// want are the history's live rows as holds spells them, sorted.
func (e *realSyncEnv) want(t *testing.T, h *tablegen.History) []string {
	t.Helper()
	var want []string
	for _, line := range h.Rows() {
		var r struct {
			ID  int64  `json:"id"`
			TS  *int64 `json:"ts"`
			Cat string `json:"cat"`
			V   int64  `json:"v"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.TS != nil {
			want = append(want, fmt.Sprintf("%d id=%d cat=%s v=%d", *r.TS, r.ID, r.Cat, r.V))
		}
	}
	slices.Sort(want)
	return want
}

// syncDruid is the real Druid as sync's test reads it.
type syncDruid struct {
	broker, overlord string
	client           *http.Client
	// version is the Druid release, major its first number.
	version string
	major   int
}

func (d *syncDruid) get(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := d.client.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp.StatusCode, b
}

// active is how many tasks of the datasource ds the Overlord has running,
// pending or waiting.
func (d *syncDruid) active(ds string) (int, error) {
	n := 0
	for _, state := range []string{"running", "pending", "waiting"} {
		resp, err := d.client.Get(d.overlord + "/druid/indexer/v1/tasks?" + url.Values{"state": {state}, "datasource": {ds}}.Encode())
		if err != nil {
			return 0, err
		}
		var tasks []json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&tasks)
		resp.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("tasks %s: %w", state, err)
		}
		n += len(tasks)
	}
	return n, nil
}

// rows are the datasource's rows as holds spells them, sorted; a
// datasource Druid does not know holds none. last is the Broker's answer.
func (d *syncDruid) rows(t *testing.T, ds string) (rows []string, last string) {
	t.Helper()
	q, err := json.Marshal(map[string]any{"query": `SELECT "__time", "id", "cat", "v" FROM "` + ds + `"`,
		"context": map[string]any{"sqlTimeZone": "UTC"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := d.client.Post(d.broker+"/druid/v2/sql", "application/json", bytes.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		if bytes.Contains(b, []byte("not found")) {
			return nil, string(b)
		}
		return []string{"(" + string(b) + ")"}, string(b)
	}
	var out []struct {
		Time string `json:"__time"`
		ID   int64  `json:"id"`
		Cat  string `json:"cat"`
		V    int64  `json:"v"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for _, r := range out {
		tm, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("%d id=%d cat=%s v=%d", tm.UnixMilli(), r.ID, r.Cat, r.V))
	}
	slices.Sort(rows)
	return rows, string(b)
}
