package druid_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
)

// partitionSource is the first of dayParts' sources (columns ts and v,
// one row) with a list and a struct column beside them.
func partitionSource(base string) druid.Source {
	src := dayParts(base, 1, 2)[0].Source
	src.Fields = append(src.Fields,
		iceberg.NestedField{ID: 3, Name: "l", Type: &iceberg.ListType{ElementID: 5, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 4, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "a", Type: iceberg.PrimitiveTypes.Int32}}}})
	return src
}

// TestPartitioningRefused: partitionings Druid refuses, and columns it
// cannot partition by, are refused before Druid sees them, with the
// reason.
func TestPartitioningRefused(t *testing.T) {
	src := partitionSource("http://sidecar")
	for _, tc := range []struct {
		name string
		p    druid.Partitioning
		want string
		sql  bool // the statement refuses it too
	}{
		{"an unknown type", druid.Partitioning{Native: "single_dim"}, "want dynamic, range or hashed", false},
		{"range without columns", druid.Partitioning{Native: "range"}, "range needs clusteredBy", false},
		{"range with both sizes", druid.Partitioning{Native: "range", ClusteredBy: []string{"v"}, TargetRows: 10, MaxRows: 20},
			"not both", false},
		{"range with numShards", druid.Partitioning{Native: "range", ClusteredBy: []string{"v"}, NumShards: 2}, "numShards goes with", false},
		{"hashed with numShards and a target", druid.Partitioning{Native: "hashed", NumShards: 2, TargetRows: 10}, "not both", false},
		{"dynamic with numShards", druid.Partitioning{NumShards: 2}, "go with partitionsSpec range or hashed", false},
		{"a column not served", druid.Partitioning{Native: "range", ClusteredBy: []string{"w"}}, `"w" is not a column the plan serves`, true},
		{"a column twice", druid.Partitioning{Native: "hashed", ClusteredBy: []string{"v", "v"}}, "twice", true},
		{"a list", druid.Partitioning{Native: "range", ClusteredBy: []string{"l"}}, "one scalar per row", true},
		{"a struct", druid.Partitioning{Native: "hashed", ClusteredBy: []string{"s"}}, "one scalar per row", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := druid.Task{DataSource: "ds", SegmentGranularity: druid.GranularityDay, SubTasks: 2, Partitioning: tc.p}
			if _, err := task.Spec(src); !errors.Is(err, druid.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("task: %v; want ErrInvalid naming %q", err, tc.want)
			}
			st := druid.Statement{DataSource: "ds", PartitionedBy: druid.GranularityDay, ClusteredBy: tc.p.ClusteredBy}
			_, err := st.SQL(src)
			if tc.sql && (!errors.Is(err, druid.ErrInvalid) || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("statement: %v; want ErrInvalid naming %q", err, tc.want)
			}
			if !tc.sql && err != nil {
				t.Fatalf("statement: %v; the native parameters are not its", err)
			}
		})
	}
}

// TestPartitioningInDruid: every partitioning the generators write is
// one Druid (the model) runs, through both engines, and the rows arrive;
// the same task without forceGuaranteedRollup is one Druid refuses, so
// the generator's flag is what makes it run. Clustered statements parse
// in Druid's web-console parser.
func TestPartitioningInDruid(t *testing.T) {
	srv := rowServer(t)
	src := dayParts(srv.URL, 1, 2)[0].Source
	var queries []string
	for _, p := range []druid.Partitioning{
		{},
		{MaxRows: 1000},
		{Native: "range", ClusteredBy: []string{"v"}},
		{Native: "range", ClusteredBy: []string{"v", "ts"}, MaxRows: 1000},
		{Native: "hashed"},
		{Native: "hashed", ClusteredBy: []string{"v"}, NumShards: 3},
		{Native: "hashed", ClusteredBy: []string{"v"}, TargetRows: 1000},
	} {
		task := druid.Task{DataSource: "ds", SegmentGranularity: druid.GranularityDay, SubTasks: 2, Partitioning: p}
		spec, err := task.Spec(src)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		d := druidsim.New()
		d.Client = srv.Client()
		if err := d.ExecTask(t.Context(), b); err != nil {
			t.Fatalf("%+v: Druid refuses the task: %v\n%s", p, err, b)
		}
		if n := len(d.Rows("ds")); n != 2 {
			t.Fatalf("%+v: %d rows, want 2", p, n)
		}
		tuning := spec["spec"].(map[string]any)["tuningConfig"].(map[string]any)
		if p.Native == "" {
			if _, ok := tuning["forceGuaranteedRollup"]; ok {
				t.Fatalf("%+v: a dynamic partitionsSpec with forceGuaranteedRollup: %v", p, tuning)
			}
		} else {
			delete(tuning, "forceGuaranteedRollup")
			b, _ := json.Marshal(spec)
			if err := druidsim.New().ExecTask(t.Context(), b); err == nil || !strings.Contains(err.Error(), "best-effort rollup") {
				t.Fatalf("%+v without forceGuaranteedRollup: %v, want Druid's refusal", p, err)
			}
		}

		st := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay, ClusteredBy: p.ClusteredBy}
		query, err := st.SQL(src)
		if err != nil {
			t.Fatal(err)
		}
		d = druidsim.New()
		d.Client = srv.Client()
		if err := d.ExecSQL(t.Context(), query, st.Context(src)); err != nil {
			t.Fatalf("%+v: Druid refuses the statement: %v\n%s", p, err, query)
		}
		if n := len(d.Rows("ds")); n != 2 {
			t.Fatalf("%+v: %d rows, want 2", p, n)
		}
		if len(p.ClusteredBy) > 0 {
			if !strings.Contains(query, "\nCLUSTERED BY ") {
				t.Fatalf("no CLUSTERED BY in\n%s", query)
			}
			queries = append(queries, query)
		}
	}
	sqlcheck.Require(t, queries...)
}
