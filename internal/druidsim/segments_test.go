package druidsim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// segmentRows are three DAY chunks of one column c: day 1 holds values,
// day 2 only empty lists where c is a list, day 3 only nulls.
func segmentRows(day1Value, day2Value string) []string {
	return []string{
		fmt.Sprintf(`{"t":%d,"c":%s}`, day1, day1Value),
		fmt.Sprintf(`{"t":%d,"c":%s}`, day2, day2Value),
		fmt.Sprintf(`{"t":%d,"c":null}`, day3),
	}
}

// taskOver is an index_parallel task over inline rows, by DAY, with the
// time column t and the one dimension c.
func taskOver(t *testing.T, dim map[string]any, rows []string) []byte {
	t.Helper()
	dim["name"] = "c"
	spec, err := json.Marshal(map[string]any{"type": "index_parallel", "spec": map[string]any{
		"dataSchema": map[string]any{
			"dataSource":      "ds",
			"timestampSpec":   map[string]any{"column": "t", "format": "millis"},
			"dimensionsSpec":  map[string]any{"dimensions": []any{dim}},
			"granularitySpec": map[string]any{"segmentGranularity": "DAY"},
		},
		"ioConfig": map[string]any{"type": "index_parallel", "inputSource": json.RawMessage(inline(rows...)),
			"inputFormat": map[string]any{"type": "json"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// segmentTypesOf lists the type of c in each segment, in time order.
func segmentTypesOf(d *Druid) string {
	var out []string
	for _, s := range d.Segments("ds") {
		out = append(out, s.Types["c"])
	}
	return strings.Join(out, " ")
}

// TestSegmentTypes: a column is typed segment by segment, as Druid's
// incremental index (one per DAY chunk) and AutoTypeColumnMerger type it,
// and the Broker merges the segments' types (ColumnType
// .leastRestrictiveType); castToType (Druid 29) pins an auto column.
func TestSegmentTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		version  int
		dim      map[string]any
		rows     []string
		segments string // c's type in each DAY segment
		broker   string // c's type as the Broker merges it
	}{
		{"auto boolean: all null is STRING, and the Broker reads VARCHAR", 0, map[string]any{"type": "auto"},
			segmentRows("true", "false"), "LONG LONG STRING", "STRING"},
		{"auto boolean cast to LONG", 0, map[string]any{"type": "auto", "castToType": "LONG"},
			segmentRows("true", "false"), "LONG LONG LONG", "LONG"},
		{"castToType before Druid 29 is ignored", 28, map[string]any{"type": "auto", "castToType": "LONG"},
			segmentRows("true", "false"), "LONG LONG STRING", "STRING"},
		{"auto list: empty lists are ARRAY<LONG>, all null STRING", 0, map[string]any{"type": "auto"},
			segmentRows(`["a",null]`, "[]"), "ARRAY<STRING> ARRAY<LONG> STRING", "ARRAY<STRING>"},
		{"a list of longs reads as ARRAY<STRING> beside an all-null segment", 0, map[string]any{"type": "auto"},
			segmentRows(`[1,null,3]`, "[]"), "ARRAY<LONG> ARRAY<LONG> STRING", "ARRAY<STRING>"},
		{"auto list cast to ARRAY<LONG>", 0, map[string]any{"type": "auto", "castToType": "ARRAY<LONG>"},
			segmentRows(`[1,null,3]`, "[]"), "ARRAY<LONG> ARRAY<LONG> ARRAY<LONG>", "ARRAY<LONG>"},
		{"json from Druid 28 is the auto indexer", 28, map[string]any{"type": "json"},
			segmentRows(`[1.5,2]`, "[]"), "ARRAY<DOUBLE> ARRAY<LONG> STRING", "ARRAY<STRING>"},
		{"json before Druid 28 is always COMPLEX<json>", 27, map[string]any{"type": "json"},
			segmentRows(`[1.5,2]`, "[]"), "COMPLEX<json> COMPLEX<json> COMPLEX<json>", "COMPLEX<json>"},
		{"a struct cannot be pinned, but COMPLEX<json> wins the Broker's merge", 0, map[string]any{"type": "json"},
			segmentRows(`{"a":1}`, `{}`), "COMPLEX<json> COMPLEX<json> STRING", "COMPLEX<json>"},
		{"a nested cast is no cast", 0, map[string]any{"type": "auto", "castToType": "COMPLEX<json>"},
			segmentRows(`{"a":1}`, `{"a":null}`), "COMPLEX<json> COMPLEX<json> STRING", "COMPLEX<json>"},
		{"castToType json names no type (Types.fromString): no cast", 0, map[string]any{"type": "auto", "castToType": "json"},
			segmentRows(`{"a":1}`, `{"a":null}`), "COMPLEX<json> COMPLEX<json> STRING", "COMPLEX<json>"},
		{"castToType's plain names in any case, and their _ARRAY forms", 0, map[string]any{"type": "auto", "castToType": "long_array"},
			segmentRows(`[1,null,3]`, "[]"), "ARRAY<LONG> ARRAY<LONG> ARRAY<LONG>", "ARRAY<LONG>"},
		{"castToType ARRAY<FLOAT> is ARRAY<DOUBLE>", 0, map[string]any{"type": "auto", "castToType": "ARRAY<FLOAT>"},
			segmentRows(`[1.5]`, "[]"), "ARRAY<DOUBLE> ARRAY<DOUBLE> ARRAY<DOUBLE>", "ARRAY<DOUBLE>"},
		{"castToType of an array of nested data is no cast", 0, map[string]any{"type": "auto", "castToType": "ARRAY<COMPLEX<json>>"},
			segmentRows(`[{"a":1}]`, "[]"), "COMPLEX<json> ARRAY<LONG> STRING", "COMPLEX<json>"},
		{"an empty map of non-string keys is an empty list", 0, map[string]any{"type": "json"},
			segmentRows(`[{"key":1,"value":"x"}]`, "[]"), "COMPLEX<json> ARRAY<LONG> STRING", "COMPLEX<json>"},
		{"mixed scalars are their least restrictive type", 0, map[string]any{"type": "auto"},
			[]string{fmt.Sprintf(`{"t":%d,"c":1}`, day1), fmt.Sprintf(`{"t":%d,"c":"x"}`, day1), fmt.Sprintf(`{"t":%d,"c":2.5}`, day2)},
			"STRING DOUBLE", "STRING"},
		{"typed dimensions keep their type", 0, map[string]any{"type": "long"},
			segmentRows("1", "2"), "LONG LONG LONG", "LONG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New()
			d.Version = tc.version
			if err := d.ExecTask(ctx, taskOver(t, tc.dim, tc.rows)); err != nil {
				t.Fatal(err)
			}
			if got := segmentTypesOf(d); got != tc.segments {
				t.Errorf("segments type c as %s, want %s", got, tc.segments)
			}
			if got := d.Types("ds")["c"]; got != tc.broker {
				t.Errorf("the Broker types c as %s, want %s", got, tc.broker)
			}
		})
	}

	t.Run("cast values", func(t *testing.T) {
		d := New()
		rows := []string{fmt.Sprintf(`{"t":%d,"c":["1.5","x",true,2]}`, day1)}
		if err := d.ExecTask(ctx, taskOver(t, map[string]any{"type": "auto", "castToType": "ARRAY<DOUBLE>"}, rows)); err != nil {
			t.Fatal(err)
		}
		if got := canonical(d.Rows("ds")[0].Columns["c"]); got != "[1.5,null,1,2]" {
			t.Errorf("c is %s", got)
		}
		if n := d.Nulled(); len(n) != 1 {
			t.Errorf("nulled %q: want the text that is no number", n)
		}
	})
	t.Run("auto before Druid 26", func(t *testing.T) {
		d := New()
		d.Version = 25
		err := d.ExecTask(ctx, taskOver(t, map[string]any{"type": "auto"}, segmentRows("1", "2")))
		if err == nil || !strings.Contains(err.Error(), "type id 'auto'") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a REPLACE of a day replaces its segment only", func(t *testing.T) {
		d := New()
		if err := d.ExecTask(ctx, taskOver(t, map[string]any{"type": "auto"}, segmentRows("true", "false"))); err != nil {
			t.Fatal(err)
		}
		// Day 3 again, now with a value: its segment is LONG.
		if err := d.ExecTask(ctx, taskOver(t, map[string]any{"type": "auto"}, []string{fmt.Sprintf(`{"t":%d,"c":true}`, day3)})); err != nil {
			t.Fatal(err)
		}
		if got := segmentTypesOf(d); got != "LONG LONG LONG" {
			t.Errorf("segments %s", got)
		}
	})
}

// TestArrayIngestMode: MSQ writes an ARRAY column of EXTERN by
// arrayIngestMode (DimensionSchemaUtils.createDimensionSchema): numeric
// arrays only under array, pinned to their type from Druid 29; the mode
// is array by default from Druid 31.
func TestArrayIngestMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := segmentRows(`[1,null,3]`, "[]")
	query := stmtOver(inline(rows...), `[{"name":"t","type":"long"},{"name":"c","type":"ARRAY<LONG>"}]`,
		`REPLACE INTO "ds" OVERWRITE ALL`, `MILLIS_TO_TIMESTAMP("t") AS "__time", "c"`, "", "DAY")
	for _, tc := range []struct {
		version  int
		mode     string
		segments string
		err      string
	}{
		{0, "", "", "Numeric arrays can only be ingested when 'arrayIngestMode' is set to 'array'"},
		{0, "mvd", "", "Numeric arrays"},
		{0, "none", "", "can not be ingested"},
		{0, "array", "ARRAY<LONG> ARRAY<LONG> ARRAY<LONG>", ""},
		{28, "array", "ARRAY<LONG> ARRAY<LONG> STRING", ""},
		{31, "", "ARRAY<LONG> ARRAY<LONG> ARRAY<LONG>", ""},
		{27, "array", "", "Cannot create dimension for type [ARRAY<LONG>]"},
	} {
		t.Run(fmt.Sprintf("Druid %d %s", tc.version, tc.mode), func(t *testing.T) {
			d := New()
			d.Version = tc.version
			qctx := map[string]any{"sqlTimeZone": "UTC"}
			if tc.mode != "" {
				qctx["arrayIngestMode"] = tc.mode
			}
			err := d.ExecSQL(ctx, query, qctx)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := segmentTypesOf(d); got != tc.segments {
				t.Errorf("segments type c as %s, want %s", got, tc.segments)
			}
		})
	}
}

// TestLeastRestrictiveType: ColumnType.leastRestrictiveType.
func TestLeastRestrictiveType(t *testing.T) {
	t.Parallel()
	for _, tc := range [][3]string{
		{"LONG", "LONG", "LONG"},
		{"LONG", "FLOAT", "DOUBLE"},
		{"FLOAT", "FLOAT", "FLOAT"},
		{"LONG", "STRING", "STRING"},
		{"ARRAY<LONG>", "LONG", "ARRAY<LONG>"},
		{"ARRAY<LONG>", "STRING", "ARRAY<STRING>"},
		{"DOUBLE", "ARRAY<LONG>", "ARRAY<DOUBLE>"},
		{"ARRAY<LONG>", "ARRAY<DOUBLE>", "ARRAY<DOUBLE>"},
		{"COMPLEX<json>", "STRING", "COMPLEX<json>"},
		{"ARRAY<LONG>", "COMPLEX<json>", "COMPLEX<json>"},
		{"", "LONG", "LONG"},
	} {
		if got, err := leastRestrictiveType(tc[0], tc[1]); got != tc[2] || err != nil {
			t.Errorf("%s with %s: %s %v, want %s", tc[0], tc[1], got, err, tc[2])
		}
	}
	if _, err := leastRestrictiveType("COMPLEX<json>", "COMPLEX<hyperUnique>"); err == nil {
		t.Error("two complex types merged")
	}
}

// TestMurmur3: murmur3 is Guava's Hashing.murmur3_32() (seed 0), which
// HashPartitionFunction.MURMUR3_32_ABS buckets rows by: the reference
// vectors of MurmurHash3_x86_32.
func TestMurmur3(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]uint32{
		"":      0,
		"hello": 0x248bfa47,
		"The quick brown fox jumps over the lazy dog": 0x2e4ff723,
	} {
		if got := uint32(murmur3([]byte(in))); got != want {
			t.Errorf("murmur3(%q) = %08x, want %08x", in, got, want)
		}
	}
}
