package handlers_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestChangesConstantTime: /changes of a table whose only columns are
// ints, with constantTime, answers for an initial load, an append and
// deletes (merge on read, then copy on write of every row) a REPLACE of the
// whole table over the one DAY bucket of the instant (or of nothing, once
// the table has no file), with a warning that says every row's __time is
// the constant, that Druid (the model) runs to the table's rows and Druid's
// SQL parser takes; the change's task does the same. (Which intervals
// change, and what their plans read, is changes'
// TestChangesConstantTimeInts.)
func TestChangesConstantTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	srv := localServer(t, dir)
	_, snaps, err := tablegen.IntsLifecycle(ctx, cat, table.Identifier{"notime", "ints"})
	if err != nil {
		t.Fatal(err)
	}

	at := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	const bucket = "2000-01-01T00:00:00.000Z/2000-01-02T00:00:00.000Z"
	ask := func(from *int64, to int64) changes {
		t.Helper()
		q := url.Values{"table": {"notime.ints"}, "dataSource": {"ints"}, "constantTime": {"2000-01-01T12:00:00Z"},
			"granularity": {"DAY"}, "toSnapshot": {fmt.Sprint(to)}}
		if from != nil {
			q.Set("fromSnapshot", fmt.Sprint(*from))
		}
		return srv.changes(t, q)
	}
	// want are the rows (a, b) Druid must hold, at the constant time.
	holds := func(what string, d *druidsim.Druid, want ...[2]int32) {
		t.Helper()
		rows := d.Rows("ints")
		var got [][2]int32
		for _, r := range rows {
			if r.Time != at.UnixMilli() {
				t.Fatalf("%s: row %s is not at %s", what, r, at)
			}
			got = append(got, [2]int32{int32(asInt(t, r.Columns["a"])), int32(asInt(t, r.Columns["b"]))})
		}
		slices.SortFunc(got, func(x, y [2]int32) int { return int(x[0] - y[0]) })
		if !slices.Equal(got, want) || d.Unparseable() != 0 {
			t.Fatalf("%s: Druid holds %v (%d unparseable); want %v", what, got, d.Unparseable(), want)
		}
	}

	d := druidsim.New()  // applies the statements
	dt := druidsim.New() // applies the changes' tasks
	d.Client, dt.Client = srv.Client(), srv.Client()
	var queries []string
	for _, tc := range []struct {
		what string
		from *int64
		to   int64
		want [][2]int32
	}{
		{"initial load", nil, snaps[0], [][2]int32{{1, 10}, {2, 20}}},
		{"append", &snaps[0], snaps[1], [][2]int32{{1, 10}, {2, 20}, {3, 30}}},
		{"a row deleted", &snaps[2], snaps[3], [][2]int32{{2, 20}, {3, 30}}},
		{"every row deleted", &snaps[4], snaps[5], nil},
	} {
		ch := ask(tc.from, tc.to)
		if len(ch.Changes) != 1 {
			t.Fatalf("%s: changes %q; want the bucket of the constant time", tc.what, ch.intervals())
		}
		if !strings.Contains(strings.Join(ch.Warnings, "\n"), "no time column: every row's __time is 2000-01-01T12:00:00.000Z") {
			t.Fatalf("%s: warnings %q", tc.what, ch.Warnings)
		}
		if len(ch.Statements) != 1 || !slices.Equal(ch.Statements[0].Intervals, []string{bucket}) {
			t.Fatalf("%s: statements %+v", tc.what, ch.Statements)
		}
		st := ch.Statements[0].SQL
		if err := d.ExecSQL(ctx, st.Query, st.Context); err != nil {
			t.Fatalf("%s: Druid refuses the statement: %v\n%s", tc.what, err, st.Query)
		}
		holds(tc.what+" (statement)", d, tc.want...)
		if err := dt.ExecTask(ctx, ch.Changes[0].Task); err != nil {
			t.Fatalf("%s: Druid refuses the task: %v\n%s", tc.what, err, ch.Changes[0].Task)
		}
		holds(tc.what+" (task)", dt, tc.want...)
		queries = append(queries, st.Query, ch.Changes[0].SQL.Query)
	}
	sqlcheck.Require(t, queries...)
}

// asInt reads an integer column value as the model holds it.
func asInt(t *testing.T, v any) int64 {
	t.Helper()
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	t.Fatalf("value %v (%T) is not an integer", v, v)
	return 0
}
