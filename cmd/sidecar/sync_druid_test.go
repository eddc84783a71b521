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

	"github.com/druidiceberg/sidecar/druid"
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
// sync after each step: after every sync the datasource holds the table's
// live rows (Broker SQL) and nothing is pending, days that lost their last
// row included; the new schema's sync submits ALL; the compaction's sync
// submits nothing; the Druid tasks of the datasource in flight never
// exceed --max-tasks; and a sync killed once Druid took a statement, started
// again after Druid finished that task, submits nothing over its intervals
// and leaves the datasource right. Seeds are 7000, 7001, …: a failing
// history reruns with -real-sync-histories.
func TestRealDruidSync(t *testing.T) {
	d := realSyncDruid(t)
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
				if step == killAt {
					// Even seeds sync again once Druid finished the killed
					// task, odd ones at once, while it runs.
					e.killedSync(t, p, why, opts.Seed%2 == 0)
				} else if subs := e.sync(t, p, why); step == schemaAt && !slices.Equal(subs, []string{"ALL"}) {
					t.Fatalf("%s: the sync of a new schema submitted %q, want ALL", why, subs)
				}
				e.pendingCleared(t, p, why)
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

// TestRealDruidSyncEmptiedDay: days that lose their last row, on the real
// Druid: one deleted copy-on-write (no file left: /changes says the day
// has nothing to read) and one deleted merge-on-read (a file whose rows
// are all deleted: the statement reads no row). Druid before 29 fails a
// REPLACE that writes no row (InsertCannotBeEmpty) and keeps the day's
// segments; sync drops them through the Coordinator instead. After each
// sync the datasource holds the table's rows and nothing is pending.
func TestRealDruidSyncEmptiedDay(t *testing.T) {
	d := realSyncDruid(t)
	e := newRealSyncEnv(t, d)
	h := threeDayTable(t, e.ctx, e.cat, "emptied")
	p := syncPair{Table: "sync.emptied", DataSource: fmt.Sprintf("sync_emptied_%d", time.Now().Unix()), TimeColumn: "ts",
		Granularity: "DAY", Mode: "rows", Context: map[string]any{"maxNumTasks": 2}}
	e.sync(t, p, "initial load")
	e.holds(t, h, p, "initial load")
	for _, step := range []struct {
		what, mode string
		ids        []int64
	}{
		{"the second day's rows deleted copy-on-write", table.WriteModeCopyOnWrite, []int64{3, 4}},
		{"the first day's rows deleted merge-on-read", table.WriteModeMergeOnRead, []int64{1, 2}},
	} {
		if err := h.Delete(e.ctx, step.mode, step.ids...); err != nil {
			t.Fatal(err)
		}
		err, log, _ := e.start(t, e.ctx, p)()
		if err != nil {
			t.Fatalf("%s: sync: %v\n%s", step.what, err, log.String())
		}
		dropped := strings.Contains(log.String(), "segments marked unused")
		if d.major < 29 && !dropped {
			t.Fatalf("%s: Druid %s, and sync marked no segment unused\n%s", step.what, d.version, log.String())
		}
		e.pendingCleared(t, p, step.what)
		e.holds(t, h, p, step.what)
		t.Logf("%s: Druid %s; sync submitted %q, segments marked unused: %v", step.what, d.version, log.submitted(t), dropped)
	}
}

// realSyncDruid is the real Druid of DRUID_BROKER and DRUID_OVERLORD, with
// its version; it skips t when Druid has no SQL-based ingestion.
func realSyncDruid(t *testing.T) *syncDruid {
	t.Helper()
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
	return d
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
		syncLoopConfig:      syncLoopConfig{StateFile: filepath.Join(dir, "state.json"), Once: true, Interval: time.Minute},
		sidecarClientConfig: sidecarClientConfig{SidecarURL: sidecar.URL},
		druidConfig: druidConfig{BrokerURL: d.broker, OverlordURLs: d.overlord, PollInterval: 500 * time.Millisecond,
			TaskTimeout: 5 * time.Minute, MaxTasks: 2},
		HTTPTimeout: time.Minute, logConfig: logConfig{LogFormat: "text"},
	}}
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

// taskState is the state the sync found a task of the last sync in, from
// its "task of the last sync" log line.
func (l *syncLog) taskState(t *testing.T, id string) string {
	t.Helper()
	for line := range strings.Lines(l.String()) {
		var rec struct {
			Msg    string `json:"msg"`
			TaskID string `json:"task_id"`
			State  string `json:"state"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("sync log line %q: %v", line, err)
		}
		if rec.Msg == "task of the last sync" && rec.TaskID == id {
			return rec.State
		}
	}
	return "(not asked)"
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

// killedSync runs a sync of p and kills it (cancels its context, as a
// signal does) from its submission hook, once Druid took a statement;
// waits until Druid finished that task when finished says so; then syncs
// again. The state file names the killed statement's task for each of its
// intervals, and the second sync submits no statement over them (it waits
// for the task when it still runs): the Overlord's task list (the
// controller tasks of the datasource, each with its statement) says what
// was submitted.
func (e *realSyncEnv) killedSync(t *testing.T, p syncPair, why string, finished bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var killedID string
	cfg := e.cfg
	cfg.Pairs = []syncPair{p}
	log := &syncLog{}
	s := newSyncer(cfg, slog.New(slog.NewJSONHandler(log, nil)), io.Discard)
	s.submitted = func(id string) {
		if killedID == "" {
			killedID = id
			cancel()
		}
	}
	if err := s.once(ctx); !errors.Is(err, context.Canceled) || killedID == "" {
		t.Fatalf("%s: the sync to kill ended with %v, task %q\n%s", why, err, killedID, log.String())
	}
	st, err := readState(e.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	cp := st.DataSources[p.DataSource]
	var killedIvs []string
	for iv, ids := range cp.Tasks {
		if slices.Contains(ids, killedID) {
			killedIvs = append(killedIvs, iv)
		}
	}
	if len(killedIvs) == 0 || !slices.ContainsFunc(killedIvs, func(iv string) bool { return slices.Contains(cp.Pending, iv) }) {
		t.Fatalf("%s: the killed sync's state file names task %s for none of its pending intervals: %v %v", why, killedID, cp.Pending, cp.Tasks)
	}
	if finished {
		// The killed task runs on in Druid, to its end.
		if state := e.druid.waitTask(t, killedID); state != "SUCCESS" {
			t.Fatalf("%s: the killed sync's task %s ended %s", why, killedID, state)
		}
	}
	before := e.druid.controllerTasks(t, p.DataSource)
	err, log, most := e.start(t, e.ctx, p)()
	if err != nil || most > e.cfg.MaxTasks {
		t.Fatalf("%s: the sync after a killed one: %v, %d Druid tasks in flight at most\n%s", why, err, most, log.String())
	}
	again := log.submitted(t)
	for id, query := range e.druid.controllerTasks(t, p.DataSource) {
		if _, old := before[id]; old {
			continue
		}
		for _, ov := range overwritesOf(t, query) {
			for _, iv := range killedIvs {
				if ov == iv || ov == "ALL" || iv == "ALL" || overlaps(t, ov, iv) {
					t.Errorf("%s: the sync after a killed one submitted task %s over %s, in %s, which the killed sync's task %s finished",
						why, id, ov, iv, killedID)
				}
			}
		}
	}
	if state := e.druid.waitTask(t, killedID); state != "SUCCESS" {
		t.Fatalf("%s: the killed sync's task %s ended %s", why, killedID, state)
	}
	t.Logf("%s: killed after task %s (intervals %v, pending %v); the next sync, started once Druid finished it (%v), "+
		"found it %s and submitted %q", why, killedID, killedIvs, cp.Pending, finished, log.taskState(t, killedID), again)
}

// overwritesOf are the OVERWRITE intervals of a statement as START/END, or
// ALL.
func overwritesOf(t *testing.T, query string) []string {
	t.Helper()
	ivs := overwrites(t, query)
	if ivs == nil {
		return []string{"ALL"}
	}
	var out []string
	for _, iv := range ivs {
		out = append(out, iv[0].Format(time.RFC3339)+"/"+iv[1].Format(time.RFC3339))
	}
	return out
}

// overlaps says whether two START/END intervals share an instant.
func overlaps(t *testing.T, a, b string) bool {
	t.Helper()
	parse := func(iv string) (time.Time, time.Time) {
		s, e, err := druid.ParseInterval(iv)
		if err != nil {
			t.Fatalf("interval %s: %v", iv, err)
		}
		return s, e
	}
	as, ae := parse(a)
	bs, be := parse(b)
	return as.Before(be) && bs.Before(ae)
}

// pendingCleared fails t when a sync that succeeded left work pending.
func (e *realSyncEnv) pendingCleared(t *testing.T, p syncPair, why string) {
	t.Helper()
	st, err := readState(e.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if cp := st.DataSources[p.DataSource]; cp == nil || len(cp.Pending) != 0 || len(cp.Tasks) != 0 {
		t.Fatalf("%s: a successful sync left %+v", why, cp)
	}
}

// holds waits, up to 2 minutes, until Druid's SQL answers the table's
// live rows (the history's record) for the datasource, and fails t with
// the difference otherwise. Rows without a time are not ingested.
func (e *realSyncEnv) holds(t *testing.T, h *tablegen.History, p syncPair, why string) {
	t.Helper()
	want := e.want(t, h)
	start := time.Now()
	testenv.Poll(t, 2*time.Minute, func() error {
		got, last := e.druid.rows(t, p.DataSource)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: Druid holds\n  %s\nthe table has\n  %s\n%s", why, strings.Join(got, "\n  "), strings.Join(want, "\n  "), last)
		}
		return nil
	})
	t.Logf("%s: Druid holds the table's %d rows (after %s)", why, len(want), time.Since(start).Round(time.Millisecond))
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

// waitTask waits, up to 5 minutes, until the Overlord says task id ended,
// and answers how.
func (d *syncDruid) waitTask(t *testing.T, id string) string {
	t.Helper()
	var ended string
	testenv.Poll(t, 5*time.Minute, func() error {
		code, body := d.get(t, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status")
		var ans struct {
			Status struct {
				StatusCode string `json:"statusCode"`
			} `json:"status"`
		}
		if err := json.Unmarshal(body, &ans); code != http.StatusOK || err != nil || ans.Status.StatusCode == "RUNNING" {
			return fmt.Errorf("task %s has not ended: %d %s", id, code, body)
		}
		ended = ans.Status.StatusCode
		return nil
	})
	return ended
}

// controllerTasks are the MSQ controller tasks of datasource ds the
// Overlord knows (GET /druid/indexer/v1/tasks, any state), each with its
// statement (GET /druid/indexer/v1/task/{id}: the payload's sqlQuery).
func (d *syncDruid) controllerTasks(t *testing.T, ds string) map[string]string {
	t.Helper()
	code, body := d.get(t, d.overlord+"/druid/indexer/v1/tasks?"+url.Values{"datasource": {ds}}.Encode())
	var list []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil {
		t.Fatalf("tasks of %s: %d %s", ds, code, body)
	}
	out := map[string]string{}
	for _, task := range list {
		if task.Type != "query_controller" {
			continue
		}
		code, body := d.get(t, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(task.ID))
		var ans struct {
			Payload struct {
				SQLQuery string `json:"sqlQuery"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(body, &ans); code != http.StatusOK || err != nil || ans.Payload.SQLQuery == "" {
			t.Fatalf("task %s: %d %s", task.ID, code, body)
		}
		out[task.ID] = ans.Payload.SQLQuery
	}
	return out
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
