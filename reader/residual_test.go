package reader_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// residualRow is one row of the residual tests' data file. qty is stored as
// INT32 for a long field, ts in milliseconds for a timestamptz field (whose
// values iceberg-go compares in microseconds), big as a byte-array decimal.
type residualRow struct {
	ID    int64           `parquet:"id,id(1)"`
	Qty   *int32          `parquet:"qty,id(2),optional"`
	Day   *int32          `parquet:"day,id(3),optional,date"`
	TS    *int64          `parquet:"ts,id(4),optional,timestamp(millisecond)"`
	Name  *string         `parquet:"name,id(5),optional"`
	Price *int64          `parquet:"price,id(6),optional,decimal(2:10)"`
	S     *residualStruct `parquet:"s,id(8),optional"`
	U     [16]byte        `parquet:"u,id(13),uuid"`
	Score float32         `parquet:"score,id(14)"`
	Tags  []string        `parquet:"tags,id(15),list"`
}

type residualStruct struct {
	A *int32 `parquet:"a,id(9),optional"`
}

// residualSchema is the table schema over residualRow, with three fields
// the file lacks: s.b (initial-default "dflt"), region (an identity
// partition value) and extra (initial-default 7).
func residualSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		field(2, "qty", iceberg.PrimitiveTypes.Int64),
		field(3, "day", iceberg.PrimitiveTypes.Date),
		field(4, "ts", iceberg.PrimitiveTypes.TimestampTz),
		field(5, "name", iceberg.PrimitiveTypes.String),
		field(6, "price", iceberg.DecimalTypeOf(10, 2)),
		field(8, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(9, "a", iceberg.PrimitiveTypes.Int32),
			{ID: 10, Name: "b", Type: iceberg.PrimitiveTypes.String, InitialDefault: "dflt"},
		}}),
		field(11, "region", iceberg.PrimitiveTypes.String),
		iceberg.NestedField{ID: 12, Name: "extra", Type: iceberg.PrimitiveTypes.Int32, InitialDefault: int32(7)},
		field(13, "u", iceberg.PrimitiveTypes.UUID),
		field(14, "score", iceberg.PrimitiveTypes.Float64),
		field(15, "tags", &iceberg.ListType{ElementID: 16, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}),
	)
}

var residualNames = []string{"ana", "bob", "carol", "dan"}

// residualRows are 40 rows; every optional column is null in some of them.
func residualRows() []residualRow {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]residualRow, 40)
	for i := range rows {
		id := i + 1
		r := &rows[i]
		r.ID = int64(id)
		if id%5 != 0 {
			r.Qty = ptr(int32(id * 3 % 17))
		}
		if id%7 != 0 {
			r.Day = ptr(int32(19723 + id)) // 2024-01-01 + id days
		}
		if id%6 != 0 {
			r.TS = ptr(base.Add(time.Duration(id) * time.Hour).UnixMilli())
		}
		if id%9 != 0 {
			r.Name = ptr(residualNames[id%4])
		}
		if id%8 != 0 {
			r.Price = ptr(int64(id*137 - 2000))
		}
		if id%10 != 0 {
			r.S = &residualStruct{}
			if id%11 != 0 {
				r.S.A = ptr(int32(id % 4))
			}
		}
		r.U = uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(id)})
		r.Score = float32(id) / 4
		r.Tags = []string{residualNames[id%4]}
	}
	return rows
}

// pinned turns a Druid icebergFilter into the residual form the planner
// pins in a split: the iceberg-go expression, bound, as REST JSON.
func pinned(t *testing.T, schema *iceberg.Schema, filter string) json.RawMessage {
	t.Helper()
	var f druid.Filter
	if err := json.Unmarshal([]byte(filter), &f); err != nil {
		t.Fatalf("filter %s: %v", filter, err)
	}
	e, err := f.Expression(schema, time.Now())
	if err != nil {
		t.Fatalf("filter %s: %v", filter, err)
	}
	bound, err := iceberg.BindExpr(schema, e, true)
	if err != nil {
		t.Fatalf("bind %s: %v", e, err)
	}
	raw, err := json.Marshal(bound)
	if err != nil {
		t.Fatalf("encode %s: %v", bound, err)
	}
	return raw
}

func ms(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

// TestResidualFilter applies the filters Druid's icebergFilter produces (and
// the other predicates of iceberg's REST form) to a Parquet file, with the
// filter columns projected away, and holds the surviving ids against the
// same condition written in Go. Nulls follow iceberg-go's evaluator: a null
// never equals and is never greater, but it is less than any value (nulls
// sort first), and not() inverts that.
func TestResidualFilter(t *testing.T) {
	dir := t.TempDir()
	rows := residualRows()
	_, size := writeParquet(t, dir, "data.parquet", rows, parquet.MaxRowsPerRowGroup(16))
	schema := residualSchema()
	base := dataSplit("data.parquet", size, int64(len(rows)))
	base.Data.Identity = []token.IdentityValue{{FieldID: 11, Value: json.RawMessage(`"eu"`)}}
	r := newReader(testFS(dir))
	all, _ := readAll(t, r, base, schema)
	if len(all) != len(rows) {
		t.Fatalf("unfiltered: %d rows", len(all))
	}

	qty := func(r residualRow) (int64, bool) {
		if r.Qty == nil {
			return 0, false
		}
		return int64(*r.Qty), true
	}
	name := func(r residualRow) string {
		if r.Name == nil {
			return "<null>"
		}
		return *r.Name
	}
	u7 := uuid.UUID(rows[6].U).String()
	cases := []struct {
		name  string
		druid string // a Druid icebergFilter, pinned as the planner does
		rest  string // or iceberg's REST form directly
		want  func(r residualRow) bool
		// noRows and everyRow say that the filter is meant to match no
		// row or every row; otherwise it must tell rows apart.
		noRows, everyRow bool
	}{
		{name: "equals long", druid: `{"type":"equals","filterColumn":"id","filterValue":7}`,
			want: func(r residualRow) bool { return r.ID == 7 }},
		{name: "equals int promoted to long", druid: `{"type":"equals","filterColumn":"qty","filterValue":4}`,
			want: func(r residualRow) bool { q, ok := qty(r); return ok && q == 4 }},
		{name: "equals string", druid: `{"type":"equals","filterColumn":"name","filterValue":"bob"}`,
			want: func(r residualRow) bool { return name(r) == "bob" }},
		{name: "equals null is is_null", druid: `{"type":"equals","filterColumn":"name","filterValue":null}`,
			want: func(r residualRow) bool { return r.Name == nil }},
		{name: "gteq on promoted long", druid: `{"type":"range","filterColumn":"qty","lower":5}`,
			want: func(r residualRow) bool { q, ok := qty(r); return ok && q >= 5 }},
		{name: "gt on promoted long", druid: `{"type":"range","filterColumn":"qty","lower":5,"lowerOpen":true}`,
			want: func(r residualRow) bool { q, ok := qty(r); return ok && q > 5 }},
		// Druid filters follow SQL: a null matches no comparison.
		{name: "lt drops nulls", druid: `{"type":"range","filterColumn":"qty","upper":5,"upperOpen":true}`,
			want: func(r residualRow) bool { q, ok := qty(r); return ok && q < 5 }},
		{name: "lteq drops nulls", druid: `{"type":"range","filterColumn":"qty","upper":5}`,
			want: func(r residualRow) bool { q, ok := qty(r); return ok && q <= 5 }},
		{name: "closed range drops nulls", druid: `{"type":"range","filterColumn":"qty","lower":3,"upper":9}`,
			want: func(r residualRow) bool { q, ok := qty(r); return ok && q >= 3 && q <= 9 }},
		{name: "date range", druid: `{"type":"range","filterColumn":"day","lower":"2024-01-10","upper":"2024-01-20","upperOpen":true}`,
			want: func(r residualRow) bool { return r.Day != nil && *r.Day >= 19723+9 && *r.Day < 19723+19 }},
		{name: "timestamptz interval", druid: `{"type":"interval","filterColumn":"ts","intervals":["2024-01-01T05:00:00Z/2024-01-01T12:00:00Z"]}`,
			want: func(r residualRow) bool {
				return r.TS != nil && *r.TS >= ms("2024-01-01T05:00:00Z") && *r.TS < ms("2024-01-01T12:00:00Z")
			}},
		{name: "timestamptz gt", druid: `{"type":"range","filterColumn":"ts","lower":"2024-01-02T10:00:00Z","lowerOpen":true}`,
			want: func(r residualRow) bool { return r.TS != nil && *r.TS > ms("2024-01-02T10:00:00Z") }},
		{name: "string range", druid: `{"type":"range","filterColumn":"name","lower":"b","upper":"c"}`,
			want: func(r residualRow) bool { return r.Name != nil && *r.Name >= "b" && *r.Name <= "c" }},
		{name: "decimal range", druid: `{"type":"range","filterColumn":"price","lower":"-1.50","upper":"10.00","upperOpen":true}`,
			want: func(r residualRow) bool { return r.Price != nil && *r.Price >= -150 && *r.Price < 1000 }},
		{name: "and", druid: `{"type":"and","filters":[{"type":"equals","filterColumn":"name","filterValue":"bob"},{"type":"range","filterColumn":"qty","lower":5}]}`,
			want: func(r residualRow) bool { q, ok := qty(r); return name(r) == "bob" && ok && q >= 5 }},
		{name: "or", druid: `{"type":"or","filters":[{"type":"equals","filterColumn":"id","filterValue":1},{"type":"equals","filterColumn":"name","filterValue":"dan"}]}`,
			want: func(r residualRow) bool { return r.ID == 1 || name(r) == "dan" }},
		{name: "not drops nulls", druid: `{"type":"not","filter":{"type":"equals","filterColumn":"name","filterValue":"bob"}}`,
			want: func(r residualRow) bool { return r.Name != nil && *r.Name != "bob" }},
		{name: "nested struct field", druid: `{"type":"equals","filterColumn":"s.a","filterValue":2}`,
			want: func(r residualRow) bool { return r.S != nil && r.S.A != nil && *r.S.A == 2 }},
		{name: "nested field the file lacks, under a present struct", druid: `{"type":"equals","filterColumn":"s.b","filterValue":"dflt"}`,
			want: func(r residualRow) bool { return r.S != nil }},
		{name: "identity partition value", druid: `{"type":"equals","filterColumn":"region","filterValue":"eu"}`,
			want: func(residualRow) bool { return true }, everyRow: true},
		{name: "identity partition value, other", druid: `{"type":"equals","filterColumn":"region","filterValue":"us"}`,
			want: func(residualRow) bool { return false }, noRows: true},
		{name: "initial default", druid: `{"type":"range","filterColumn":"extra","lower":7,"upper":7}`,
			want: func(residualRow) bool { return true }, everyRow: true},
		{name: "initial default, other", druid: `{"type":"range","filterColumn":"extra","lower":8}`,
			want: func(residualRow) bool { return false }, noRows: true},
		{name: "float promoted to double", druid: `{"type":"range","filterColumn":"score","lower":2.5,"upper":5}`,
			want: func(r residualRow) bool { return r.Score >= 2.5 && r.Score <= 5 }},
		{name: "is_null", rest: `{"type":"is-null","term":"qty"}`,
			want: func(r residualRow) bool { return r.Qty == nil }},
		{name: "not_null", rest: `{"type":"not-null","term":"s.a"}`,
			want: func(r residualRow) bool { return r.S != nil && r.S.A != nil }},
		// A raw expression keeps iceberg-go's evaluator order, nulls first.
		{name: "not-eq keeps nulls", rest: `{"type":"not-eq","term":"qty","value":4}`,
			want: func(r residualRow) bool { q, ok := qty(r); return !ok || q != 4 }},
		{name: "in", rest: `{"type":"in","term":"name","values":["ana","carol"]}`,
			want: func(r residualRow) bool { return name(r) == "ana" || name(r) == "carol" }},
		{name: "starts-with", rest: `{"type":"starts-with","term":"name","value":"ca"}`,
			want: func(r residualRow) bool { return strings.HasPrefix(name(r), "ca") }},
		{name: "uuid", rest: `{"type":"eq","term":"u","value":"` + u7 + `"}`,
			want: func(r residualRow) bool { return r.ID == 7 }},
		{name: "false", rest: `false`, want: func(residualRow) bool { return false }, noRows: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			if tc.druid != "" {
				s.Filter = pinned(t, schema, tc.druid)
			} else {
				s.Filter = json.RawMessage(tc.rest)
			}
			var wantIDs []string
			var wantAll []string
			for i, row := range rows {
				if tc.want(row) {
					wantIDs = append(wantIDs, `{"id":`+itoa(int(row.ID))+`}`)
					wantAll = append(wantAll, all[i])
				}
			}
			if len(wantIDs) == 0 != tc.noRows || len(wantIDs) == len(rows) != tc.everyRow {
				t.Fatalf("the case selects %d of %d rows; pick a condition that tells rows apart", len(wantIDs), len(rows))
			}

			// Only id is emitted: every filter column is projected away.
			s.Columns = []int{1}
			got, st := readAll(t, r, s, schema)
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("filter %s\n got %v\nwant %v", s.Filter, got, wantIDs)
			}
			if st.RowsFiltered != int64(len(rows)-len(wantIDs)) || st.RowsEmitted != int64(len(wantIDs)) || st.RowsRead != int64(len(rows)) {
				t.Errorf("stats %+v for %d of %d rows", st, len(wantIDs), len(rows))
			}

			// Every column emitted: the filter shares their columns and
			// leaves the emitted values alone.
			s.Columns = nil
			got, _ = readAll(t, r, s, schema)
			if !slices.Equal(got, wantAll) {
				t.Fatalf("filter %s with every column\n got %v\nwant %v", s.Filter, got, wantAll)
			}
		})
	}

	t.Run("deleted rows are counted as deleted, not filtered", func(t *testing.T) {
		p, z := writeParquet(t, dir, "pos.parquet", []posDelete{{base.Data.Path, 0}, {base.Data.Path, 1}})
		s := base
		s.Columns = []int{1}
		s.Filter = pinned(t, schema, `{"type":"equals","filterColumn":"name","filterValue":"bob"}`)
		s.Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: p, Format: "PARQUET", Size: z}}
		got, st := readAll(t, r, s, schema)
		var want []string
		for _, row := range rows[2:] {
			if name(row) == "bob" {
				want = append(want, `{"id":`+itoa(int(row.ID))+`}`)
			}
		}
		// Row 0 (id 1) is bob's too, but deleted.
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if d := st.RowsDeleted[token.DeletePosition]; d != 2 || st.RowsFiltered != int64(len(rows))-2-int64(len(want)) {
			t.Errorf("stats %+v", st)
		}
	})

	t.Run("always true is no filter", func(t *testing.T) {
		s := base
		s.Filter = json.RawMessage(`true`)
		got, st := readAll(t, r, s, schema)
		if !slices.Equal(got, all) || st.RowsFiltered != 0 {
			t.Fatalf("got %d rows, stats %+v", len(got), st)
		}
	})
}

// TestResidualFilterMissingStructs: a filter on a field of a struct the file
// lacks sees the struct as its initial-default gives it (present, with the
// field's own initial-default) or null; a byte-array decimal compares by
// value.
func TestResidualFilterMissingStructs(t *testing.T) {
	type row struct {
		ID  int64  `parquet:"id,id(1)"`
		Big []byte `parquet:"big,id(2),decimal(2:20)"`
	}
	dir := t.TempDir()
	// Unscaled values -12345, 0, 300, 10^20: big-endian two's complement
	// in FIXED_LEN_BYTE_ARRAY(9), as parquet-go stores decimal(20).
	bigs := [][]byte{
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xcf, 0xc7},
		{0, 0, 0, 0, 0, 0, 0, 0, 0},
		{0, 0, 0, 0, 0, 0, 0, 0x01, 0x2c},
		{0x05, 0x6b, 0xc7, 0x5e, 0x2d, 0x63, 0x10, 0x00, 0x00},
	}
	var rows []row
	for i, b := range bigs {
		rows = append(rows, row{ID: int64(i + 1), Big: b})
	}
	_, size := writeParquet(t, dir, "data.parquet", rows)
	inner := func(id int) *iceberg.StructType {
		return &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: id, Name: "c", Type: iceberg.PrimitiveTypes.Int32, InitialDefault: int32(3)},
		}}
	}
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "big", iceberg.DecimalTypeOf(22, 2)),
		iceberg.NestedField{ID: 3, Name: "m", Type: inner(4), InitialDefault: map[string]any{}},
		field(5, "n", inner(6)),
	)
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{`{"type":"eq","term":"m.c","value":3}`, []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4}`}},
		{`{"type":"is-null","term":"n.c"}`, []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4}`}},
		{`{"type":"eq","term":"n.c","value":3}`, nil},
		{`{"type":"lt","term":"big","value":"0.00"}`, []string{`{"id":1}`}},
		{`{"type":"gt-eq","term":"big","value":"3.00"}`, []string{`{"id":3}`, `{"id":4}`}},
		{`{"type":"eq","term":"big","value":"1000000000000000000.00"}`, []string{`{"id":4}`}},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			s := dataSplit("data.parquet", size, int64(len(rows)))
			s.Columns = []int{1}
			s.Filter = json.RawMessage(tc.filter)
			got, _ := readAll(t, newReader(testFS(dir)), s, schema)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestResidualFilterErrors: a filter the reader cannot apply fails Open
// with ErrUnsupported, before the first byte.
func TestResidualFilterErrors(t *testing.T) {
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", residualRows())
	schema := residualSchema()
	for _, tc := range []struct{ name, filter string }{
		{"not JSON", `{"type":`},
		{"unknown predicate", `{"type":"near","term":"id","value":1}`},
		{"unknown column", `{"type":"eq","term":"nope","value":1}`},
		{"value of the wrong type", `{"type":"eq","term":"day","value":"not a date"}`},
		{"list element", `{"type":"eq","term":"tags.element","value":"bob"}`},
		{"struct", `{"type":"is-null","term":"s"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := dataSplit("data.parquet", size, 40)
			s.Filter = json.RawMessage(tc.filter)
			st, err := newReader(testFS(dir)).Open(context.Background(), s, tableOf(schema))
			if !errors.Is(err, reader.ErrUnsupported) {
				t.Fatalf("got %v, want ErrUnsupported", err)
			}

			if st != nil {
				t.Error("stream returned with an error")
			}
		})
	}
}
