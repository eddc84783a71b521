package e2e_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestDruidSegmentTypes: the all-types table and a day of one row null in
// every column but id, by DAY, through /druid/sql and /druid/task: Druid
// types each DAY segment from its own rows, and every column keeps the
// type of the docs' table in every segment on both engines (castToType
// pins booleans and lists of scalars, which Druid 28 leaves to the rows of
// each day). Nested data cannot be pinned (castToType takes
// primitive types only): a segment without an object in a struct, map or
// list-of-structs column is typed by what it holds (STRING when all null,
// ARRAY<LONG> for only empty lists), and the Broker's merge still gives
// COMPLEX<json>, which wins over both.
func TestDruidSegmentTypes(t *testing.T) {
	ctx := context.Background()
	_, dir, tbl := allTypesNullDay(t)
	wantTypes := druid.Types(tbl.Schema().Fields(), token.Encoding{})
	srv := sidecartest.LocalServer(t, dir)
	base := sidecartest.Q("table", "db.all", "dataSource", "ds", "timestampColumn", "id")
	sql := srv.DruidSQL(t, with(base, "statement", "replace", "partitionedBy", "day"))
	if !strings.Contains(strings.Join(sql.Warnings, " "), `"lst", "lst_st" hold lists: Druid before 26.0 drops the nulls`) {
		t.Errorf("warnings %q: want the one of lists before Druid 26", sql.Warnings)
	}
	ch := srv.Changes(t, sidecartest.Q("table", "db.all", "timeColumn", "id", "dataSource", "ds"))
	if !strings.Contains(strings.Join(ch.Warnings, " "), `"lst", "lst_st" hold lists`) {
		t.Errorf("/changes warnings %q: want the one of lists before Druid 26", ch.Warnings)
	}
	if sql.Context["arrayIngestMode"] != "array" {
		t.Errorf("context %v: want arrayIngestMode array", sql.Context)
	}
	spec := srv.DruidTask(t, with(base, "segmentGranularity", "day"))
	for engine, exec := range map[string]func(d *druidsim.Druid) error{
		"MSQ":    func(d *druidsim.Druid) error { return d.ExecSQL(ctx, sql.Query, sql.Context) },
		"native": func(d *druidsim.Druid) error { return d.ExecTask(ctx, spec) },
	} {
		t.Run(engine, func(t *testing.T) {
			d := druidsim.New()
			d.Client = srv.Client()
			if err := exec(d); err != nil {
				t.Fatalf("Druid refuses it: %v", err)
			}
			segments := d.Segments("ds")
			if len(segments) != 2 {
				t.Fatalf("%d segments, want the 2 days of id", len(segments))
			}
			broker := d.Types("ds")
			for col, want := range wantTypes {
				if got := broker[col]; got != want {
					t.Errorf("the Broker types %s as %s, want %s", col, got, want)
				}
				for _, s := range segments {
					got := s.Types[col]
					if got == want || want == druid.TypeComplex && (got == "STRING" || got == "ARRAY<LONG>") {
						continue
					}
					t.Errorf("segment %s types %s as %s, want %s", s.Interval, col, got, want)
				}
			}
		})
	}

	// Before castToType (Druid 28) the same task leaves booleans and
	// lists to the values of each day.
	d := druidsim.New()
	d.Client, d.Version = srv.Client(), 28
	if err := d.ExecTask(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if got := d.Types("ds"); got["b"] != "STRING" || got["lst"] != "ARRAY<STRING>" {
		t.Errorf("Druid 28 types b %s, lst %s: want STRING and ARRAY<STRING>, the Broker's merge with the null day's STRING",
			got["b"], got["lst"])
	}
}

// allTypesNullDay writes the all-types table db.all into a warehouse of
// its own, with a day whose one row is null in every column but id
// (appendNullDay): by DAY, a segment of its own whose rows are all null.
func allTypesNullDay(t *testing.T) (*hadoop.Catalog, string, *table.Table) {
	t.Helper()
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	if _, err := tablegen.AllTypes(ctx, cat, table.Identifier{"db", "all"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "all"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = appendNullDay(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	return cat, dir, tbl
}

// nullDay is the epoch millisecond of the appended row: day 5.
const nullDay = 5 * 86_400_000

// appendNullDay appends to a table whose first column is id long (the
// all-types and v3 tables) a row on day 5 that is null in every column but
// id, as a data file numbered above the tables' own (icewrite names a data
// file by its number).
func appendNullDay(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	rb.Field(0).(*array.Int64Builder).Append(nullDay)
	for i := 1; i < sc.NumFields(); i++ {
		rb.Field(i).AppendNull()
	}
	batch := rb.NewRecordBatch()
	defer batch.Release()
	tbl, _, err = icewrite.AppendBatch(ctx, tbl, 1000, batch)
	return tbl, err
}

// with is base with the parameters kv set.
func with(base map[string][]string, kv ...string) map[string][]string {
	v := make(map[string][]string, len(base)+len(kv)/2)
	for k, vs := range base {
		v[k] = vs
	}
	for i := 0; i+1 < len(kv); i += 2 {
		v[kv[i]] = []string{kv[i+1]}
	}
	return v
}
