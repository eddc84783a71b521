//go:build druid

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// nestedSpec is one way a native task can declare a nested column, and
// the Druid code that decides what it does.
type nestedSpec struct {
	name string
	// dimension is the column's entry in dimensionsSpec.dimensions.
	dimension func(col string) map[string]any
	// transform, when set, is the expression of a transform of the
	// column (transformSpec), over the generated dimension.
	transform func(col string) string
	// why cites the Druid code that types the column's segments.
	why string
}

// nestedSpecs are every spec Druid 33 offers that could pin a nested
// column's type in every segment. Druid 33's DimensionSchema knows the
// types string, long, float, double, spatial, json and auto; json and
// auto both index through NestedCommonFormatColumnHandler, so all of them
// end in AutoTypeColumnIndexer.getLogicalType and AutoTypeColumnMerger.
var nestedSpecs = []nestedSpec{
	{
		name:      `{"type":"json"}, as generated`,
		dimension: func(col string) map[string]any { return map[string]any{"type": "json", "name": col} },
		why: "NestedDataColumnSchema.getDimensionHandler is NestedCommonFormatColumnHandler with no castToType; " +
			"AutoTypeColumnIndexer.getLogicalType: no object seen and every value null (isConstant, constantValue null) is STRING, " +
			"and AutoTypeColumnMerger writes such a column with ScalarStringColumnSerializer",
	},
	{
		name: `{"type":"json","formatVersion":5}`,
		dimension: func(col string) map[string]any {
			return map[string]any{"type": "json", "name": col, "formatVersion": 5}
		},
		why: "formatVersion 5 is the default: the same handler as without it",
	},
	{
		name: `{"type":"json","formatVersion":4}`,
		dimension: func(col string) map[string]any {
			return map[string]any{"type": "json", "name": col, "formatVersion": 4}
		},
		why: "DefaultColumnFormatConfig.validateNestedFormatVersion logs \"Unsupported nested column format version[4], " +
			"using default version instead\": Druid 33 has no v4 indexer (NestedDataColumnIndexerV4, which typed every segment COMPLEX<json>, is gone)",
	},
	{
		name:      `{"type":"auto"}`,
		dimension: func(col string) map[string]any { return map[string]any{"type": "auto", "name": col} },
		why:       "AutoTypeColumnSchema without castToType: the same indexer and merger",
	},
	{
		name: `{"type":"auto","castToType":"COMPLEX<json>"}`,
		dimension: func(col string) map[string]any {
			return map[string]any{"type": "auto", "name": col, "castToType": "COMPLEX<json>"}
		},
		why: "the AutoTypeColumnIndexer constructor keeps castToType only when it isPrimitive or isPrimitiveArray, " +
			"and AutoTypeColumnMerger's explicitType likewise: COMPLEX<json> is dropped",
	},
	{
		name: `{"type":"auto","castToType":"json"}`,
		dimension: func(col string) map[string]any {
			return map[string]any{"type": "auto", "name": col, "castToType": "json"}
		},
		why: "ColumnType.fromString (Types.fromString) reads \"json\" as no type at all (null): no cast",
	},
	{
		name:      `transformSpec parse_json(to_json_string(col))`,
		dimension: func(col string) map[string]any { return map[string]any{"type": "json", "name": col} },
		transform: func(col string) string { return fmt.Sprintf(`parse_json(to_json_string(%q))`, col) },
		why: "a transform's output is the value alone (Transformer, ExpressionTransform): its expression type does not reach " +
			"the indexer, and null stays null, so AutoTypeColumnIndexer sees the same values",
	},
}

// TestRealDruidNestedTypes: a nested column (struct, maps with string and
// int keys, list of structs, variant) cannot be given one type in every
// segment on this Druid. The all-types table with its all-null day, and
// the v3 table, are ingested through each of nestedSpecs, every other
// column as generated; the test logs each nested column's type in every
// segment and at the Broker, with the Druid code that decides it, and
// fails if a spec pins the column COMPLEX<json> in every segment (then
// the generator must write it: docs/values.md#one-type-in-every-segment
// says none does) or if a segment holding an object is not COMPLEX<json>
// or the Broker's merge is not COMPLEX<json>. The model of Druid runs the
// same tasks and must agree (checkModel).
func TestRealDruidNestedTypes(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	if d.Major < 29 {
		t.Skipf("the all-types table's specs need Druid 29 (docs/druid.md#druid-versions); this is Druid %s", d.Version)
	}
	ctx := context.Background()
	allCat, allDir, _ := allTypesNullDay(t)
	// The v3 table (variants) and a day of one row null in every column
	// but id.
	v3Cat, v3Dir := sidecartest.LocalWarehouse(t)
	v3, err := tablegen.V3Types(ctx, v3Cat, table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := appendNullDay(ctx, v3.Table); err != nil {
		t.Fatal(err)
	}
	v3Rows := append(slices.Clone(v3.Current().Rows), fmt.Sprintf(`{"id":%d,"v":null,"g":null,"gg":null,"u":null,"ts":null}`, nullDay))
	run := fmt.Sprintf("%d", time.Now().Unix())
	for _, tc := range []struct {
		name, table string
		cat         catalog.Catalog
		srv         *sidecartest.Server
		// oracle is the table's live rows, or nil for iceberg-go's scan.
		oracle []string
	}{
		{"all_types", "db.all", allCat, sidecartest.LocalServer(t, allDir), nil},
		// iceberg-go's scan cannot read geometry: the rows the builder wrote.
		{"v3", "db.v3", v3Cat, sidecartest.LocalServer(t, v3Dir), v3Rows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := tc.cat.LoadTable(ctx, table.Identifier(strings.Split(tc.table, ".")))
			if err != nil {
				t.Fatal(err)
			}
			lines := tc.oracle
			if lines == nil {
				if lines, err = tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID); err != nil {
					t.Fatal(err)
				}
			}
			types := druid.Types(tbl.Schema().Fields(), token.Encoding{})
			want := sidecartest.RealExpect(t, lines, "id", types)
			var nested []string
			for _, col := range slices.Sorted(maps.Keys(types)) {
				if types[col] == druid.TypeComplex {
					nested = append(nested, col)
				}
			}
			pinned := 0
			for i, s := range nestedSpecs {
				// One task at a time: the supervisors of several would
				// take every slot and leave none to their subtasks.
				ds := fmt.Sprintf("nested_%s_%d_%s", tc.name, i, run)
				task := withNestedSpec(t, tc.srv.DruidTask(t, sidecartest.Q("table", tc.table, "dataSource", ds, "timestampColumn", "id")), nested, s)
				d.WaitTask(t, d.SubmitTask(t, task))
				state := d.Check(t, ds, want, types)
				all := true
				for _, col := range nested {
					// The column's type in each segment, by interval.
					var found []string
					allNull := false
					for _, iv := range slices.Sorted(maps.Keys(state.Segments)) {
						for _, seg := range state.Segments[iv] {
							found = append(found, iv+" "+seg[col])
							if seg[col] != druid.TypeComplex {
								all = false
							}
							allNull = allNull || seg[col] == druid.TypeString
						}
					}
					if i == 0 && !allNull {
						t.Fatalf("%s: no segment types %s STRING: the table has no segment whose rows are all null in it, nothing to pin", s.name, col)
					}
					t.Logf("%s: %s is %s at the Broker; in its segments: %s", s.name, col, state.Types[col], strings.Join(found, ", "))
				}
				t.Logf("%s: %s", s.name, s.why)
				if all {
					pinned++
					t.Errorf("%s types every segment of every nested column %s COMPLEX<json>: the generator is to write it (ColumnOf), "+
						"and docs/values.md#one-type-in-every-segment to say so", s.name, druid.TypeComplex)
				}
				if s.transform != nil {
					// The model runs no transform (it refuses a transformSpec).
					continue
				}
				d.CheckModel(t, ds, state, func(m *druidsim.Druid) error { return m.ExecTask(ctx, task) })
			}
			t.Logf("%d of %d specs pin the nested columns %q in every segment", pinned, len(nestedSpecs), nested)
		})
	}
}

// withNestedSpec is the generated task with the nested columns declared
// as s declares them.
func withNestedSpec(t testing.TB, task []byte, nested []string, s nestedSpec) []byte {
	t.Helper()
	var spec map[string]any
	if err := json.Unmarshal(task, &spec); err != nil {
		t.Fatal(err)
	}
	schema := spec["spec"].(map[string]any)["dataSchema"].(map[string]any)
	dims := schema["dimensionsSpec"].(map[string]any)["dimensions"].([]any)
	var transforms []any
	for i, dim := range dims {
		obj, _ := dim.(map[string]any)
		col, _ := obj["name"].(string)
		if !slices.Contains(nested, col) {
			continue
		}
		dims[i] = s.dimension(col)
		if s.transform != nil {
			transforms = append(transforms, map[string]any{"type": "expression", "name": col, "expression": s.transform(col)})
		}
	}
	if transforms != nil {
		schema["transformSpec"] = map[string]any{"transforms": transforms}
	}
	out, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
