//go:build druid

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestRealDruidChangesTasks: random Iceberg histories kept in step with a
// real Druid through the index_parallel tasks of GET /changes, the native
// work that runs without SQL-based ingestion: after every round of
// commits each change's task (granularitySpec.intervals with
// dropExisting, replacing the interval's segments, and emptying it when
// nothing is read) is submitted in order, and the datasource must hold
// the table's live rows; the model of Druid, given the same tasks in the
// same order, must hold what Druid holds, segment by segment (checkModel).
// An ALL change has no task: a history that meets one ends there.
func TestRealDruidChangesTasks(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	ctx := context.Background()
	run := fmt.Sprintf("%d", time.Now().Unix())
	for i, hc := range []struct {
		opts        tablegen.HistoryOptions
		granularity string
	}{
		{tablegen.HistoryOptions{Seed: 8000, Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay}, "DAY"},
		{tablegen.HistoryOptions{Seed: 8001, Time: tablegen.TimeLongMillis, Layout: tablegen.LayoutCategory}, "WEEK"},
	} {
		t.Run(fmt.Sprintf("%d_%s_%s_%s", hc.opts.Seed, hc.opts.Time, hc.opts.Layout, hc.granularity), func(t *testing.T) {
			cat, dir := sidecartest.LocalWarehouse(t)
			srv := sidecartest.LocalServer(t, dir)
			h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"real", "t"}, hc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ds := fmt.Sprintf("real_changes_%d_%s", i, run)
			var applied *int64
			var tasks [][]byte
			var log []string
			var last string
			const rounds = 5
			for round := range rounds {
				for range 1 + round%2 {
					if round == rounds-1 {
						// The last round empties a time chunk: the task
						// reads nothing and drops what Druid holds there.
						log = append(log, deleteFirstDay(t, ctx, h, hc.granularity))
						break
					}
					what, err := h.Step(ctx)
					if err != nil {
						t.Fatal(err)
					}
					log = append(log, what)
				}
				q := url.Values{"table": {"real.t"}, "timeColumn": {"ts"}, "dataSource": {ds}, "granularity": {hc.granularity}, "mode": {"rows"}}
				if applied != nil {
					q.Set("fromSnapshot", fmt.Sprint(*applied))
				}
				c := srv.Changes(t, q)
				for _, ch := range c.Changes {
					if len(ch.Task) == 0 {
						t.Logf("round %d after %v: the change of %s has no task (only a statement applies it): the history ends here",
							round, log, ch.Interval)
						return
					}
					tasks = append(tasks, ch.Task)
					id := d.SubmitTask(t, ch.Task)
					d.WaitTask(t, id)
					last = id
				}
				applied = c.ToSnapshot
				t.Logf("round %d after %v: %v", round, log, c.Intervals())
				if len(c.Changes) == 0 {
					continue
				}
				types := druid.Types(h.Table().Schema().Fields(), token.Encoding{})
				want := sidecartest.RealExpect(t, h.Rows(), "ts", types)
				// The Broker learns of published segments by polling: until
				// it has the last task's, it serves the ones they replace.
				d.WaitPublished(t, ds, last)
				upto := len(tasks)
				if len(want) == 0 {
					d.WaitEmpty(t, ds)
					m := d.Model()
					for _, task := range tasks[:upto] {
						if err := m.ExecTask(ctx, task); err != nil {
							t.Fatalf("the model of Druid %s refuses what Druid ran: %v", d.Version, err)
						}
					}
					if rows, segs := m.RowStrings(ds), m.Segments(ds); len(rows) > 0 || len(segs) > 0 {
						t.Fatalf("round %d: Druid holds no row of %s, the model %d rows in %d segments", round, ds, len(rows), len(segs))
					}
					t.Logf("round %d: the table has no row with a time, and Druid and the model hold none", round)
					continue
				}
				d.CheckModel(t, ds, d.Check(t, ds, want, types), func(m *druidsim.Druid) error {
					for _, task := range tasks[:upto] {
						if err := m.ExecTask(ctx, task); err != nil {
							return err
						}
					}
					return nil
				})
				if t.Failed() {
					t.FailNow()
				}
			}
		})
	}
}

// deleteFirstDay deletes every live row of the day (or, by WEEK, the
// Monday-based week) of the earliest live row with a time, and says so.
func deleteFirstDay(t testing.TB, ctx context.Context, h *tablegen.History, granularity string) string {
	t.Helper()
	const day = int64(86_400_000)
	width := day
	if granularity == "WEEK" {
		width = 7 * day
	}
	// Weeks start on Monday; 1970-01-01 was a Thursday.
	offset := map[bool]int64{true: 3 * day, false: 0}[granularity == "WEEK"]
	chunk := func(ms int64) int64 {
		c := (ms + offset) / width
		if (ms+offset)%width < 0 {
			c--
		}
		return c
	}
	type row struct {
		ID int64  `json:"id"`
		TS *int64 `json:"ts"`
	}
	var rows []row
	first := int64(math.MaxInt64)
	for _, l := range h.Rows() {
		var r row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
		if r.TS != nil {
			first = min(first, *r.TS)
		}
	}
	if first == math.MaxInt64 {
		return "no row with a time to delete"
	}
	var ids []int64
	for _, r := range rows {
		if r.TS != nil && chunk(*r.TS) == chunk(first) {
			ids = append(ids, r.ID)
		}
	}
	if err := h.EqualityDelete(ctx, false, ids...); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("delete the %s of %d: ids %v", strings.ToLower(granularity), first, ids)
}
