package changes

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// TestChangesConstantTimeInts: a table whose only columns are ints, with a
// constant time, changes in the one DAY bucket of the instant for an
// initial load, an append and deletes (merge on read, then copy on write of
// every row), and the change's plan reads the table's rows at the target
// snapshot (what a REPLACE of the bucket leaves in Druid), or nothing once
// the table has no file. Between two snapshots whose files are the same,
// or across a compaction (a replace snapshot), there is no change. (That
// Druid, the model, runs /changes' statements and tasks to those rows, and
// Druid's SQL parser takes them, is handlers' TestChangesConstantTime.)
func TestChangesConstantTimeInts(t *testing.T) {
	e := newChangesEnv(t)
	r := servetest.New(t, catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: e.dir}), nil)
	d := New(r.Planner)
	_, snaps, err := tablegen.IntsLifecycle(e.ctx, e.cat, table.Identifier{"notime", "ints"})
	if err != nil {
		t.Fatal(err)
	}

	at := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	const bucket = "2000-01-01T00:00:00.000Z/2000-01-02T00:00:00.000Z"
	ask := func(from *int64, to int64) Result {
		t.Helper()
		// The rows' options as GET /changes plans them by default.
		ch, err := d.Changes(e.ctx, Request{Table: "notime.ints", FromSnapshot: from, ToSnapshot: &to, ConstantTime: at,
			Granularity: druid.GranularityDay, Rows: splits.Request{Table: "notime.ints", MinSplits: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if !ch.ConstantTime.Equal(at) || ch.TimeField.Name != "" {
			t.Fatalf("constant %s, time field %q", ch.ConstantTime, ch.TimeField.Name)
		}
		return ch
	}
	for _, tc := range []struct {
		what   string
		from   *int64
		to     int64
		reason Reason
		splits int // the change's splits; -1: some
		want   [][2]int32
	}{
		{"initial load", nil, snaps[0], ReasonInitialLoad, -1, [][2]int32{{1, 10}, {2, 20}}},
		{"append", &snaps[0], snaps[1], ReasonDataAdded, -1, [][2]int32{{1, 10}, {2, 20}, {3, 30}}},
		{"a row deleted", &snaps[2], snaps[3], ReasonPositionDeletes, -1, [][2]int32{{2, 20}, {3, 30}}},
		{"every row deleted", &snaps[4], snaps[5], ReasonDataRemoved, 0, nil},
	} {
		ch := ask(tc.from, tc.to)
		if len(ch.Changes) != 1 || ch.Changes[0].String() != bucket || !slices.Equal(ch.Changes[0].Reasons, []Reason{tc.reason}) {
			t.Fatalf("%s: changes %v; want the bucket of the constant time, %s", tc.what, ch.Changes, tc.reason)
		}
		plan, err := ch.Plan(e.ctx, ch.Changes[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(plan.Splits); tc.splits < 0 && n == 0 || tc.splits >= 0 && n != tc.splits {
			t.Fatalf("%s: %d splits", tc.what, n)
		}
		var got [][2]int32
		for _, ps := range plan.Splits {
			body, err := r.Read(e.ctx, ps.Parts)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range servetest.NDJSONLines(t, body) {
				var r struct{ A, B int32 }
				if err := json.Unmarshal([]byte(row), &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, [2]int32{r.A, r.B})
			}
		}
		slices.SortFunc(got, func(x, y [2]int32) int { return int(x[0] - y[0]) })
		if !slices.Equal(got, tc.want) {
			t.Fatalf("%s: the change's plan reads %v; want %v", tc.what, got, tc.want)
		}
	}

	// The compactions rewrote the files (the second with a delete applied),
	// not the rows; and a snapshot is no change from itself.
	for _, span := range [][2]int64{{snaps[1], snaps[2]}, {snaps[3], snaps[4]}, {snaps[1], snaps[1]}} {
		if ch := ask(&span[0], span[1]); len(ch.Changes) != 0 {
			t.Fatalf("%d to %d: changes %v; want none", span[0], span[1], ch.Changes)
		}
	}
}
