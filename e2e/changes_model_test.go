package e2e_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// liveRows are what Druid must hold for a history's table at a snapshot:
// its live rows with a time (a null __time is never ingested), with the
// time as Druid's __time. At the current snapshot they are the history's
// own record, which tablegen's TestHistoryTracksItsRows holds equal to
// iceberg-go's oracle after every step; at another, the oracle's.
func liveRows(t testing.TB, h *tablegen.History, snapshot *int64, timeColumn string) []string {
	t.Helper()
	if snapshot == nil {
		return nil
	}
	if cur := h.Table().CurrentSnapshot(); cur != nil && cur.SnapshotID == *snapshot {
		return sidecartest.DruidRows(t, h.Rows(), timeColumn)
	}
	rows, err := tablegen.OracleRows(context.Background(), h.Table(), *snapshot)
	if err != nil {
		t.Fatal(err)
	}
	return sidecartest.DruidRows(t, rows, timeColumn)
}

// historyCase is one random history's table and how it is synced.
type historyCase struct {
	opts        tablegen.HistoryOptions
	granularity string
	mode        string
	// tasks applies the index_parallel tasks instead of the MSQ
	// statements (an ALL change always goes through its statement).
	tasks      bool
	dataSource string
}

// historyCases spreads n histories over time column types, layouts,
// granularities, modes and spec kinds.
func historyCases(n int, seed uint64) []historyCase {
	rng := rand.New(rand.NewPCG(seed, 1))
	type layout struct {
		time   tablegen.TimeKind
		layout tablegen.Layout
	}
	layouts := []layout{
		{tablegen.TimeTimestamp, tablegen.LayoutDay},
		{tablegen.TimeTimestamp, tablegen.LayoutUnpartitioned},
		{tablegen.TimeTimestampTz, tablegen.LayoutDay},
		{tablegen.TimeTimestampTz, tablegen.LayoutCategory},
		{tablegen.TimeDate, tablegen.LayoutDay},
		{tablegen.TimeDate, tablegen.LayoutUnpartitioned},
		{tablegen.TimeLongMillis, tablegen.LayoutUnpartitioned},
		{tablegen.TimeLongMillis, tablegen.LayoutCategory},
	}
	grans := []string{"DAY", "DAY", "DAY", "DAY", "HOUR", "WEEK", "MONTH", "ALL"}
	out := make([]historyCase, n)
	for i := range out {
		l := layouts[i%len(layouts)]
		c := historyCase{
			opts:        tablegen.HistoryOptions{Seed: seed + uint64(i), Time: l.time, Layout: l.layout},
			granularity: grans[rng.IntN(len(grans))],
			mode:        []string{"auto", "rows"}[rng.IntN(2)],
			tasks:       rng.IntN(3) == 0,
		}
		if i%7 == 3 {
			// Names that must stay quoted in every statement. On the row
			// path only: iceberg-go writes such a column under a
			// sanitized name into Parquet, which raw files would show
			// Druid.
			c.opts.TimeColumn, c.dataSource, c.mode = `t "x" 'y' \z`, `d"s'; --`, "rows"
		}
		if rng.IntN(8) == 0 {
			// Data files without bounds on the time column.
			c.opts.Properties = map[string]string{"write.metadata.metrics.column." + cmp.Or(c.opts.TimeColumn, "ts"): "none"}
		}
		out[i] = c
	}
	return out
}

func (c historyCase) String() string {
	s := fmt.Sprintf("%d_%s_%s_%s_%s", c.opts.Seed, c.opts.Time, c.opts.Layout, c.granularity, c.mode)
	if c.tasks {
		s += "_tasks"
	}
	if c.opts.Properties != nil {
		s += "_nobounds"
	}
	if c.dataSource != "" {
		s += "_hostile"
	}
	return s
}

// TestChangesKeepDruidRight writes random Iceberg histories and keeps a
// model Druid datasource in step with them through GET /changes alone: an
// initial load, then after every few commits the changes since the last
// applied snapshot, each applied as Druid would apply its MSQ statement
// (or index_parallel task), or the merged statements that overwrite them
// all. After each round the datasource holds exactly
// the table's live rows at the applied snapshot, per iceberg-go's oracle.
func TestChangesKeepDruidRight(t *testing.T) {
	n := testenv.Histories(24, 8)
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	srv := sidecartest.LocalServer(t, dir)
	// Snappy data files: what /changes answers does not depend on the
	// codec, and zstd's state, allocated for every small file, was a third
	// of the histories' CPU under -race.
	writes := catalogtest.SnappyWrites(cat)
	for i, hc := range historyCases(n, 1000) {
		t.Run(hc.String(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(hc.opts.Seed, 2))
			h, err := tablegen.NewHistory(ctx, writes, table.Identifier{"model", fmt.Sprintf("t%d", i)}, hc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var log []string
			step := func(n int) {
				for range n {
					what, err := h.Step(ctx)
					if err != nil {
						t.Fatal(err)
					}
					log = append(log, what)
				}
			}
			druid := druidsim.New()
			druid.Client = srv.Client()
			ds := cmp.Or(hc.dataSource, fmt.Sprintf("ds%d", i))
			ts := cmp.Or(hc.opts.TimeColumn, "ts")
			var applied *int64
			sync := func(round int) {
				q := url.Values{"table": {fmt.Sprintf("model.t%d", i)}, "timeColumn": {ts}, "dataSource": {ds},
					"granularity": {hc.granularity}, "mode": {hc.mode}}
				if applied != nil {
					q.Set("fromSnapshot", fmt.Sprint(*applied))
				}
				c := srv.Changes(t, q)
				// The merged statements overwrite the changes' intervals,
				// in order.
				var merged []string
				for _, st := range c.Statements {
					merged = append(merged, st.Intervals...)
				}
				var each []string
				for _, ch := range c.Changes {
					each = append(each, ch.Interval)
				}
				if !slices.Equal(merged, each) {
					t.Fatalf("round %d: statements overwrite %v, the changes are %v", round, merged, each)
				}
				switch {
				case !hc.tasks && hc.opts.Seed%2 == 1:
					// As sync applies them: the merged statements.
					for _, st := range c.Statements {
						if err := druid.ExecSQL(ctx, st.SQL.Query, st.SQL.Context); err != nil {
							t.Fatalf("round %d after %v: Druid refuses the statement for %v: %v", round, log, st.Intervals, err)
						}
					}
				default:
					for _, ch := range c.Changes {
						if hc.tasks && ch.Interval != "ALL" {
							err = druid.ExecTask(ctx, ch.Task)
						} else {
							err = druid.ExecSQL(ctx, ch.SQL.Query, ch.SQL.Context)
						}
						if err != nil {
							t.Fatalf("round %d after %v: Druid refuses the work for %s: %v", round, log, ch.Interval, err)
						}
					}
				}
				applied = c.ToSnapshot
				t.Logf("round %d after %v: %v (%d rows)", round, log, c.Intervals(), len(sidecartest.ModelRows(druid, ds)))
				if got, want := sidecartest.ModelRows(druid, ds), liveRows(t, h, applied, ts); !slices.Equal(got, want) {
					t.Fatalf("round %d after %v (changes %v):\nDruid holds\n  %s\nthe table has\n  %s",
						round, log, c.Intervals(), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
			}
			step(1 + rng.IntN(2))
			sync(0)
			for round := 1; round <= 3; round++ {
				step(1 + rng.IntN(2))
				sync(round)
			}
			if n := druid.Dropped(); n > 0 {
				t.Fatalf("Druid's own guards dropped %d rows the sidecar served outside their interval", n)
			}
		})
	}
}

// TestChangesAPI: the parameters of GET /changes, and the work of one easy
// change: a row deleted from one day's partition is that day, re-ingested
// from that day's rows only.
func TestChangesAPI(t *testing.T) {
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	srv := sidecartest.LocalServer(t, dir)
	h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"api", "events"}, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, h int) *int64 {
		v := (int64(19_783+d)*24 + int64(h)) * 3600 * 1_000_000
		return &v
	}
	if err := h.Append(ctx, tablegen.HistoryRow{ID: 1, TS: day(0, 1)}, tablegen.HistoryRow{ID: 2, TS: day(1, 2)},
		tablegen.HistoryRow{ID: 3, TS: day(1, 3)}, tablegen.HistoryRow{ID: 4, TS: day(2, 4)}); err != nil {
		t.Fatal(err)
	}
	from := h.Table().CurrentSnapshot().SnapshotID
	if err := h.Delete(ctx, table.WriteModeMergeOnRead, 2); err != nil {
		t.Fatal(err)
	}
	c := srv.Changes(t, url.Values{"table": {"api.events"}, "timeColumn": {"ts"}, "fromSnapshot": {fmt.Sprint(from)}})
	if c.DataSource != "events" || *c.FromSnapshot != from || *c.ToSnapshot != h.Table().CurrentSnapshot().SnapshotID {
		t.Fatalf("answer %+v", c)
	}
	const interval = "2024-03-02T00:00:00.000Z/2024-03-03T00:00:00.000Z"
	if got := c.Intervals(); !slices.Equal(got, []string{interval + " position_deletes"}) {
		t.Fatalf("changes %v", got)
	}
	ch := c.Changes[0]
	if ch.Splits != 1 || !strings.Contains(ch.SQL.Query, `OVERWRITE WHERE "__time" >= TIMESTAMP '2024-03-02 00:00:00.000' AND "__time" < TIMESTAMP '2024-03-03 00:00:00.000'`) ||
		ch.SQL.Context["failOnEmptyInsert"] != false {
		t.Fatalf("the statement of one day:\n%s\n%v", ch.SQL.Query, ch.SQL.Context)
	}
	var task struct {
		Spec struct {
			DataSchema struct {
				GranularitySpec struct{ Intervals []string }
			}
			IOConfig struct {
				AppendToExisting bool
				DropExisting     bool
			}
		}
	}
	if err := json.Unmarshal(ch.Task, &task); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(task.Spec.DataSchema.GranularitySpec.Intervals, []string{interval}) || task.Spec.IOConfig.AppendToExisting || !task.Spec.IOConfig.DropExisting {
		t.Fatalf("the task of one day: %s", ch.Task)
	}
	druid := druidsim.New()
	druid.Client = srv.Client()
	if err := druid.ExecSQL(ctx, ch.SQL.Query, ch.SQL.Context); err != nil {
		t.Fatal(err)
	}
	if rows := druid.Rows("events"); len(rows) != 1 || rows[0].Columns["id"] != int64(3) || druid.Dropped() != 0 {
		t.Fatalf("the day re-ingested: %v", rows)
	}

	for _, tc := range []struct{ query, code string }{
		{"table=api.events&timeColumn=ts&fromSnapshot=x", "bad_request"},
		{"table=api.events&timeColumn=ts&granularity=fortnight", "bad_request"},
		{"table=api.events&timeColumn=ts&include=yesterday", "bad_request"},
		{"table=api.events&timeColumn=ts&snapshotId=1", "bad_request"},
		{"table=api.events&timeColumn=cat", "bad_request"},
		{"table=api.events&timeColumn=ts&timeColumn=v", "bad_request"},
		{"table=api.nope&timeColumn=ts", "table_not_found"},
		{"table=api.events&timeColumn=ts&fromSnapshot=1", "snapshot_not_found"},
	} {
		resp, body := srv.Get(t, "/changes?"+tc.query)
		if resp.StatusCode < 400 || !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
			t.Errorf("%s: %d %s, want %s", tc.query, resp.StatusCode, body, tc.code)
		}
	}
}
