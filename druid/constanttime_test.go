package druid_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
)

// constantSource is dayParts' first source with no time column: its
// columns are served, and every row's __time is at.
func constantSource(base string, at time.Time) druid.Source {
	src := dayParts(base, 1, 2)[0].Source
	src.TimeField, src.ConstantTime = iceberg.NestedField{}, at
	return src
}

// TestConstantTime: a table without a time column is ingested at one
// constant time by both engines (the native timestampSpec's missingValue,
// a TIMESTAMP literal in the statement), and Druid (the model) puts every
// row there; the task's timestamp column is none the table serves, and
// its columns stay columns. A constant outside the years 1 to 9999, or
// outside a REPLACE's interval, is refused before Druid sees it.
func TestConstantTime(t *testing.T) {
	srv := rowServer(t)
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	src := constantSource(srv.URL, at)

	task := druid.Task{DataSource: "ds", SegmentGranularity: druid.GranularityDay, SubTasks: 2}
	spec, err := task.Spec(src)
	if err != nil {
		t.Fatal(err)
	}
	tsSpec := spec["spec"].(map[string]any)["dataSchema"].(map[string]any)["timestampSpec"].(map[string]any)
	if tsSpec["missingValue"] != "2000-01-01T00:00:00.000Z" || tsSpec["column"] == "ts" || tsSpec["column"] == "v" {
		t.Fatalf("timestampSpec %v", tsSpec)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	d := druidsim.New()
	d.Client = srv.Client()
	if err := d.ExecTask(t.Context(), b); err != nil {
		t.Fatalf("Druid refuses the task: %v", err)
	}
	rows := d.Rows("ds")
	if len(rows) != 2 || d.Unparseable() != 0 {
		t.Fatalf("task: %d rows, %d unparseable", len(rows), d.Unparseable())
	}
	for _, r := range rows {
		if r.Time != at.UnixMilli() || r.Columns["ts"] == nil || r.Columns["v"] == nil {
			t.Fatalf("task row %s", r)
		}
	}

	var queries []string
	for _, st := range []druid.Statement{
		{DataSource: "ds", PartitionedBy: druid.GranularityDay},
		{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay},
		{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityMonth, Overwrite: druid.Interval{Start: at, End: at.AddDate(0, 1, 0)}},
	} {
		query, err := st.SQL(src)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(query, `TIMESTAMP '2000-01-01 00:00:00.000' AS "__time"`) {
			t.Fatalf("statement:\n%s", query)
		}
		d := druidsim.New()
		d.Client = srv.Client()
		if err := d.ExecSQL(t.Context(), query, st.Context(src)); err != nil {
			t.Fatalf("Druid refuses the statement: %v\n%s", err, query)
		}
		if rows := d.Rows("ds"); len(rows) != 2 || rows[0].Time != at.UnixMilli() || rows[1].Time != at.UnixMilli() {
			t.Fatalf("statement rows %v", rows)
		}
		queries = append(queries, query)
	}
	sqlcheck.Require(t, queries...)

	outside := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay,
		Overwrite: druid.Interval{Start: at.AddDate(0, 0, 1), End: at.AddDate(0, 0, 2)}}
	if _, err := outside.SQL(src); !errors.Is(err, druid.ErrInvalid) || !strings.Contains(err.Error(), "outside overwrite") {
		t.Fatalf("a constant outside the interval: %v", err)
	}
	for _, bad := range []time.Time{time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		src := constantSource(srv.URL, bad)
		if _, err := (druid.Statement{DataSource: "ds", PartitionedBy: druid.GranularityDay}).SQL(src); !errors.Is(err, druid.ErrInvalid) {
			t.Fatalf("statement at %s: %v", bad, err)
		}
		if _, err := task.Spec(src); !errors.Is(err, druid.ErrInvalid) {
			t.Fatalf("task at %s: %v", bad, err)
		}
	}

	// A table emptied since: the REPLACE (and the task) of nothing over
	// the constant's bucket, or over all time, delete its rows; the
	// stand-in's row, whose time is none of the constant, is dropped.
	day := druid.Interval{Start: at, End: at.AddDate(0, 0, 1)}
	for _, iv := range []druid.Interval{day, {}} {
		empty := src.EmptySource(iv.Start)
		st := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay, Overwrite: iv}
		query, err := st.SQL(empty)
		if err != nil {
			t.Fatalf("a REPLACE of nothing at a constant time over %s: %v", iv, err)
		}
		sqlcheck.Require(t, query)
		d := druidsim.New()
		d.Client = srv.Client()
		for _, q := range []string{queries[0], query} {
			if err := d.ExecSQL(t.Context(), q, st.Context(empty)); err != nil {
				t.Fatalf("Druid refuses the statement: %v\n%s", err, q)
			}
		}
		if rows := d.Rows("ds"); len(rows) != 0 {
			t.Fatalf("after a REPLACE of nothing over %s: rows %v", iv, rows)
		}
	}
	task.Interval = day
	spec, err = task.Spec(src.EmptySource(day.Start))
	if err != nil {
		t.Fatalf("a task of nothing at a constant time: %v", err)
	}
	if b, err = json.Marshal(spec); err != nil {
		t.Fatal(err)
	}
	d = druidsim.New()
	d.Client = srv.Client()
	if err := d.ExecSQL(t.Context(), queries[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := d.ExecTask(t.Context(), b); err != nil {
		t.Fatalf("Druid refuses the task of nothing: %v", err)
	}
	if rows := d.Rows("ds"); len(rows) != 0 {
		t.Fatalf("after a task of nothing: rows %v", rows)
	}
}
