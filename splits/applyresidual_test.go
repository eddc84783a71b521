package splits_test

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// scenarioTable is the tablegen scenario name as scenarios.<name> in a
// local warehouse of its own, built once per run of the package and shared,
// read-only.
func scenarioTable(t *testing.T, sc tablegen.Scenario) (*table.Table, string) {
	t.Helper()
	return splits.ReadOnlyTable(t, "scenario-"+sc.Name, func(ctx context.Context, cat icecatalog.Catalog) (*table.Table, error) {
		return sc.Build(ctx, cat, table.Identifier{"scenarios", sc.Name})
	})
}

// TestApplyResidual plans iceberg-go-written tables with an icebergFilter
// on columns that are not partition columns, so every file keeps a
// residual, and reads the plans' splits. With ApplyResidual every emitted
// row matches the filter and the rows are the oracle's rows that match it;
// without it the planned files' rows that do not match come through too, as
// Druid's own iceberg input source gives them.
func TestApplyResidual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	filters := []struct {
		name  string
		druid string
		// match is the same condition in Go, on a decoded row.
		match func(row map[string]any) bool
		// scanPanics marks filters that iceberg-go's own filtered scan
		// cannot run (its Arrow decimal comparison panics once the
		// comparison is guarded with not_null), so the cross-check with it
		// is left out for them; the Go condition still decides.
		scanPanics bool
	}{
		{
			name:  "closed range on int",
			druid: `{"type":"range","filterColumn":"qty","lower":10,"upper":60}`,
			match: func(r map[string]any) bool {
				q, ok := number(r["qty"])
				return ok && q.Cmp(big.NewRat(10, 1)) >= 0 && q.Cmp(big.NewRat(60, 1)) <= 0
			},
		},
		{
			name: "or of string equals and open decimal range",
			druid: `{"type":"or","filters":[{"type":"equals","filterColumn":"name","filterValue":"carol"},` +
				`{"type":"range","filterColumn":"price","lower":"-4000.00","lowerOpen":true}]}`,
			match: func(r map[string]any) bool {
				p, ok := number(r["price"])
				return r["name"] == "carol" || ok && p.Cmp(big.NewRat(-4000, 1)) > 0
			},
			scanPanics: true,
		},
		{
			name:  "interval on timestamptz",
			druid: `{"type":"interval","filterColumn":"ts_tz","intervals":["2023-10-01T00:00:00Z/2023-11-10T00:00:00Z"]}`,
			match: func(r map[string]any) bool {
				ms, ok := number(r["ts_tz"])
				lo := big.NewRat(time.Date(2023, 10, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), 1)
				hi := big.NewRat(time.Date(2023, 11, 10, 0, 0, 0, 0, time.UTC).UnixMilli(), 1)
				return ok && ms.Cmp(lo) >= 0 && ms.Cmp(hi) < 0
			},
		},
		{
			// A null matches no comparison, also under not: SQL's rule,
			// not the nulls-first order of iceberg-go's row evaluator.
			name:  "upper bound only, nulls excluded",
			druid: `{"type":"range","filterColumn":"qty","upper":40}`,
			match: func(r map[string]any) bool {
				q, ok := number(r["qty"])
				return ok && q.Cmp(big.NewRat(40, 1)) <= 0
			},
		},
		{
			name:  "not equals, nulls excluded",
			druid: `{"type":"not","filter":{"type":"equals","filterColumn":"name","filterValue":"carol"}}`,
			match: func(r map[string]any) bool {
				n, ok := r["name"].(string)
				return ok && n != "carol"
			},
		},
	}
	scenarios := map[string]bool{"no_deletes": true, "positional_and_equality": true, "deletion_vector_v3": true}
	for _, sc := range tablegen.Scenarios() {
		if !scenarios[sc.Name] {
			continue
		}
		tbl, dir := scenarioTable(t, sc)
		r := localReplica(t, dir)
		name := "scenarios." + sc.Name
		oracle, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range filters {
			t.Run(sc.Name+"/"+f.name, func(t *testing.T) {
				var want, rejected []string
				for _, row := range oracle {
					if f.match(decodeRow(t, row)) {
						want = append(want, row)
					} else {
						rejected = append(rejected, row)
					}
				}
				if len(want) == 0 || len(rejected) == 0 {
					t.Fatalf("the filter keeps %d and drops %d of the oracle's rows; it must tell rows apart", len(want), len(rejected))
				}
				// The Go condition and iceberg-go's own scan with the same
				// filter agree on which rows match.
				if !f.scanPanics {
					if got, wantIDs := icebergFilteredIDs(t, tbl, f.druid), rowIDs(t, want); !slices.Equal(got, wantIDs) {
						t.Fatalf("iceberg-go's filtered scan gives ids %v, the Go condition %v", got, wantIDs)
					}
				}

				p := r.Plan(t, splits.Request{Table: name, Filter: parseFilter(t, f.druid), ApplyResidual: true})
				if p.Path != splits.PathRows {
					t.Fatalf("applyResidual planned %s, want v2", p.Path)
				}
				got := r.Rows(t, p)
				for _, row := range got {
					if !f.match(decodeRow(t, row)) {
						t.Errorf("row %s does not match %s", row, f.druid)
					}
				}
				servetest.SameRows(t, got, want)

				// Without applyResidual the planned files' rows come whole.
				p = r.Plan(t, splits.Request{Table: name, Filter: parseFilter(t, f.druid), Mode: splits.ModeRows})
				all := r.Rows(t, p)
				var matching, other []string
				for _, row := range all {
					if f.match(decodeRow(t, row)) {
						matching = append(matching, row)
					} else {
						other = append(other, row)
					}
				}
				if len(other) == 0 {
					t.Fatalf("without applyResidual no row outside the filter came through (%d rows)", len(all))
				}
				servetest.SameRows(t, matching, want)
				if missing := notIn(t, other, rejected); len(missing) > 0 {
					t.Fatalf("rows that are no live rows of the table: %v", missing)
				}
			})
		}
	}
}

// parseFilter reads a Druid icebergFilter as the routes do.
func parseFilter(t testing.TB, filter string) *druid.Filter {
	t.Helper()
	if err := druid.CheckFilterBounds([]byte(filter)); err != nil {
		t.Fatal(err)
	}
	var f druid.Filter
	if err := json.Unmarshal([]byte(filter), &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// icebergFilteredIDs scans tbl with iceberg-go alone, with the Druid filter
// converted as the planner converts it, and returns the ids of the rows.
func icebergFilteredIDs(t *testing.T, tbl *table.Table, filter string) []int64 {
	t.Helper()
	ctx := context.Background()
	e, err := parseFilter(t, filter).Expression(tbl.Schema(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	scan := tbl.Scan(table.WithRowFilter(e), table.WithSelectedFields("id"))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc, records, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	col := sc.FieldIndices("id")
	if len(col) != 1 {
		t.Fatalf("iceberg-go's scan has no id column: %s", sc)
	}
	ids := []int64{}
	for rec, err := range records {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Column(col[0]).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

func rowIDs(t *testing.T, rows []string) []int64 {
	t.Helper()
	ids := []int64{}
	for _, row := range rows {
		id, ok := number(decodeRow(t, row)["id"])
		if !ok || !id.IsInt() {
			t.Fatalf("row %s has no integer id", row)
		}
		ids = append(ids, id.Num().Int64())
	}
	slices.Sort(ids)
	return ids
}

// notIn returns the rows of got that are not in want, compared as values.
func notIn(t *testing.T, got, want []string) []string {
	t.Helper()
	w := servetest.Canonical(t, want)
	var out []string
	for _, g := range got {
		if !slices.Contains(w, servetest.Canonical(t, []string{g})[0]) {
			out = append(out, g)
		}
	}
	return out
}

func decodeRow(t *testing.T, row string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(row))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("row %q: %v", row, err)
	}
	return m
}

// number reads a JSON number or a decimal string exactly; null is not one.
func number(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return nil, false
	}
	return new(big.Rat).SetString(s)
}
