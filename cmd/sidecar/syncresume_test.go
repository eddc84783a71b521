package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/druidsim"
)

// TestSyncResumesKilledSync: a sync killed once Druid took its statement
// (the context cancelled from the submission hook, as a signal does) leaves
// the intervals pending with the statement's task id. The next sync asks
// the Overlord how that task ended: one that succeeded is not submitted
// again, even when the table moved on meanwhile (only the new change is);
// one that still runs is waited for; one that failed is submitted again,
// under a new task id. Each ends with the datasource equal to the table and
// nothing pending.
func TestSyncResumesKilledSync(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"finished", "running", "failed"} {
		t.Run(how, func(t *testing.T) {
			e := newSyncEnv(t)
			h := threeDayTable(t, e.ctx, e.cat, "t")
			p := syncPair{Table: "sync.t", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
			var clock *fakeClock
			cfg := e.cfg
			cfg.Pairs = []syncPair{p}
			if how == "running" {
				// The task runs an hour on the model's clock, which the
				// syncs' sleeps move.
				clock = &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
				e.druid.Clock, e.druid.RunTime, e.druid.Polls = clock.now, time.Hour, 0
				cfg.PollInterval, cfg.TaskTimeout = time.Minute, 2*time.Hour
			}
			run := func(ctx context.Context, hook func(string)) error {
				s := newSyncer(cfg, slog.New(slog.NewTextHandler(e.logs, nil)), &bytes.Buffer{})
				s.submitted = hook
				if clock != nil {
					s.now, s.sleep = clock.now, clock.sleep
				}
				return s.once(ctx)
			}
			if err := run(e.ctx, nil); err != nil {
				t.Fatal(err)
			}
			e.matches(t, h.Table(), p, "initial load")

			// Rows deleted on the first and the last day: one statement.
			if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 1, 6); err != nil {
				t.Fatal(err)
			}
			if how == "failed" {
				// Failed at once, and said so at the first status request.
				e.druid.Decide = func(string, druidsim.Submission) druidsim.Outcome { return druidsim.Fail }
				e.druid.Polls = 0
			}
			ctx, kill := context.WithCancel(e.ctx)
			var killedID string
			n := len(e.druid.Submitted())
			err := run(ctx, func(id string) { killedID = id; kill() })
			kill()
			if err == nil || killedID == "" || len(e.druid.Submitted()) != n+1 {
				t.Fatalf("the killed sync: %v, task %q, %d submissions", err, killedID, len(e.druid.Submitted())-n)
			}
			cp := e.state(t, "events")
			if len(cp.Pending) != 2 || cp.Target == nil || *cp.Target != h.Table().CurrentSnapshot().SnapshotID {
				t.Fatalf("the killed sync left pending %v target %v", cp.Pending, cp.Target)
			}
			for _, iv := range cp.Pending {
				if !slices.Equal(cp.Tasks[iv], []string{killedID}) {
					t.Fatalf("the state file names tasks %v for %s, want the submitted %s", cp.Tasks[iv], iv, killedID)
				}
			}
			e.druid.Decide = nil

			var want []string
			switch how {
			case "finished":
				// The table moves on: a row of the second day goes.
				if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 3); err != nil {
					t.Fatal(err)
				}
				want = []string{"2024-03-02 00:00:00.000"}
			case "failed":
				want = []string{"2024-03-01 00:00:00.000", "2024-03-03 00:00:00.000"}
			}
			n = len(e.druid.Submitted())
			var ids []string
			if err := run(e.ctx, func(id string) { ids = append(ids, id) }); err != nil {
				t.Fatalf("%v\n%s", err, e.logs)
			}
			if got := e.intervals(t, n); !slices.Equal(got, want) || slices.Contains(ids, killedID) {
				t.Fatalf("the sync after the killed one submitted %v as tasks %v, want %v under new ids", got, ids, want)
			}
			cp = e.state(t, "events")
			if *cp.SnapshotID != h.Table().CurrentSnapshot().SnapshotID || len(cp.Pending) != 0 || len(cp.Tasks) != 0 {
				t.Fatalf("after the resumed sync: checkpoint %d pending %v tasks %v", *cp.SnapshotID, cp.Pending, cp.Tasks)
			}
			e.matches(t, h.Table(), p, "after the resumed sync")
			if how == "running" && e.druid.Peak() > cfg.MaxTasks {
				t.Fatalf("%d Druid tasks in flight, more than --max-tasks %d", e.druid.Peak(), cfg.MaxTasks)
			}
		})
	}
}

// TestSyncStateVersion1: a state file of version 1 (no task ids) reads as
// one whose pending work has no task: the next sync submits it whole, and
// writes version 2. A version it does not know is an error that says so.
func TestSyncStateVersion1(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	h := threeDayTable(t, e.ctx, e.cat, "v1")
	p := syncPair{Table: "sync.v1", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "rows"}
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	snap := h.Table().CurrentSnapshot().SnapshotID
	v1 := `{"version": 1, "dataSources": {"events": {"table": "sync.v1", "timeColumn": "ts", "granularity": "DAY", "loaded": true,
		"snapshotId": ` + strconv.FormatInt(snap, 10) + `, "pending": ["2024-03-02T00:00:00.000Z/2024-03-03T00:00:00.000Z"], "updated": "2025-01-01T00:00:00Z"}}}`
	if err := os.WriteFile(e.cfg.StateFile, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := readState(e.cfg.StateFile)
	if err != nil || st.Version != stateVersion || len(st.DataSources["events"].Pending) != 1 || st.DataSources["events"].Tasks != nil {
		t.Fatalf("version 1 read as %+v %v", st, err)
	}
	n := len(e.druid.Submitted())
	if err := e.sync(p); err != nil {
		t.Fatal(err)
	}
	if got := e.intervals(t, n); !slices.Equal(got, []string{"2024-03-02 00:00:00.000"}) {
		t.Fatalf("the pending day of a version 1 file: submitted %v", got)
	}
	data, err := os.ReadFile(e.cfg.StateFile)
	if err != nil || !strings.Contains(string(data), `"version": 2`) {
		t.Fatalf("written back as %s (%v)", data, err)
	}
	e.matches(t, h.Table(), p, "after the version 1 file")

	if err := os.WriteFile(e.cfg.StateFile, []byte(`{"version": 3, "dataSources": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readState(e.cfg.StateFile); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("a state file of version 3: %v", err)
	}
}

// TestSyncDropsEmptiedInterval: a day that loses its last row. Druid 29
// and later empty it with the REPLACE that reads nothing
// (failOnEmptyInsert false); Druid 27 fails that REPLACE with
// InsertCannotBeEmpty, so sync, knowing the version from GET /status,
// submits no statement for a day /changes says has no file to read, and
// has the Coordinator mark its segments unused; a statement Druid fails
// with InsertCannotBeEmpty (files whose rows are all deleted) has its days
// marked unused alike. Either way the datasource equals the table and nothing stays
// pending. A day that lost its last row alongside a changed day with rows
// is one statement, which Druid 27 applies (it writes tombstones for the
// empty day).
func TestSyncDropsEmptiedInterval(t *testing.T) {
	t.Parallel()
	for _, version := range []int{27, 29} {
		for _, mode := range []string{table.WriteModeMergeOnRead, table.WriteModeCopyOnWrite} {
			t.Run(strconv.Itoa(version)+"_"+string(mode), func(t *testing.T) {
				t.Parallel()
				e := newSyncEnv(t)
				e.druid.Version = version
				e.refusable = func(err error) bool { return version < 29 && strings.Contains(err.Error(), "InsertCannotBeEmpty") }
				h := threeDayTable(t, e.ctx, e.cat, "emptied")
				p := syncPair{Table: "sync.emptied", DataSource: "events", TimeColumn: "ts", Granularity: "DAY", Mode: "auto"}
				if err := e.sync(p); err != nil {
					t.Fatal(err)
				}
				// The second day's two rows go.
				if err := h.Delete(e.ctx, mode, 3, 4); err != nil {
					t.Fatal(err)
				}
				n := len(e.druid.Submitted())
				if err := e.sync(p); err != nil {
					t.Fatalf("%v\n%s", err, e.logs)
				}
				submitted := len(e.druid.Submitted()) - n
				dropped := strings.Contains(e.logs.String(), "segments marked unused")
				// Copy-on-write leaves the day no file (splits 0: no
				// statement); merge-on-read a file whose rows are all
				// deleted, whose statement Druid 27 fails with
				// InsertCannotBeEmpty, which says the day is empty too.
				if version < 29 && (!dropped || mode == table.WriteModeCopyOnWrite && submitted != 0) || version >= 29 && (submitted != 1 || dropped) {
					t.Fatalf("Druid %d: %d statements, segments marked unused %v", version, submitted, dropped)
				}
				for _, s := range e.druid.Segments("events") {
					if strings.HasPrefix(s.Interval, "2024-03-02") {
						t.Fatalf("Druid %d keeps a segment of the emptied day: %+v", version, s)
					}
				}
				cp := e.state(t, "events")
				if len(cp.Pending) != 0 || *cp.SnapshotID != h.Table().CurrentSnapshot().SnapshotID {
					t.Fatalf("after the emptied day: checkpoint %d pending %v", *cp.SnapshotID, cp.Pending)
				}
				e.matches(t, h.Table(), p, "after the emptied day")

				// The first day loses its last rows and the third a row:
				// one statement.
				if err := h.Delete(e.ctx, mode, 1, 2, 6); err != nil {
					t.Fatal(err)
				}
				n = len(e.druid.Submitted())
				if err := e.sync(p); err != nil {
					t.Fatalf("%v\n%s", err, e.logs)
				}
				if got := e.intervals(t, n); !slices.Equal(got, []string{"2024-03-01 00:00:00.000", "2024-03-03 00:00:00.000"}) {
					t.Fatalf("Druid %d: submitted %v", version, got)
				}
				e.matches(t, h.Table(), p, "after a day emptied beside a changed one")
			})
		}
	}
}
