//go:build druid

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestRealDruid: what /druid/task and /druid/sql write for each table,
// unedited, submitted to a real Druid (tools/druid/druid.sh start; the
// DRUID_OVERLORD and DRUID_BROKER it prints), succeeds; the datasource then
// holds the table's live rows (iceberg-go's oracle), value by value; every
// column has the Druid type of the docs' table in every segment (but the
// segments of nested data that hold no object, which docs/values.md says
// Druid types by what they hold) and in the Broker's merge; and the model
// of Druid (internal/druidsim), given the same task or statement, holds
// what Druid holds (checkModel). Each run writes datasources of its own
// names, so a cluster serves many runs.
func TestRealDruid(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	demoSrv := sidecartest.LocalServer(t, dir)
	allCat, allDir, _ := allTypesNullDay(t)
	allSrv := sidecartest.LocalServer(t, allDir)
	// v3: variants shredded and not, geometry, geography, unknown,
	// timestamp_ns, and deletion vectors.
	v3Cat, v3Dir := sidecartest.LocalWarehouse(t)
	v3, err := tablegen.V3Types(ctx, v3Cat, table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	v3Srv := sidecartest.LocalServer(t, v3Dir)
	tnCat, tnDir := sidecartest.LocalWarehouse(t)
	if err := timeNamedTable(ctx, tnCat); err != nil {
		t.Fatal(err)
	}
	tnSrv := sidecartest.LocalServer(t, tnDir)
	run := fmt.Sprintf("%d", time.Now().Unix())
	for _, tc := range []struct {
		name, table, timeColumn string
		srv                     *sidecartest.Server
		extra                   url.Values
		// minVersion is the Druid release that docs/druid.md's version
		// table says the table's specs need.
		minVersion int
	}{
		{"orders", "demo.orders", "order_ts", demoSrv, nil, 0},
		// customers has no delete file, so mode=auto serves raw Parquet,
		// which a Druid without the Parquet extension cannot read.
		{"customers_rows", "demo.customers", "signup_date", demoSrv, sidecartest.Q("mode", "rows"), 0},
		// DAY segments, the default. castToType and MSQ's ARRAY columns
		// need Druid 29 and 28.
		{"all_types", "db.all", "id", allSrv, nil, 29},
		{"v3", "db.v3", "id", v3Srv, nil, 0},
		// A table exported from Druid: its time column is named __time.
		// No delete file: the row path, as for customers.
		{"time_named", "db.t", "__time", tnSrv, sidecartest.Q("mode", "rows"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d.Major < tc.minVersion {
				t.Skipf("its specs need Druid %d (docs/druid.md#druid-versions); this is Druid %s", tc.minVersion, d.Version)
			}
			c := map[*sidecartest.Server]catalog.Catalog{demoSrv: cat, allSrv: allCat, v3Srv: v3Cat, tnSrv: tnCat}[tc.srv]
			tbl, err := c.LoadTable(ctx, table.Identifier(strings.Split(tc.table, ".")))
			if err != nil {
				t.Fatal(err)
			}
			// iceberg-go's scan cannot read geometry, so for v3 the oracle
			// is the rows the builder wrote.
			lines := v3.Current().Rows
			if tc.srv != v3Srv {
				if lines, err = tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID); err != nil {
					t.Fatal(err)
				}
			}
			types := druid.Types(tbl.Schema().Fields(), token.Encoding{})
			want := sidecartest.RealExpect(t, lines, tc.timeColumn, types)
			params := func(ds string) url.Values {
				v := sidecartest.Q("table", tc.table, "dataSource", ds, "timestampColumn", tc.timeColumn)
				for k, vs := range tc.extra {
					v[k] = vs
				}
				return v
			}
			t.Run("task", func(t *testing.T) {
				ds := "real_" + tc.name + "_task_" + run
				task := tc.srv.DruidTask(t, params(ds))
				id := d.SubmitTask(t, task)
				d.WaitTask(t, id)
				d.CheckModel(t, ds, d.Check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecTask(ctx, task) })
			})
			t.Run("sql", func(t *testing.T) {
				ds := "real_" + tc.name + "_sql_" + run
				st := tc.srv.DruidSQL(t, params(ds))
				id, ok := d.SubmitSQL(t, st)
				if !ok {
					t.Skip("this Druid has no SQL-based ingestion (the Broker answers POST /druid/v2/sql/task with 405)")
				}
				d.WaitTask(t, id)
				d.CheckModel(t, ds, d.Check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecSQL(ctx, st.Query, st.Context) })
			})
			t.Run("sql_replace", func(t *testing.T) {
				ds := "real_" + tc.name + "_replace_" + run
				v := params(ds)
				v.Set("statement", "replace")
				st := tc.srv.DruidSQL(t, v)
				id, ok := d.SubmitSQL(t, st)
				if !ok {
					t.Skip("this Druid has no SQL-based ingestion (the Broker answers POST /druid/v2/sql/task with 405)")
				}
				d.WaitTask(t, id)
				d.CheckModel(t, ds, d.Check(t, ds, want, types), func(m *druidsim.Druid) error { return m.ExecSQL(ctx, st.Query, st.Context) })
			})
		})
	}
}

// TestRealDruidFixtures: every engine-written table of testdata/fixtures
// through /druid/task and /druid/sql with constantTime, the path of a table
// without a time column: Druid ingests every live row at that one time,
// and holds the rows the sidecar serves (which TestFixtures holds to each
// fixture's expected.json) in the types of the docs' table.
func TestRealDruidFixtures(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	ctx := context.Background()
	run := fmt.Sprintf("%d", time.Now().Unix())
	const at = "2000-01-01T00:00:00Z"
	atMillis := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i, f := range sidecartest.LoadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			srv := f.Server(t)
			resp, body := srv.Get(t, "/splits?"+sidecartest.Q("table", "fixtures.t", "mode", "rows").Encode())
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /splits: %d %s", resp.StatusCode, body)
			}
			var p struct {
				Columns []struct{ Name, DruidType string } `json:"columns"`
			}
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			types := make(map[string]string, len(p.Columns))
			for _, c := range p.Columns {
				types[c.Name] = c.DruidType
			}
			want := constantExpect(t, srv.Rows(t, srv.Plan(t, sidecartest.Q("table", "fixtures.t", "mode", "rows"))), atMillis, types)
			params := func(ds string) url.Values {
				return sidecartest.Q("table", "fixtures.t", "dataSource", ds, "constantTime", at)
			}
			t.Run("task", func(t *testing.T) {
				ds := fmt.Sprintf("real_fixture%d_task_%s", i, run)
				task := srv.DruidTask(t, params(ds))
				d.WaitTask(t, d.SubmitTask(t, task))
				d.CheckMaybeEmpty(t, ds, want, types, func(m *druidsim.Druid) error { return m.ExecTask(ctx, task) })
			})
			t.Run("sql", func(t *testing.T) {
				ds := fmt.Sprintf("real_fixture%d_sql_%s", i, run)
				st := srv.DruidSQL(t, params(ds))
				id, ok := d.SubmitSQL(t, st)
				if !ok {
					t.Skip("this Druid has no SQL-based ingestion (the Broker answers POST /druid/v2/sql/task with 405)")
				}
				if len(want) == 0 && d.Major < 29 {
					// docs/druid.md#druid-versions: before Druid 29 a
					// statement that reads nothing fails.
					if code, msg := d.TaskEnd(t, id); code != "FAILED" || !strings.Contains(msg, "InsertCannotBeEmpty") {
						t.Fatalf("a statement of no rows on Druid %s: %s %s, want FAILED with InsertCannotBeEmpty", d.Version, code, msg)
					}
					m := d.Model()
					if err := m.ExecSQL(ctx, st.Query, st.Context); err == nil || !strings.Contains(err.Error(), "InsertCannotBeEmpty") {
						t.Errorf("Druid %s fails a statement of no rows with InsertCannotBeEmpty; the model: %v", d.Version, err)
					}
					return
				}
				d.WaitTask(t, id)
				d.CheckMaybeEmpty(t, ds, want, types, func(m *druidsim.Druid) error { return m.ExecSQL(ctx, st.Query, st.Context) })
			})
		})
	}
}

// constantExpect is druidExpect for rows that all get the time millis.
func constantExpect(t testing.TB, lines []string, millis int64, types map[string]string) []string {
	t.Helper()
	const key = "__sidecar_test_time"
	timed := make([]string, len(lines))
	for i, l := range lines {
		sep := ","
		if strings.TrimSpace(l) == "{}" {
			sep = ""
		}
		timed[i] = fmt.Sprintf(`{"%s":%d%s`, key, millis, sep) + strings.TrimPrefix(l, "{")
	}
	rows, err := druidsim.Expect(timed, key, types)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		delete(r.Columns, key)
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// timeNamedTable writes db.t, whose time column is named __time, as in a
// table exported from Druid: three rows, one without a time (which Druid
// does not ingest), with microseconds that Druid truncates.
func timeNamedTable(ctx context.Context, cat catalog.Catalog) error {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "__time", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String})
	tbl, err := icewrite.CreateTable(ctx, cat, table.Identifier{"db", "t"}, sc, 2)
	if err != nil {
		return err
	}
	asc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for i, us := range []int64{1_709_284_500_000_000, 1_709_390_832_123_456, -1} {
		if us < 0 {
			rb.Field(0).AppendNull()
		} else {
			rb.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(us))
		}
		rb.Field(1).(*array.Int64Builder).Append(int64(i + 1))
		rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i+1))
	}
	batch := rb.NewRecordBatch()
	defer batch.Release()
	_, _, err = icewrite.AppendBatch(ctx, tbl, 1, batch)
	return err
}
