package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// syncEnv is a local warehouse served by a real sidecar router (with Basic
// auth, so Druid's http input source must send the credentials the
// generated specs name), a Druid stand-in (with Basic auth of its own), and
// a state file.
type syncEnv struct {
	ctx   context.Context
	cat   *hadoop.Catalog
	druid *druidsim.Server
	cfg   syncConfig
	logs  *bytes.Buffer
	// refusable, when set, says which refusals of Druid's a test expects
	// (matches fails on any other).
	refusable func(error) bool
}

const (
	sidecarUser, sidecarPassword = "sync", "sidecar-pw"
	druidUser, druidPassword     = "admin", "druid-pw"
)

// startSyncSidecar starts a sidecar, configured as cfg and as main wires
// it (delete files decoded once for all splits), on a local warehouse in
// a new folder dir, and returns the folder, the warehouse's catalog for
// writing tables, and the server.
func startSyncSidecar(t *testing.T, cfg handlers.Config) (string, *hadoop.Catalog, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	cat := catalogtest.Local(t, wh)
	signer, err := token.NewSigner(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sc := catalogtest.Open(t, sidecatalog.Config{Type: "local", Warehouse: wh})
	planner, err := splits.NewPlanner(sc, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	sidecar := httptest.NewUnstartedServer(nil)
	cfg.Catalogs = []handlers.Catalog{catalogRoutes(sc, planner,
		reader.New(nil, reader.WithDeleteCache(deletes.NewCache(64<<20, nil))))}
	cfg.Signer = signer
	cfg.PublicURL = "http://" + sidecar.Listener.Addr().String()
	sidecar.Config.Handler = handlers.New(cfg)
	sidecar.Start()
	t.Cleanup(sidecar.Close)
	return dir, cat, sidecar
}

func newSyncEnv(t *testing.T) *syncEnv {
	t.Helper()
	dir, cat, sidecar := startSyncSidecar(t, handlers.Config{
		BasicAuth:        []handlers.Credential{{Username: sidecarUser, Password: sidecarPassword}},
		DruidPasswordEnv: "SIDECAR_HTTP_PASSWORD",
	})
	druid := druidsim.NewServer()
	druid.Username, druid.Password = druidUser, druidPassword
	druid.Client = sidecar.Client()
	druid.Getenv = func(k string) string {
		if k == "SIDECAR_HTTP_PASSWORD" {
			return sidecarPassword
		}
		return ""
	}
	druid.Polls = 1
	druidSrv := httptest.NewServer(druid)
	t.Cleanup(druidSrv.Close)
	return &syncEnv{
		ctx: context.Background(), cat: cat, druid: druid, logs: &bytes.Buffer{},
		cfg: syncConfig{
			syncLoopConfig:      syncLoopConfig{StateFile: filepath.Join(dir, "state.json"), Once: true, Interval: time.Minute},
			sidecarClientConfig: sidecarClientConfig{SidecarURL: sidecar.URL, SidecarAuth: &credential{sidecarUser, sidecarPassword}},
			druidConfig: druidConfig{DruidURL: druidSrv.URL, PollInterval: time.Millisecond, TaskTimeout: time.Minute, MaxTasks: 4,
				DruidAuth: &credential{druidUser, druidPassword}},
			HTTPTimeout: time.Minute, logConfig: logConfig{LogFormat: "text"},
		},
	}
}

// sync runs one sync of the pairs.
func (e *syncEnv) sync(pairs ...syncPair) error {
	cfg := e.cfg
	cfg.Pairs = pairs
	s := newSyncer(cfg, slog.New(slog.NewTextHandler(e.logs, nil)), &bytes.Buffer{})
	return s.once(e.ctx)
}

func (e *syncEnv) state(t *testing.T, ds string) *checkpoint {
	t.Helper()
	st, err := readState(e.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	return st.DataSources[ds]
}

// overwrites are the intervals a statement's OVERWRITE names, as [start,
// end) pairs; nil for OVERWRITE ALL.
func overwrites(t *testing.T, q string) [][2]time.Time {
	t.Helper()
	if strings.Contains(q, "OVERWRITE ALL") {
		return nil
	}
	clause, _, ok := strings.Cut(q, "\nSELECT")
	if !ok || !strings.Contains(clause, "OVERWRITE WHERE") {
		t.Fatalf("not a REPLACE: %s", q)
	}
	var out [][2]time.Time
	parts := strings.Split(clause, "TIMESTAMP '")[1:]
	for i := 0; i+1 < len(parts); i += 2 {
		a, err1 := time.Parse("2006-01-02 15:04:05.000", parts[i][:23])
		b, err2 := time.Parse("2006-01-02 15:04:05.000", parts[i+1][:23])
		if err1 != nil || err2 != nil {
			t.Fatalf("OVERWRITE of %s: %v %v", q, err1, err2)
		}
		out = append(out, [2]time.Time{a, b})
	}
	return out
}

// intervals are the starts of the OVERWRITE intervals of the statements
// submitted after the first n, as /changes writes them, or ALL.
func (e *syncEnv) intervals(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for _, s := range e.druid.Submitted()[n:] {
		ivs := overwrites(t, s.Query)
		if ivs == nil {
			out = append(out, "ALL")
		}
		for _, iv := range ivs {
			out = append(out, iv[0].Format("2006-01-02 15:04:05.000"))
		}
	}
	slices.Sort(out)
	return out
}

// covered says whether a statement submitted after the first n replaces
// the interval iv (START/END or ALL) whole.
func (e *syncEnv) covered(t *testing.T, n int, iv string) bool {
	t.Helper()
	var start, end time.Time
	if iv != "ALL" {
		var err error
		if start, end, err = druid.ParseInterval(iv); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range e.druid.Submitted()[n:] {
		ivs := overwrites(t, s.Query)
		if ivs == nil {
			return true
		}
		if iv == "ALL" {
			continue
		}
		for _, o := range ivs {
			if !o[0].After(start) && !o[1].Before(end) {
				return true
			}
		}
	}
	return false
}

// matches holds the model datasource against the table's live rows at the
// snapshot the checkpoint names, as iceberg-go's oracle reads them.
func (e *syncEnv) matches(t *testing.T, tbl *table.Table, p syncPair, why string) {
	t.Helper()
	e.matchesRows(t, p, why, func(snapshot int64) []string {
		rows, err := tablegen.OracleRows(e.ctx, tbl, snapshot)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	})
}

// matchesHistory is matches for a history's table: at its current snapshot
// the live rows are the history's own record, which tablegen's
// TestHistoryTracksItsRows holds equal to the oracle after every step.
func (e *syncEnv) matchesHistory(t *testing.T, h *tablegen.History, p syncPair, why string) {
	t.Helper()
	e.matchesRows(t, p, why, func(snapshot int64) []string {
		if cur := h.Table().CurrentSnapshot(); cur != nil && cur.SnapshotID == snapshot {
			return h.Rows()
		}
		rows, err := tablegen.OracleRows(e.ctx, h.Table(), snapshot)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	})
}

// matchesRows holds the model datasource against live, the table's rows at
// the snapshot the checkpoint names as NDJSON lines.
func (e *syncEnv) matchesRows(t *testing.T, p syncPair, why string, live func(snapshot int64) []string) {
	t.Helper()
	cp := e.state(t, p.DataSource)
	if cp == nil || !cp.Loaded {
		t.Fatalf("%s: no checkpoint", why)
	}
	var want []string
	if cp.SnapshotID != nil {
		for _, line := range live(*cp.SnapshotID) {
			dec := json.NewDecoder(strings.NewReader(line))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatal(err)
			}
			if v, ok := obj[p.TimeColumn].(json.Number); ok {
				ms, _ := v.Int64()
				want = append(want, druidsim.Row{Time: ms, Columns: obj}.String())
			}
		}
	}
	var got []string
	for _, r := range e.druid.Rows(p.DataSource) {
		got = append(got, r.String())
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: Druid holds\n  %s\nthe table has at snapshot %v\n  %s", why, strings.Join(got, "\n  "),
			ptrValue(cp.SnapshotID), strings.Join(want, "\n  "))
	}
	errs := e.druid.Errors()
	if e.refusable != nil {
		errs = slices.DeleteFunc(errs, e.refusable)
	}
	if len(errs) > 0 {
		t.Fatalf("%s: Druid refused work: %v", why, errs)
	}
}

func micros(day, hour int) *int64 {
	v := (int64(19_783+day)*24 + int64(hour)) * 3_600_000_000
	return &v
}

// threeDayTable is a day-partitioned table with rows 1-6, two on each of
// 2024-03-01, -02 and -03.
func threeDayTable(t *testing.T, ctx context.Context, cat *hadoop.Catalog, name string) *tablegen.History {
	t.Helper()
	h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"sync", name},
		tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay, Properties: snappy})
	if err != nil {
		t.Fatal(err)
	}
	var rows []tablegen.HistoryRow
	for i := range 6 {
		rows = append(rows, tablegen.HistoryRow{ID: int64(i + 1), TS: micros(i/2, 1+i%2), Cat: "a", V: int64(i)})
	}
	if err := h.Append(ctx, rows...); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSyncRedoesFailedWork: a sync whose task does not succeed (it fails,
// or Druid loses it) keeps the checkpoint where it was and leaves the
// intervals pending; the next sync submits the same intervals again, and
// only then moves the checkpoint. The two changed days are one statement.
// (A sync stopped while its task runs: TestSyncResumesKilledSync.)
func TestSyncRedoesFailedWork(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"failed", "lost"} {
		t.Run(how, func(t *testing.T) {
			e := newSyncEnv(t)
			h := threeDayTable(t, e.ctx, e.cat, "t")
			p := syncPair{Table: "sync.t", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
			if err := e.sync(p); err != nil {
				t.Fatal(err)
			}
			e.matches(t, h.Table(), p, "initial load")
			loaded := *e.state(t, "events").SnapshotID
			if got := e.intervals(t, 0); !slices.Equal(got, []string{"ALL"}) {
				t.Fatalf("initial load submitted %v", got)
			}

			// Rows deleted on the first and the last day: two intervals.
			if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 1, 6); err != nil {
				t.Fatal(err)
			}
			want := []string{"2024-03-01 00:00:00.000", "2024-03-03 00:00:00.000"}
			n := len(e.druid.Submitted())
			e.druid.Decide = func(string, druidsim.Submission) druidsim.Outcome {
				if how == "failed" {
					return druidsim.Fail
				}
				return druidsim.Lose
			}
			if err := e.sync(p); err == nil {
				t.Fatal("a sync with a task that did not succeed succeeded")
			}
			cp := e.state(t, "events")
			if *cp.SnapshotID != loaded || len(cp.Pending) != 2 {
				t.Fatalf("after a %s task: checkpoint %d pending %v, want %d and both intervals", how, *cp.SnapshotID, cp.Pending, loaded)
			}
			if got := e.intervals(t, n); !slices.Equal(got, want) || len(e.druid.Submitted()) != n+1 {
				t.Fatalf("submitted %v in %d statements, want %v in one", got, len(e.druid.Submitted())-n, want)
			}

			e.druid.Decide = nil
			n = len(e.druid.Submitted())
			if err := e.sync(p); err != nil {
				t.Fatal(err)
			}
			if got := e.intervals(t, n); !slices.Equal(got, want) {
				t.Fatalf("the next sync submitted %v, want the same %v", got, want)
			}
			cp = e.state(t, "events")
			if *cp.SnapshotID != h.Table().CurrentSnapshot().SnapshotID || len(cp.Pending) != 0 {
				t.Fatalf("after success: checkpoint %d pending %v", *cp.SnapshotID, cp.Pending)
			}
			e.matches(t, h.Table(), p, "after the redone sync")

			// Nothing changed since: nothing is submitted.
			n = len(e.druid.Submitted())
			if err := e.sync(p); err != nil || len(e.druid.Submitted()) != n {
				t.Fatalf("an idle sync: %v, %d submissions", err, len(e.druid.Submitted())-n)
			}
		})
	}
}

// TestSyncPendingSurvivesRollback: work of an unfinished sync may have
// reached Druid (its task did the work, and Druid then lost it). When the
// table is then rolled back to the checkpoint snapshot, the snapshots
// compare equal, yet the intervals Druid may have changed are
// re-ingested: pending work is redone, never forgotten.
func TestSyncPendingSurvivesRollback(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "t")
	p := syncPair{Table: "sync.t", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "rows"}
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	loaded := h.Table().CurrentSnapshot().SnapshotID
	if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 1, 6); err != nil {
		t.Fatal(err)
	}
	e.druid.Decide = func(string, druidsim.Submission) druidsim.Outcome {
		return druidsim.Lose // the days reach Druid, and sync cannot know
	}
	if err := e.sync(p); err == nil {
		t.Fatal("a sync of a lost task succeeded")
	}
	tx := h.Table().NewTransaction()
	if err := tx.RollbackToSnapshot(loaded); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.druid.Decide = nil
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	e.matches(t, tbl, p, "after the rollback")
}

// TestSyncKeepsDruidRight: random histories kept in step by sync alone
// while Druid fails or loses a random share of the tasks. After every
// successful sync the datasource holds exactly the table's live rows at
// the checkpoint; a failed sync never moves the checkpoint, and the next
// one submits the intervals it left pending (but those whose task Druid
// finished), all of them unless a statement fails first, when it leaves
// them pending again.
func TestSyncKeepsDruidRight(t *testing.T) {
	n := testenv.Histories(10, 5)
	kinds := []struct {
		time   tablegen.TimeKind
		layout tablegen.Layout
	}{
		{tablegen.TimeTimestamp, tablegen.LayoutDay},
		{tablegen.TimeTimestampTz, tablegen.LayoutUnpartitioned},
		{tablegen.TimeDate, tablegen.LayoutDay},
		{tablegen.TimeLongMillis, tablegen.LayoutCategory},
		{tablegen.TimeTimestamp, tablegen.LayoutCategory},
	}
	for i := range n {
		k := kinds[i%len(kinds)]
		opts := tablegen.HistoryOptions{Seed: 5000 + uint64(i), Time: k.time, Layout: k.layout, Properties: snappy}
		t.Run(fmt.Sprintf("%d_%s_%s", opts.Seed, k.time, k.layout), func(t *testing.T) {
			t.Parallel()
			e := newSyncEnv(t)
			rng := rand.New(rand.NewPCG(opts.Seed, 3))
			h, err := tablegen.NewHistory(e.ctx, e.cat, table.Identifier{"random", fmt.Sprintf("t%d", i)}, opts)
			if err != nil {
				t.Fatal(err)
			}
			p := syncPair{Table: fmt.Sprintf("random.t%d", i), DataSource: fmt.Sprintf("ds%d", i), TimeColumn: "ts",
				Granularity: []string{"DAY", "DAY", "HOUR", "MONTH"}[rng.IntN(4)], Mode: []string{"auto", "rows"}[rng.IntN(2)]}
			var log []string
			// decided is the outcome given each task: a pending interval
			// whose latest task was to succeed is done, and the next sync
			// asks Druid rather than submitting it again.
			decided := map[string]druidsim.Outcome{}
			for round := range 4 {
				for range 1 + rng.IntN(2) {
					what, err := h.Step(e.ctx)
					if err != nil {
						t.Fatal(err)
					}
					log = append(log, what)
				}
				// Some syncs fail; each is followed by another until one
				// succeeds, each submitting what was pending until a
				// statement fails.
				for attempt := 0; ; attempt++ {
					before := e.state(t, p.DataSource)
					n := len(e.druid.Submitted())
					injected := 0 // the statements made to fail or be lost
					e.druid.Decide = func(id string, _ druidsim.Submission) druidsim.Outcome {
						o := druidsim.Succeed
						if attempt < 3 {
							switch rng.IntN(6) {
							case 0:
								o = druidsim.Fail
							case 1:
								o = druidsim.Lose
							}
						}
						if o != druidsim.Succeed {
							injected++
						}
						decided[id] = o
						return o
					}
					err := e.sync(p)
					after := e.state(t, p.DataSource)
					// An attempt submits what was pending, in order, until a
					// statement fails; then it submits no more and leaves
					// everything pending (docs/druid.md, "sync").
					if before != nil && len(before.Pending) > 0 {
						for _, iv := range before.Pending {
							if e.covered(t, n, iv) {
								continue
							}
							if ids := before.Tasks[iv]; len(ids) > 0 {
								if o, ok := decided[ids[len(ids)-1]]; ok && o == druidsim.Succeed {
									continue // Druid did it: the sync asked, and did not submit it again
								}
							}
							if err == nil || injected == 0 || after == nil || !slices.Contains(after.Pending, iv) {
								t.Fatalf("round %d: pending %s was neither submitted again nor left pending by a sync that stopped at a failure (%v)", round, iv, err)
							}
						}
					}
					if err != nil {
						if before != nil && after != nil && !equalPtr(before.SnapshotID, after.SnapshotID) {
							t.Fatalf("round %d: a failed sync moved the checkpoint", round)
						}
						continue
					}
					if len(after.Pending) != 0 {
						t.Fatalf("round %d: a successful sync left %v pending", round, after.Pending)
					}
					break
				}
				e.matchesHistory(t, h, p, fmt.Sprintf("round %d after %v", round, log))
			}
		})
	}
}

// TestSyncCommand runs `sidecar sync` as main does: flags, the pairs file,
// credentials from the environment, a dry run that submits nothing and
// writes no state, then a real run.
func TestSyncCommand(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "cmd")
	dir := t.TempDir()
	pairs := filepath.Join(dir, "sync.yaml")
	if err := os.WriteFile(pairs, []byte(`pairs:
  - table: sync.cmd
    dataSource: "events \"x\""
    timeColumn: ts
    granularity: day
    context: {maxNumTasks: 3}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"SIDECAR_DRUID":               e.cfg.DruidURL,
		"SIDECAR_BASIC_AUTH_USERNAME": sidecarUser, "SIDECAR_BASIC_AUTH_PASSWORD": sidecarPassword,
		"SIDECAR_DRUID_USERNAME": druidUser, "SIDECAR_DRUID_PASSWORD": druidPassword,
		"SIDECAR_POLL_INTERVAL": "1ms",
	}
	getenv := func(k string) string { return env[k] }
	state := filepath.Join(dir, "state.json")
	args := []string{"sync", "--config", pairs, "--sidecar", e.cfg.SidecarURL, "--state-file", state, "--once"}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append(args, "--dry-run"), getenv, &stdout, &stderr); code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, stderr.String())
	}
	var printed struct {
		DataSource string         `json:"dataSource"`
		Intervals  []string       `json:"intervals"`
		Query      string         `json:"query"`
		Context    map[string]any `json:"context"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &printed); err != nil {
		t.Fatalf("dry run printed %q: %v", stdout.String(), err)
	}
	if printed.DataSource != `events "x"` || !slices.Equal(printed.Intervals, []string{"ALL"}) || !strings.Contains(printed.Query, `REPLACE INTO "events ""x""" OVERWRITE ALL`) ||
		printed.Context["maxNumTasks"] != float64(3) {
		t.Fatalf("dry run printed %s", stdout.String())
	}
	if len(e.druid.Submitted()) != 0 {
		t.Fatal("a dry run submitted work")
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote the state file: %v", err)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), args, getenv, &stdout, &stderr); code != 0 {
		t.Fatalf("sync: exit %d: %s", code, stderr.String())
	}
	if subs := e.druid.Submitted(); len(subs) != 1 || subs[0].Context["maxNumTasks"] != float64(3) || subs[0].Context["failOnEmptyInsert"] != false {
		t.Fatalf("submitted %+v", subs)
	}
	e.cfg.StateFile = state
	e.matches(t, h.Table(), syncPair{DataSource: `events "x"`, TimeColumn: "ts"}, "after sync --once")
	if strings.Contains(stderr.String(), druidPassword) || strings.Contains(stderr.String(), sidecarPassword) {
		t.Fatal("a password is in the log")
	}

	// Wrong Druid credentials: the sync fails before it submits anything,
	// and the checkpoint stays.
	if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 3); err != nil {
		t.Fatal(err)
	}
	env["SIDECAR_DRUID_PASSWORD"] = "wrong"
	stderr.Reset()
	n := len(e.druid.Submitted())
	if code := run(context.Background(), args, getenv, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "401") ||
		len(e.druid.Submitted()) != n {
		t.Fatalf("wrong Druid password: exit %d: %s", code, stderr.String())
	}
	st, err := readState(state)
	if err != nil {
		t.Fatal(err)
	}
	if cp := st.DataSources[`events "x"`]; *cp.SnapshotID == h.Table().CurrentSnapshot().SnapshotID {
		t.Fatalf("after refused credentials: %+v", cp)
	}
}

// TestSyncLoop: without --once, sync runs until its context ends.
func TestSyncLoop(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "loop")
	cfg := e.cfg
	cfg.Once = false
	cfg.Pairs = []syncPair{{Table: "sync.loop", DataSource: "loop", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}}
	ctx, cancel := context.WithCancel(context.Background())
	s := newSyncer(cfg, slog.New(slog.DiscardHandler), &bytes.Buffer{})
	rounds := 0
	s.sleep = func(ctx context.Context, d time.Duration) error {
		if d == cfg.Interval {
			rounds++
			if rounds == 1 {
				// Between two rounds the table changes.
				if err := h.Delete(ctx, table.WriteModeMergeOnRead, 2); err != nil {
					t.Error(err)
				}
			} else {
				cancel()
			}
		}
		return sleepCtx(ctx, time.Millisecond)
	}
	if err := s.run(ctx); err != nil {
		t.Fatal(err)
	}
	if rounds != 2 {
		t.Fatalf("%d rounds", rounds)
	}
	e.matches(t, h.Table(), cfg.Pairs[0], "after two rounds")
}

func TestSyncConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		f := filepath.Join(dir, fmt.Sprintf("c%d.yaml", len(body)))
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	good := write("pairs:\n  - {table: a.b, dataSource: d, timeColumn: ts}\n")
	auth := filepath.Join(dir, "druid-auth")
	if err := os.WriteFile(auth, []byte("# druid\nadmin:s3:cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noenv := func(string) string { return "" }
	cfg, err := parseSync([]string{"--config", good, "--druid", "http://router:8888", "--druid-auth-file", auth}, noenv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Pairs[0]; p.Granularity != "DAY" || p.Mode != "auto" || cfg.DruidAuth.Password != "s3:cret" || cfg.SidecarAuth != nil {
		t.Fatalf("config %+v %+v", cfg.Pairs, cfg.DruidAuth)
	}
	// The Coordinator: --druid-coordinator, else --druid, else the first
	// --druid-overlord.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--druid", "http://router:8888"}, "http://router:8888"},
		{[]string{"--druid-broker", "http://b", "--druid-overlord", "http://o1,http://o2"}, "http://o1"},
		{[]string{"--druid", "http://router:8888", "--druid-coordinator", "http://c:8081"}, "http://c:8081"},
	} {
		cfg, err := parseSync(append([]string{"--config", good}, tc.args...), noenv, &bytes.Buffer{})
		if err != nil || cfg.coordinator() != tc.want {
			t.Errorf("%v: coordinator %q (%v), want %q", tc.args, cfg.coordinator(), err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--druid", "http://d"}, nil, "--config is required"},
		{[]string{"--config", good}, nil, "--druid (a Router), or --druid-broker and --druid-overlord, are required"},
		{[]string{"--config", good, "--druid-broker", "http://b"}, nil, "--druid-overlord"},
		{[]string{"--config", good, "--druid", "http://d", "--druid-overlord", "http://o, overlord:8081"}, nil, "--druid-overlord"},
		{[]string{"--config", good, "--druid", "http://d", "--max-tasks", "1"}, nil, "--max-tasks 1"},
		{[]string{"--config", write("pairs:\n  - {table: a.b, dataSource: d, timeColumn: ts, context: {maxNumTasks: 6}}\n"), "--druid", "http://d"},
			nil, "maxNumTasks 6 is more than --max-tasks 4"},
		{[]string{"--config", good, "--druid", "router:8888"}, nil, "--druid"},
		{[]string{"--config", good, "--druid", "http://d", "--druid-coordinator", "coordinator:8081"}, nil, "--druid-coordinator"},
		{[]string{"--config", good, "--druid", "http://d"}, map[string]string{"SIDECAR_DRUID_USERNAME": "u"}, "SIDECAR_DRUID_PASSWORD"},
		{[]string{"--config", good, "--druid", "http://d", "--druid-auth-file", auth}, map[string]string{"SIDECAR_DRUID_PASSWORD": "p"}, "not both"},
		{[]string{"--config", good, "--druid", "http://d", "--interval", "0s"}, nil, "--interval"},
		{[]string{"--config", write("pairs:\n  - {table: a.b, dataSource: d, timeColumn: ts, granularty: DAY}\n"), "--dry-run"}, nil, "granularty"},
		{[]string{"--config", write("pairs:\n  - {table: a.b, timeColumn: ts}\n"), "--dry-run"}, nil, "dataSource and timeColumn (or constantTime, for a table without a time column) are required"},
		{[]string{"--config", write("pairs:\n  - {table: ab, dataSource: d, timeColumn: ts}\n"), "--dry-run"}, nil, "table"},
		{[]string{"--config", write("pairs:\n  - {table: a.b, dataSource: d, timeColumn: ts, granularity: fortnight}\n"), "--dry-run"}, nil, "fortnight"},
		{[]string{"--config", write("pairs:\n  - {table: a.b, dataSource: \"d\\nx\", timeColumn: ts}\n"), "--dry-run"}, nil, "which Druid refuses"},
		{[]string{"--config", write("pairs:\n  - {table: a.b, dataSource: d, timeColumn: ts}\n  - {table: a.c, dataSource: d, timeColumn: ts}\n"), "--dry-run"}, nil, "another pair"},
		{[]string{"--config", write("pairs: []\n"), "--dry-run"}, nil, "no pair"},
	} {
		getenv := func(k string) string { return tc.env[k] }
		if _, err := parseSync(tc.args, getenv, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if strings.Contains(fmt.Sprint(parseSync([]string{"--config", good, "--druid", "http://d", "--druid-auth-file", write("admin-without-password\n")}, noenv, &bytes.Buffer{})), "admin-without") {
		t.Error("an error quotes the credentials file")
	}
}

func TestSyncStateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	st, err := readState(path)
	if err != nil || len(st.DataSources) != 0 {
		t.Fatalf("a missing state file: %+v %v", st, err)
	}
	id := int64(42)
	st.DataSources["d"] = &checkpoint{Table: "a.b", TimeColumn: "ts", Granularity: "DAY", Loaded: true, SnapshotID: &id, Pending: []string{"ALL"}}
	if err := writeState(path, st); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the folder holds %v: a temporary file stayed behind", entries)
	}
	back, err := readState(path)
	if err != nil || *back.DataSources["d"].SnapshotID != 42 || back.DataSources["d"].Pending[0] != "ALL" {
		t.Fatalf("read back %+v %v", back.DataSources["d"], err)
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"dataSources":{"d":{"snapshot":1}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readState(path); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("a state file with an unknown field: %v", err)
	}
	if err := writeState(filepath.Join(dir, "missing", "state.json"), st); err == nil {
		t.Fatal("wrote a state file into a missing folder")
	}
}

// TestSyncExpiredCheckpoint: a checkpoint snapshot the table no longer has
// (expired) cannot be diffed from: the sync loads the table whole again.
func TestSyncExpiredCheckpoint(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "expired")
	p := syncPair{Table: "sync.expired", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
	gone := int64(42)
	st := syncState{Version: stateVersion, DataSources: map[string]*checkpoint{"events": {
		Table: p.Table, TimeColumn: p.TimeColumn, Granularity: p.Granularity, Loaded: true, SnapshotID: &gone,
		Pending: []string{"2024-03-02T00:00:00.000Z/2024-03-03T00:00:00.000Z"},
	}}}
	if err := writeState(e.cfg.StateFile, st); err != nil {
		t.Fatal(err)
	}
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	if got := e.intervals(t, 0); !slices.Equal(got, []string{"ALL"}) {
		t.Fatalf("submitted %v, want a full load", got)
	}
	e.matches(t, h.Table(), p, "after a full load")
	if !strings.Contains(e.logs.String(), "expired") {
		t.Fatalf("the log does not say why: %s", e.logs.String())
	}
}

// TestSyncEveryType: sync loads the demo tables and the all-types table
// into the Druid model through the statements of /changes: Druid refuses
// none, loses no value, and holds every live row in the Druid types of the
// docs' table.
func TestSyncEveryType(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	if err := demo.Write(e.ctx, e.cat); err != nil {
		t.Fatal(err)
	}
	if _, err := tablegen.AllTypes(e.ctx, e.cat, table.Identifier{"db", "all"}); err != nil {
		t.Fatal(err)
	}
	pairs := []syncPair{
		{Table: "demo.orders", DataSource: "orders", TimeColumn: "order_ts", Granularity: "WEEK"},
		{Table: "demo.customers", DataSource: "customers", TimeColumn: "signup_date", Granularity: "MONTH"},
		{Table: "db.all", DataSource: "all", TimeColumn: "id", Granularity: "YEAR"},
	}
	if err := e.sync(pairs...); err != nil {
		t.Fatalf("%v\n%s", err, e.logs)
	}
	if errs := e.druid.Errors(); len(errs) > 0 || len(e.druid.Nulled()) > 0 {
		t.Fatalf("Druid refused %v, nulled %q", errs, e.druid.Nulled())
	}
	for _, p := range pairs {
		tbl, err := e.cat.LoadTable(e.ctx, table.Identifier(strings.Split(p.Table, ".")))
		if err != nil {
			t.Fatal(err)
		}
		lines, err := tablegen.OracleRows(e.ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := druidsim.Expect(lines, p.TimeColumn, druid.Types(tbl.Schema().Fields(), token.Encoding{}))
		if err != nil {
			t.Fatal(err)
		}
		got := e.druid.Rows(p.DataSource)
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d rows, want %d", p.Table, len(got), len(want))
		}
		for i := range got {
			if got[i].String() != want[i].String() {
				t.Fatalf("%s row %d: Druid holds %s, want %s", p.Table, i, got[i], want[i])
			}
		}
	}
}

// TestCoalesce: pending work can be more intervals than GET /changes
// takes; sync asks for fewer, wider ones that cover every one of them.
func TestCoalesce(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	const layout = "2006-01-02T15:04:05.000Z"
	var many []string
	for i := range 2500 {
		// Every other day, in reverse order.
		d := 2 * (2500 - i)
		many = append(many, day(d).Format(layout)+"/"+day(d+1).Format(layout))
	}
	got := coalesce(many, maxInclude)
	if len(got) > maxInclude {
		t.Fatalf("%d intervals, want at most %d", len(got), maxInclude)
	}
	covered := func(start, end time.Time) bool {
		for _, iv := range got {
			a, b, _ := strings.Cut(iv, "/")
			s, err1 := time.Parse(time.RFC3339, a)
			e, err2 := time.Parse(time.RFC3339, b)
			if err1 != nil || err2 != nil {
				t.Fatalf("interval %q", iv)
			}
			if !start.Before(s) && !end.After(e) {
				return true
			}
		}
		return false
	}
	for i := range 2500 {
		if d := 2 * (2500 - i); !covered(day(d), day(d+1)) {
			t.Fatalf("day %d is in no interval of %v", d, got[:5])
		}
	}
	if few := many[:3]; !slices.Equal(coalesce(few, maxInclude), few) {
		t.Fatalf("few intervals changed: %v", coalesce(few, maxInclude))
	}
	if all := coalesce(append(many, "ALL"), maxInclude); !slices.Equal(all, []string{"ALL"}) {
		t.Fatalf("with ALL: %v", all)
	}
}

// TestSyncCompaction: compacting a table with deletes (a replace snapshot:
// its files rewritten with the deletes applied, its rows the same) is no
// change. Sync submits no REPLACE for it, moves the checkpoint, and Druid
// still holds the table's rows.
func TestSyncCompaction(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "compacted")
	p := syncPair{Table: "sync.compacted", DataSource: "compacted", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 1, 4); err != nil {
		t.Fatal(err)
	}
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	e.matches(t, h.Table(), p, "after the deletes")
	if err := h.Compact(e.ctx); err != nil {
		t.Fatal(err)
	}
	n := len(e.druid.Submitted())
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	if got := e.druid.Submitted()[n:]; len(got) != 0 {
		t.Fatalf("a compaction submitted %d statements: %s", len(got), got[0].Query)
	}
	if cp := e.state(t, "compacted"); *cp.SnapshotID != h.Table().CurrentSnapshot().SnapshotID {
		t.Fatalf("the checkpoint is %d, not the compaction's snapshot", *cp.SnapshotID)
	}
	e.matches(t, h.Table(), p, "after the compaction")
}

// TestSyncClusteredBy: a pair's clusteredBy reaches every statement sync
// submits as CLUSTERED BY, and Druid (the model) runs them to the table's
// rows; an empty name in the config is refused.
func TestSyncClusteredBy(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "clustered")
	p := syncPair{Table: "sync.clustered", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "auto",
		ClusteredBy: []string{"cat", "id"}}
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	subs := e.druid.Submitted()
	if len(subs) == 0 {
		t.Fatal("nothing submitted")
	}
	for _, s := range subs {
		if !strings.HasSuffix(s.Query, "\nCLUSTERED BY \"cat\", \"id\"") {
			t.Fatalf("statement without the pair's CLUSTERED BY:\n%s", s.Query)
		}
	}
	e.matches(t, h.Table(), p, "after a clustered sync")

	f := filepath.Join(t.TempDir(), "sync.yaml")
	if err := os.WriteFile(f, []byte("pairs:\n  - {table: a.b, dataSource: d, timeColumn: ts, clusteredBy: [cat, '']}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseSync([]string{"--config", f, "--dry-run"}, func(string) string { return "" }, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "clusteredBy") {
		t.Fatalf("an empty clusteredBy name: %v", err)
	}
}

// TestSyncConstantTime: a pair with constantTime keeps a table whose only
// columns are ints in step: Druid (the model) holds its live rows at the
// constant time after the initial load and after an append, each a REPLACE
// of the instant's day; a compaction submits nothing. The config takes
// constantTime for timeColumn, never both.
func TestSyncConstantTime(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	ints, err := tablegen.NewInts(e.ctx, e.cat, table.Identifier{"sync", "ints"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	p := syncPair{Table: "sync.ints", DataSource: "ints", ConstantTime: "2000-01-01T12:00:00.000Z", Granularity: "DAY", Mode: "auto"}
	holds := func(why string, want ...string) {
		t.Helper()
		var got []string
		for _, r := range e.druid.Rows("ints") {
			if r.Time != at.UnixMilli() {
				t.Fatalf("%s: row %s is not at %s", why, r, at)
			}
			got = append(got, fmt.Sprintf("%v,%v", r.Columns["a"], r.Columns["b"]))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Druid holds %q; want %q", why, got, want)
		}
		if errs := e.druid.Errors(); len(errs) > 0 {
			t.Fatalf("%s: Druid refused work: %v", why, errs)
		}
	}
	steps := []struct {
		why    string
		change func() error
		want   []string
		// submits says whether the sync submits the day's REPLACE.
		submits bool
	}{
		{"the initial load", func() error { return ints.Append(e.ctx, [2]int32{1, 10}, [2]int32{2, 20}) }, []string{"1,10", "2,20"}, true},
		{"an append", func() error { return ints.Append(e.ctx, [2]int32{3, 30}) }, []string{"1,10", "2,20", "3,30"}, true},
		{"a compaction", func() error { return ints.Compact(e.ctx) }, []string{"1,10", "2,20", "3,30"}, false},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatal(err)
		}
		n := len(e.druid.Submitted())
		if err := e.sync(p); err != nil {
			t.Fatalf("%s: %v", s.why, err)
		}
		got := e.intervals(t, n)
		if want := []string{"2000-01-01 00:00:00.000"}; s.submits && !slices.Equal(got, want) || !s.submits && len(got) != 0 {
			t.Fatalf("%s: submitted the intervals %q", s.why, got)
		}
		holds("after "+s.why, s.want...)
		if cp := e.state(t, "ints"); *cp.SnapshotID != ints.Table().CurrentSnapshot().SnapshotID || cp.ConstantTime != p.ConstantTime {
			t.Fatalf("after %s: checkpoint %+v", s.why, cp)
		}
	}

	for _, tc := range []struct{ pair, want string }{
		{"{table: a.b, dataSource: d, constantTime: 2000-01-01T12:00Z}", ""},
		{"{table: a.b, dataSource: d, timeColumn: ts, constantTime: 2000-01-01}", "exclude each other"},
		{"{table: a.b, dataSource: d, constantTime: yesterday}", "constantTime"},
		{"{table: a.b, dataSource: d, constantTime: 10000-01-01T00:00:00Z}", "years 1 to 9999"},
		{"{table: a.b, dataSource: d}", "timeColumn (or constantTime"},
	} {
		f := filepath.Join(t.TempDir(), "sync.yaml")
		if err := os.WriteFile(f, []byte("pairs:\n  - "+tc.pair+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := parseSync([]string{"--config", f, "--dry-run"}, func(string) string { return "" }, &bytes.Buffer{})
		switch {
		case tc.want == "" && err != nil:
			t.Fatalf("%s: %v", tc.pair, err)
		case tc.want == "" && cfg.Pairs[0].ConstantTime != p.ConstantTime:
			t.Fatalf("%s: constantTime %q; want it as Druid writes it, %q", tc.pair, cfg.Pairs[0].ConstantTime, p.ConstantTime)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Fatalf("%s: %v; want an error containing %q", tc.pair, err, tc.want)
		}
	}
}
