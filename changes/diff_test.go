package changes

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// changesEnv is a local warehouse with a planner over it.
type changesEnv struct {
	ctx    context.Context
	cat    *hadoop.Catalog
	dir    string
	signer *token.Signer
	d      *Differ
	n      int
}

func newChangesEnv(t *testing.T) *changesEnv {
	t.Helper()
	dir := t.TempDir()
	cat := catalogtest.Local(t, dir)
	signer, err := token.NewSigner(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	e := &changesEnv{ctx: context.Background(), cat: cat, dir: dir, signer: signer}
	e.d = e.differ(t)
	return e
}

// differ is a Differ over the environment's warehouse whose tables open
// their files through wrap, when given.
func (e *changesEnv) differ(t *testing.T, wrap ...func(icebergio.IO) icebergio.IO) *Differ {
	t.Helper()
	var opts []catalog.Option
	for _, w := range wrap {
		opts = append(opts, catalog.WithFileIOWrapper(w))
	}
	p, err := splits.NewPlanner(catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: e.dir}, opts...), e.signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(p)
}

// history creates a table to drive step by step.
func (e *changesEnv) history(t *testing.T, opts tablegen.HistoryOptions) (*tablegen.History, string) {
	t.Helper()
	e.n++
	name := fmt.Sprintf("t%d", e.n)
	h, err := tablegen.NewHistory(e.ctx, e.cat, table.Identifier{"ch", name}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h, "ch." + name
}

func current(h *tablegen.History) int64 { return h.Table().CurrentSnapshot().SnapshotID }

// changes asks for the changes since from, on the time column ts, and
// renders them as "INTERVAL reason,reason".
func (e *changesEnv) changes(t *testing.T, table string, from int64, gran druid.Granularity) ([]string, Result) {
	t.Helper()
	ch, err := e.d.Changes(e.ctx, Request{Table: table, FromSnapshot: &from, TimeColumn: "ts", Granularity: gran})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range ch.Changes {
		var rs []string
		for _, r := range c.Reasons {
			rs = append(rs, string(r))
		}
		out = append(out, c.String()+" "+strings.Join(rs, ","))
	}
	return out, ch
}

func micros(s string) *int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	v := t.UnixMicro()
	return &v
}

// threeDays appends rows 1-6 on 2024-03-01, -02 and -03 (two a day), in
// one snapshot.
func threeDays(t *testing.T, e *changesEnv, h *tablegen.History) {
	t.Helper()
	var rows []tablegen.HistoryRow
	for i, ts := range []string{"2024-03-01T01:00:00Z", "2024-03-01T23:00:00Z", "2024-03-02T01:00:00Z",
		"2024-03-02T23:00:00Z", "2024-03-03T01:00:00Z", "2024-03-03T23:00:00Z"} {
		rows = append(rows, tablegen.HistoryRow{ID: int64(i + 1), TS: micros(ts), Cat: "a"})
	}
	if err := h.Append(e.ctx, rows...); err != nil {
		t.Fatal(err)
	}
}

const day2 = "2024-03-02T00:00:00.000Z/2024-03-03T00:00:00.000Z"

// TestChangesMinimal: on the easy cases the intervals are exactly those
// whose rows changed, from metadata alone where it suffices.
func TestChangesMinimal(t *testing.T) {
	e := newChangesEnv(t)
	tests := []struct {
		name   string
		layout tablegen.Layout
		change func(t *testing.T, h *tablegen.History)
		want   []string
	}{
		{"one row deleted by position in one day's partition", tablegen.LayoutDay,
			func(t *testing.T, h *tablegen.History) {
				if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 3); err != nil {
					t.Fatal(err)
				}
			}, []string{day2 + " position_deletes"}},
		{"one row deleted by equality on id in one day's partition", tablegen.LayoutDay,
			func(t *testing.T, h *tablegen.History) {
				if err := h.EqualityDelete(e.ctx, false, 4); err != nil {
					t.Fatal(err)
				}
			}, []string{day2 + " equality_deletes"}},
		{"one row deleted by equality on (id, ts) in a file of three days", tablegen.LayoutUnpartitioned,
			func(t *testing.T, h *tablegen.History) {
				if err := h.EqualityDelete(e.ctx, true, 4); err != nil {
					t.Fatal(err)
				}
			}, []string{day2 + " equality_deletes"}},
		{"rows deleted by equality on (id, ts) on two days of a file of three", tablegen.LayoutUnpartitioned,
			func(t *testing.T, h *tablegen.History) {
				// The delete file's ts bounds span three days: its rows
				// are read, and say 1 and 3.
				if err := h.EqualityDelete(e.ctx, true, 1, 6); err != nil {
					t.Fatal(err)
				}
			}, []string{"2024-03-01T00:00:00.000Z/2024-03-02T00:00:00.000Z equality_deletes",
				"2024-03-03T00:00:00.000Z/2024-03-04T00:00:00.000Z equality_deletes"}},
		{"one day appended", tablegen.LayoutDay,
			func(t *testing.T, h *tablegen.History) {
				if err := h.Append(e.ctx, tablegen.HistoryRow{ID: 10, TS: micros("2024-03-02T12:00:00Z")}); err != nil {
					t.Fatal(err)
				}
			}, []string{day2 + " data_added"}},
		{"a whole day's file deleted", tablegen.LayoutDay,
			func(t *testing.T, h *tablegen.History) {
				if err := h.Delete(e.ctx, table.WriteModeCopyOnWrite, 3, 4); err != nil {
					t.Fatal(err)
				}
			}, []string{day2 + " data_removed"}},
		{"one row deleted by copy on write", tablegen.LayoutDay,
			func(t *testing.T, h *tablegen.History) {
				if err := h.Delete(e.ctx, table.WriteModeCopyOnWrite, 3); err != nil {
					t.Fatal(err)
				}
			}, []string{day2 + " data_added,data_removed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tc.layout})
			threeDays(t, e, h)
			from := current(h)
			tc.change(t, h)
			got, _ := e.changes(t, name, from, druid.GranularityDay)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("changes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestChangesCompaction: compaction (a replace snapshot: files
// rewritten, rows the same) is no change, alone or between snapshots that
// change rows; those changes are still found, and only they. The
// rewritten files and removed delete files would otherwise make every
// compacted interval a change.
func TestChangesCompaction(t *testing.T) {
	e := newChangesEnv(t)
	for _, tc := range []struct {
		layout tablegen.Layout
		// A positional delete is the time range of the data file it
		// names: one day's, or the three days of an unpartitioned one.
		deleted string
	}{
		{tablegen.LayoutDay, day2},
		{tablegen.LayoutUnpartitioned, "2024-03-01T00:00:00.000Z/2024-03-04T00:00:00.000Z"},
	} {
		t.Run(string(tc.layout), func(t *testing.T) {
			h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tc.layout})
			threeDays(t, e, h)
			if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 1, 6); err != nil {
				t.Fatal(err)
			}
			from := current(h)
			if err := h.Compact(e.ctx); err != nil {
				t.Fatal(err)
			}
			before, err := tablegen.OracleRows(e.ctx, h.Table(), from)
			if err != nil {
				t.Fatal(err)
			}
			after, err := tablegen.OracleRows(e.ctx, h.Table(), current(h))
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(before)
			slices.Sort(after)
			if !slices.Equal(before, after) || len(after) != 4 {
				t.Fatalf("compaction changed the rows: %v → %v", before, after)
			}
			if got, _ := e.changes(t, name, from, druid.GranularityDay); len(got) != 0 {
				t.Fatalf("a compaction is changes %v", got)
			}
			// A delete between two compactions is a change, of the
			// file it deletes from only.
			if err := h.Delete(e.ctx, table.WriteModeMergeOnRead, 3); err != nil {
				t.Fatal(err)
			}
			if err := h.Compact(e.ctx); err != nil {
				t.Fatal(err)
			}
			if got, _ := e.changes(t, name, from, druid.GranularityDay); !slices.Equal(got, []string{tc.deleted + " position_deletes"}) {
				t.Fatalf("compact, delete, compact: changes %v, want %s", got, tc.deleted)
			}
		})
	}
}

// TestChangesPositionalDeleteNamesOtherFiles: a positional delete file
// whose file_path bounds span several data files is attached to all of
// them by PlanFiles; its rows say which it names, so a file it names no
// row of is no change.
func TestChangesPositionalDeleteNamesOtherFiles(t *testing.T) {
	e := newChangesEnv(t)
	req, day, paths := spannedPositionalDelete(t, e)
	ch, err := e.d.Changes(e.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ch.Changes {
		got = append(got, c.String())
	}
	want := []string{day[paths[0]], day[paths[2]]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v (the middle file's day is not one)", got, want)
	}
}

// TestChangesDeleteFileStoreFails: when the store fails while /changes
// reads a delete file's column, the request fails with the store's error
// (which a retry may cure) instead of widening the change to every file the
// delete file's bounds span.
func TestChangesDeleteFileStoreFails(t *testing.T) {
	e := newChangesEnv(t)
	req, day, paths := spannedPositionalDelete(t, e)
	failing := func(fsys icebergio.IO) icebergio.IO {
		return failingOpen{IO: fsys, suffix: "/pos.parquet", err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	}
	_, err := e.differ(t, failing).Changes(e.ctx, req)
	if err == nil || !errors.Is(err, fault.ErrUnavailable) {
		t.Fatalf("Changes = %v, want the store's transient error", err)
	}
	// A delete file that is gone is a file the diff cannot narrow with:
	// the change widens to what its bounds span, as for a damaged one.
	gone := func(fsys icebergio.IO) icebergio.IO {
		return failingOpen{IO: fsys, suffix: "/pos.parquet", err: fs.ErrNotExist}
	}
	ch, err := e.differ(t, gone).Changes(e.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ch.Changes {
		got = append(got, c.String())
	}
	want := []string{day[paths[0]], day[paths[1]], day[paths[2]]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("changes with the delete file gone %v, want every day its bounds span %v", got, want)
	}
}

// failingOpen fails every Open of a path with the given suffix.
type failingOpen struct {
	icebergio.IO
	suffix string
	err    error
}

func (f failingOpen) Open(name string) (icebergio.File, error) {
	if strings.HasSuffix(name, f.suffix) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: f.err}
	}
	return f.IO.Open(name)
}

// spannedPositionalDelete builds a table of three data files, one day
// apart, and a positional delete file naming rows of the first and last
// whose file_path bounds span the middle one too; it returns the request
// for the changes of that delete, the day interval of each data file, and
// the data file paths in order.
func spannedPositionalDelete(t *testing.T, e *changesEnv) (Request, map[string]string, []string) {
	t.Helper()
	h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutUnpartitioned})
	// Three appends, three data files of one day each.
	// Days apart, so that no two changed days merge into one interval.
	for i, ts := range []string{"2024-03-01T12:00:00Z", "2024-03-03T12:00:00Z", "2024-03-05T12:00:00Z"} {
		if err := h.Append(e.ctx, tablegen.HistoryRow{ID: int64(i + 1), TS: micros(ts)}); err != nil {
			t.Fatal(err)
		}
	}
	from := current(h)
	var paths []string
	day := map[string]string{}
	tasks, err := h.Table().Scan().PlanFiles(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		paths = append(paths, task.File.FilePath())
		lo := int64(binary.LittleEndian.Uint64(task.File.LowerBoundValues()[2]))
		d := time.UnixMicro(lo).UTC().Truncate(24 * time.Hour)
		day[task.File.FilePath()] = d.Format("2006-01-02T15:04:05.000Z") + "/" + d.AddDate(0, 0, 1).Format("2006-01-02T15:04:05.000Z")
	}
	slices.Sort(paths)
	// Rows of the first and last data files: the bounds span the middle
	// one too.
	del, err := icewrite.WritePositionalDeletes(e.ctx, h.Table(), strings.TrimSuffix(h.Table().Location(), "/")+"/data/pos.parquet",
		[]icewrite.PositionalDelete{{FilePath: paths[0], Pos: 0}, {FilePath: paths[2], Pos: 0}})
	if err != nil {
		t.Fatal(err)
	}
	tx := h.Table().NewTransaction()
	if err := tx.NewRowDelta(nil).AddDeletes(del).Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tasks, err = tbl.Scan().PlanFiles(e.ctx); err != nil || len(tasks) != 3 {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if len(task.DeleteFiles) != 1 {
			t.Fatalf("PlanFiles attaches %d delete files to %s, want the one whose bounds span it", len(task.DeleteFiles), task.File.FilePath())
		}
	}
	return Request{Table: name, FromSnapshot: &from, ToSnapshot: &tbl.CurrentSnapshot().SnapshotID, TimeColumn: "ts"}, day, paths
}

// TestChangesEpochTruncation: a timestamp 1 µs before 1970 is served as
// 0 ms, so it belongs to 1970-01-01 in Druid although its partition is
// 1969-12-31; the interval filter keeps it there and only there.
func TestChangesEpochTruncation(t *testing.T) {
	e := newChangesEnv(t)
	h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	if err := h.Append(e.ctx, tablegen.HistoryRow{ID: 1, TS: micros("1969-12-30T12:00:00Z")}); err != nil {
		t.Fatal(err)
	}
	from := current(h)
	minus1 := int64(-1)
	if err := h.Append(e.ctx, tablegen.HistoryRow{ID: 2, TS: &minus1}); err != nil {
		t.Fatal(err)
	}
	got, ch := e.changes(t, name, from, druid.GranularityDay)
	if want := []string{"1970-01-01T00:00:00.000Z/1970-01-02T00:00:00.000Z data_added"}; !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	field := ch.TimeField
	schema := h.Table().Schema()
	for _, tc := range []struct {
		start, end string
		keeps      bool
	}{
		{"1970-01-01T00:00:00Z", "1970-01-02T00:00:00Z", true},
		{"1969-12-31T00:00:00Z", "1970-01-01T00:00:00Z", false},
	} {
		s, _ := time.Parse(time.RFC3339, tc.start)
		en, _ := time.Parse(time.RFC3339, tc.end)
		f, err := splits.IntervalFilter(field, s, en)
		if err != nil {
			t.Fatal(err)
		}
		expr, err := f.Expression(schema, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		eval, err := iceberg.ExpressionEvaluator(schema, expr, true)
		if err != nil {
			t.Fatal(err)
		}
		row := rowOf([]any{int64(2), iceberg.Timestamp(-1), "", int64(0)})
		if ok, err := eval(row); err != nil || ok != tc.keeps {
			t.Fatalf("%s/%s keeps -1 µs: %v (%v), want %v", tc.start, tc.end, ok, err, tc.keeps)
		}
	}
}

// rowOf is a row for iceberg-go's expression evaluator.
type rowOf []any

func (r rowOf) Size() int            { return len(r) }
func (r rowOf) Get(pos int) any      { return r[pos] }
func (r rowOf) Set(pos int, val any) { r[pos] = val }

// TestChangesWholeTimeline: what the metadata cannot bound is ALL, with a
// warning that says why; nothing is guessed.
func TestChangesWholeTimeline(t *testing.T) {
	e := newChangesEnv(t)

	h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutUnpartitioned,
		Properties: iceberg.Properties{"write.metadata.metrics.column.ts": "none"}})
	threeDays(t, e, h)
	from := current(h)
	if err := h.Append(e.ctx, tablegen.HistoryRow{ID: 9, TS: micros("2024-03-02T12:00:00Z")}); err != nil {
		t.Fatal(err)
	}
	got, ch := e.changes(t, name, from, druid.GranularityDay)
	if !slices.Equal(got, []string{"ALL data_added"}) || len(ch.Warnings) != 1 || !strings.Contains(ch.Warnings[0], "no bounds for ts") {
		t.Fatalf("a file without ts bounds: %v %v", got, ch.Warnings)
	}

	// The same table partitioned by day: the partition bounds the file.
	h, name = e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay,
		Properties: iceberg.Properties{"write.metadata.metrics.column.ts": "none"}})
	threeDays(t, e, h)
	from = current(h)
	if err := h.Append(e.ctx, tablegen.HistoryRow{ID: 9, TS: micros("2024-03-02T12:00:00Z")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.changes(t, name, from, druid.GranularityDay); !slices.Equal(got, []string{day2 + " data_added"}) {
		t.Fatalf("a file without ts bounds in a day partition: %v", got)
	}

	// Only null times: nothing Druid ever held.
	from = current(h)
	if err := h.Append(e.ctx, tablegen.HistoryRow{ID: 10}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.changes(t, name, from, druid.GranularityDay); len(got) != 0 {
		t.Fatalf("a file of null times: %v", got)
	}

	// A schema change: every row may read differently.
	from = current(h)
	tx := h.Table().NewTransaction()
	if err := tx.UpdateSchema(true, false).AddColumn([]string{"extra"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit(); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := e.changes(t, name, from, druid.GranularityDay); len(got) != 0 {
		t.Fatalf("a schema change without a snapshot yet: %v", got)
	}
	// A snapshot written with the new schema.
	tx = tbl.NewTransaction()
	if err := tx.Delete(e.ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(1)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	got, ch = e.changes(t, name, from, druid.GranularityDay)
	if !slices.Equal(got, []string{"ALL schema_changed"}) || len(ch.Warnings) != 1 {
		t.Fatalf("a snapshot with a new schema: %v %v", got, ch.Warnings)
	}
}

// TestRequests: the edges of a request.
func TestRequests(t *testing.T) {
	e := newChangesEnv(t)
	h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	threeDays(t, e, h)
	cur := current(h)

	if got, _ := e.changes(t, name, cur, druid.GranularityDay); len(got) != 0 {
		t.Fatalf("from the current snapshot: %v", got)
	}
	ch, err := e.d.Changes(e.ctx, Request{Table: name, TimeColumn: "ts"})
	if err != nil || len(ch.Changes) != 1 || !ch.Changes[0].All || ch.Changes[0].Reasons[0] != ReasonInitialLoad {
		t.Fatalf("no fromSnapshot: %+v %v", ch.Changes, err)
	}
	ch, err = e.d.Changes(e.ctx, Request{Table: name, FromSnapshot: &cur, TimeColumn: "ts",
		Include: []Change{{Start: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC)}}})
	if err != nil || len(ch.Changes) != 1 || ch.Changes[0].String() != day2 || ch.Changes[0].Reasons[0] != ReasonRequested {
		t.Fatalf("include: %+v %v", ch.Changes, err)
	}
	missing := int64(42)
	for _, tc := range []struct {
		req  Request
		want error
	}{
		{Request{Table: name, FromSnapshot: &missing, TimeColumn: "ts"}, splits.ErrSnapshotNotFound},
		{Request{Table: name, FromSnapshot: &cur, ToSnapshot: &missing, TimeColumn: "ts"}, splits.ErrSnapshotNotFound},
		{Request{Table: name, FromSnapshot: &cur, TimeColumn: "cat"}, fault.ErrBadRequest},
		{Request{Table: name, FromSnapshot: &cur, TimeColumn: "nope"}, fault.ErrBadRequest},
		{Request{Table: name, FromSnapshot: &cur}, fault.ErrBadRequest},
		{Request{Table: "ch.nope", FromSnapshot: &cur, TimeColumn: "ts"}, fault.ErrTableNotFound},
	} {
		if _, err := e.d.Changes(e.ctx, tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.req, err, tc.want)
		}
	}
}

// TestChangesConstantTime: with a constant time (no time column; the
// table's ts is ignored) whatever changed rows changes the one bucket of
// the instant, whichever days the rows' ts lie in, and the bucket's plan
// reads every row of the table; an include is that bucket when it holds
// the instant, and is left alone with a warning when it does not. Under
// granularity ALL the change is ALL. A time column beside the constant,
// or a constant outside the years 1 to 9999, is refused.
func TestChangesConstantTime(t *testing.T) {
	e := newChangesEnv(t)
	h, name := e.history(t, tablegen.HistoryOptions{Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	threeDays(t, e, h)
	first := current(h)
	if err := h.EqualityDelete(e.ctx, false, 3); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	const bucket = "2000-01-01T00:00:00.000Z/2000-01-02T00:00:00.000Z"
	ask := func(req Request) ([]string, Result, error) {
		t.Helper()
		req.Table, req.ConstantTime = name, at
		if req.Granularity == "" {
			req.Granularity = druid.GranularityDay
		}
		ch, err := e.d.Changes(e.ctx, req)
		var out []string
		for _, c := range ch.Changes {
			var rs []string
			for _, r := range c.Reasons {
				rs = append(rs, string(r))
			}
			out = append(out, c.String()+" "+strings.Join(rs, ","))
		}
		return out, ch, err
	}
	inc := func(s string) Change {
		c, err := ParseChangeInterval(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	last := current(h)
	for _, tc := range []struct {
		what string
		req  Request
		want []string
		warn string
	}{
		{"an equality delete on 2024-03-02", Request{FromSnapshot: &first}, []string{bucket + " equality_deletes"}, ""},
		{"an initial load", Request{}, []string{bucket + " initial_load"}, ""},
		{"no change", Request{FromSnapshot: &last}, nil, ""},
		{"an include that holds the instant", Request{FromSnapshot: &last, Include: []Change{inc("2000-01-01T06:00:00Z/2000-01-02")}},
			[]string{bucket + " requested"}, ""},
		{"ALL included", Request{FromSnapshot: &last, Include: []Change{{All: true}}}, []string{bucket + " requested"}, ""},
		{"an include elsewhere", Request{FromSnapshot: &last, Include: []Change{inc("2024-03-02/2024-03-03")}}, nil,
			"include 2024-03-02T00:00:00.000Z/2024-03-03T00:00:00.000Z holds no row"},
		{"granularity ALL", Request{FromSnapshot: &first, Granularity: druid.GranularityAll}, []string{"ALL equality_deletes"}, ""},
	} {
		got, ch, err := ask(tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("%s: changes %q; want %q", tc.what, got, tc.want)
		}
		if w := strings.Join(ch.Warnings, "\n"); tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
			t.Fatalf("%s: warnings %q", tc.what, ch.Warnings)
		}
		if !ch.ConstantTime.Equal(at) || ch.TimeField.Name != "" {
			t.Fatalf("%s: constant %s, time field %q", tc.what, ch.ConstantTime, ch.TimeField.Name)
		}
		if len(ch.Changes) == 0 {
			continue
		}
		// Every file of the target snapshot, although the rows' ts lie
		// outside the bucket.
		p, err := ch.Plan(e.ctx, ch.Changes[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, s := range p.Splits {
			for _, part := range s.Parts {
				files = append(files, part.Data.Path)
			}
		}
		if slices.Sort(files); len(slices.Compact(files)) != 3 {
			t.Fatalf("%s: the change's plan reads %q; want the table's three day files", tc.what, files)
		}
	}
	for _, req := range []Request{{TimeColumn: "ts"}, {}} {
		if req.TimeColumn == "" {
			at = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		if _, _, err := ask(req); !errors.Is(err, fault.ErrBadRequest) {
			t.Fatalf("%+v at %s: %v; want a bad request", req, at, err)
		}
	}
}
