package reader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/internal/golden"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// The all-types file: one column of every Iceberg type, with field ids.
type (
	gInner struct {
		X *string  `parquet:"x,id(22),optional"`
		Y *float64 `parquet:"y,id(23),optional"`
	}
	gStruct struct {
		A     *int32  `parquet:"a,id(20),optional"`
		Inner *gInner `parquet:"inner,id(21),optional"`
	}
	gItem struct {
		N *int64  `parquet:"n,id(26),optional"`
		S *string `parquet:"s,id(27),optional"`
	}
	gPQ struct {
		P *int32  `parquet:"p,id(40),optional"`
		Q *string `parquet:"q,id(41),optional"`
	}
	// Seven levels: deep.l2.l3[].l4{k}.v[] (parquet-go writes a list
	// directly in a map value as all nulls, so the value is a struct).
	gL3 struct {
		L4 map[string]*gL5 `parquet:"l4,id(46),optional" parquet-key:",id(47)" parquet-value:",id(48),optional"`
	}
	gL5 struct {
		V []*int64 `parquet:"v,id(49),optional,list" parquet-element:",id(51),optional"`
	}
	gL2 struct {
		L3 []*gL3 `parquet:"l3,id(44),optional,list" parquet-element:",id(45),optional"`
	}
	gDeep struct {
		L2 *gL2 `parquet:"l2,id(43),optional"`
	}
	gRow struct {
		B      *bool             `parquet:"b,id(1),optional"`
		I      *int32            `parquet:"i,id(2),optional"`
		L      *int64            `parquet:"l,id(3),optional"`
		F      *float32          `parquet:"f,id(4),optional"`
		D      *float64          `parquet:"d,id(5),optional"`
		Dec9   *int32            `parquet:"dec9,id(6),optional,decimal(2:9)"`
		Dec18  *int64            `parquet:"dec18,id(7),optional,decimal(4:18)"`
		Dec38  *[16]byte         `parquet:"dec38,id(8),optional,decimal(10:38)"`
		Date   *int32            `parquet:"date,id(9),optional,date"`
		Time   int64             `parquet:"time,id(10),optional,time(microsecond)"` // zero is null
		TS     *int64            `parquet:"ts,id(11),optional,timestamp(microsecond)"`
		TSTZ   *int64            `parquet:"tstz,id(12),optional,timestamp(microsecond)"`
		TSNS   *int64            `parquet:"tsns,id(13),optional,timestamp(nanosecond)"`
		TSTZNS *int64            `parquet:"tstzns,id(14),optional,timestamp(nanosecond)"`
		S      *string           `parquet:"s,id(15),optional"`
		U      [16]byte          `parquet:"u,id(16),optional,uuid"` // zero is null
		Fixed  *[4]byte          `parquet:"fixed,id(17),optional"`
		Bin    *[]byte           `parquet:"bin,id(18),optional"`
		St     *gStruct          `parquet:"st,id(19),optional"`
		LS     []*gItem          `parquet:"ls,id(24),optional,list" parquet-element:",id(25),optional"`
		LL     [][]*int32        `parquet:"ll,id(28),optional,list" parquet-element:",id(29),optional,list"`
		M      map[string]*int64 `parquet:"m,id(31),optional" parquet-key:",id(32)" parquet-value:",id(33),optional"`
		MI     map[int32]*string `parquet:"mi,id(34),optional" parquet-key:",id(35)" parquet-value:",id(36),optional"`
		MS     map[string]*gPQ   `parquet:"ms,id(37),optional" parquet-key:",id(38)" parquet-value:",id(39),optional"`
		Deep   *gDeep            `parquet:"deep,id(42),optional"`
	}
)

// goldenSchema is the Iceberg schema of the all-types file, plus an
// unknown-typed field that no file stores.
var goldenSchema = iceberg.NewSchema(0,
	field(1, "b", iceberg.PrimitiveTypes.Bool),
	field(2, "i", iceberg.PrimitiveTypes.Int32),
	field(3, "l", iceberg.PrimitiveTypes.Int64),
	field(4, "f", iceberg.PrimitiveTypes.Float32),
	field(5, "d", iceberg.PrimitiveTypes.Float64),
	field(6, "dec9", iceberg.DecimalTypeOf(9, 2)),
	field(7, "dec18", iceberg.DecimalTypeOf(18, 4)),
	field(8, "dec38", iceberg.DecimalTypeOf(38, 10)),
	field(9, "date", iceberg.PrimitiveTypes.Date),
	field(10, "time", iceberg.PrimitiveTypes.Time),
	field(11, "ts", iceberg.PrimitiveTypes.Timestamp),
	field(12, "tstz", iceberg.PrimitiveTypes.TimestampTz),
	field(13, "tsns", iceberg.PrimitiveTypes.TimestampNs),
	field(14, "tstzns", iceberg.PrimitiveTypes.TimestampTzNs),
	field(15, "s", iceberg.PrimitiveTypes.String),
	field(16, "u", iceberg.PrimitiveTypes.UUID),
	field(17, "fixed", iceberg.FixedTypeOf(4)),
	field(18, "bin", iceberg.PrimitiveTypes.Binary),
	field(19, "st", &iceberg.StructType{FieldList: []iceberg.NestedField{
		field(20, "a", iceberg.PrimitiveTypes.Int32),
		field(21, "inner", &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(22, "x", iceberg.PrimitiveTypes.String),
			field(23, "y", iceberg.PrimitiveTypes.Float64),
		}}),
	}}),
	field(24, "ls", &iceberg.ListType{ElementID: 25, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
		field(26, "n", iceberg.PrimitiveTypes.Int64),
		field(27, "s", iceberg.PrimitiveTypes.String),
	}}}),
	field(28, "ll", &iceberg.ListType{ElementID: 29, Element: &iceberg.ListType{ElementID: 30, Element: iceberg.PrimitiveTypes.Int32}}),
	field(31, "m", &iceberg.MapType{KeyID: 32, KeyType: iceberg.PrimitiveTypes.String, ValueID: 33, ValueType: iceberg.PrimitiveTypes.Int64}),
	field(34, "mi", &iceberg.MapType{KeyID: 35, KeyType: iceberg.PrimitiveTypes.Int32, ValueID: 36, ValueType: iceberg.PrimitiveTypes.String}),
	field(37, "ms", &iceberg.MapType{KeyID: 38, KeyType: iceberg.PrimitiveTypes.String, ValueID: 39, ValueType: &iceberg.StructType{FieldList: []iceberg.NestedField{
		field(40, "p", iceberg.PrimitiveTypes.Int32),
		field(41, "q", iceberg.PrimitiveTypes.String),
	}}}),
	field(42, "deep", &iceberg.StructType{FieldList: []iceberg.NestedField{
		field(43, "l2", &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(44, "l3", &iceberg.ListType{ElementID: 45, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				field(46, "l4", &iceberg.MapType{KeyID: 47, KeyType: iceberg.PrimitiveTypes.String, ValueID: 48,
					ValueType: &iceberg.StructType{FieldList: []iceberg.NestedField{
						field(49, "v", &iceberg.ListType{ElementID: 51, Element: iceberg.PrimitiveTypes.Int64}),
					}}}),
			}}}),
		}}),
	}}),
	field(50, "unk", iceberg.PrimitiveTypes.Unknown),
)

// goldenRows returns the rows of the all-types file: all nulls, maxima,
// minima and pre-1970 instants, then nulls and empties inside every
// nested level.
func goldenRows() []gRow {
	micros := func(ts time.Time) *int64 { return ptr(ts.UnixMicro()) }
	nanos := func(ts time.Time) *int64 { return ptr(ts.UnixNano()) }
	pre1970 := time.Date(1900, 1, 1, 0, 0, 0, 123456789, time.UTC)
	d38max := decimal16("99999999999999999999999999999999999999")
	d38min := decimal16("-99999999999999999999999999999999999999")
	d38small := decimal16("-1")
	return []gRow{
		{}, // every column null
		{
			B: ptr(true), I: ptr(int32(math.MaxInt32)), L: ptr(int64(math.MaxInt64)),
			F: ptr(float32(0.1)), D: ptr(0.1),
			Dec9: ptr(int32(1230)), Dec18: ptr(int64(math.MaxInt64)), Dec38: &d38max,
			Date: ptr(int32(19723)), Time: 86399999999,
			TS: ptr(int64(-1500)), TSTZ: micros(time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC)),
			TSNS: ptr(int64(-1500000)), TSTZNS: nanos(time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC)),
			S:     ptr("naïve café ✓ 😀 \u2028 <&> \"q\" \\ \t\n\r\x00\x1f\x7f"),
			U:     [16]byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00},
			Fixed: &[4]byte{'a', 'b', 'c', 'd'}, Bin: ptr([]byte{}),
			St: &gStruct{A: ptr(int32(1)), Inner: &gInner{X: ptr("x"), Y: ptr(2.5)}},
			LS: []*gItem{{N: ptr(int64(1)), S: ptr("one")}, nil, {N: ptr(int64(math.MinInt64))}},
			LL: [][]*int32{{ptr(int32(1)), nil, ptr(int32(3))}, {}, nil},
			M:  map[string]*int64{"k": ptr(int64(7))},
			MI: map[int32]*string{-1: ptr("minus one")},
			MS: map[string]*gPQ{"a": {P: ptr(int32(1)), Q: ptr("q")}},
			Deep: &gDeep{L2: &gL2{L3: []*gL3{
				{L4: map[string]*gL5{"k": {V: []*int64{ptr(int64(1)), nil, ptr(int64(-1))}}}},
			}}},
		},
		{
			B: ptr(false), I: ptr(int32(math.MinInt32)), L: ptr(int64(math.MinInt64)),
			F: ptr(float32(math.NaN())), D: ptr(math.Inf(-1)),
			Dec9: ptr(int32(-5)), Dec18: ptr(int64(math.MinInt64)), Dec38: &d38min,
			Date: ptr(int32(-1)), Time: 1,
			TS: micros(pre1970), TSTZ: ptr(int64(-1)),
			TSNS: nanos(pre1970), TSTZNS: ptr(int64(-1)),
			S:     ptr("bad \xff\xfe utf8 \xc3"),
			U:     [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			Fixed: &[4]byte{0, 0xff, '\n', 'z'}, Bin: ptr([]byte{0xfe, 0xed, 0xfa, 0xce, 'h', 'i'}),
			St: &gStruct{}, // present, fields null
			LS: []*gItem{},
			LL: [][]*int32{},
			M:  map[string]*int64{},
			MI: map[int32]*string{},
			MS: map[string]*gPQ{},
			Deep: &gDeep{L2: &gL2{L3: []*gL3{
				nil,
				{},
				{L4: map[string]*gL5{}},
				{L4: map[string]*gL5{"e": {V: []*int64{}}, "n": nil, "vn": {}}},
			}}},
		},
		{
			F: ptr(float32(-3.4028235e38)), D: ptr(-1e-300),
			Dec38: &d38small, Dec9: ptr(int32(0)),
			TS: ptr(int64(1)), TSNS: ptr(int64(999999)),
			S:     ptr(""),
			St:    &gStruct{Inner: &gInner{}}, // inner present, its fields null
			LS:    []*gItem{{}},
			LL:    [][]*int32{nil, {nil}},
			M:     map[string]*int64{"null": nil},
			MI:    map[int32]*string{0: nil},
			MS:    map[string]*gPQ{"nil": nil, "empty": {}},
			Deep:  &gDeep{L2: &gL2{}},
			Fixed: &[4]byte{},
		},
		{Deep: &gDeep{}}, // deep present, l2 null
	}
}

// TestGolden writes the all-types file and holds its NDJSON, in each
// encoding, to testdata/all_types*.ndjson byte for byte (regenerate with
// go test ./reader -run Golden -update, then check the diff by hand against
// DESIGN.md "Values").
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", goldenRows())
	s := dataSplit("data.parquet", size, int64(len(goldenRows())))
	iso := s
	iso.Encoding.ISOTimestamps = true // pinned by the token
	cases := []struct {
		file  string
		split token.Split
		opts  []reader.Option
	}{
		{"all_types.ndjson", s, nil},
		{"all_types_iso.ndjson", iso, nil},
		{"all_types_binary_as_string.ndjson", s, []reader.Option{reader.WithBinaryAsString(true)}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ctx := context.Background()
			st, err := newReader(testFS(dir), tc.opts...).Open(ctx, tc.split, tableOf(goldenSchema))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var buf bytes.Buffer
			if err := st.Run(ctx, &buf, nil); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			for line := range bytes.Lines(got) {
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
			}
			if bytes.Contains(got, []byte("NaN")) || bytes.Contains(got, []byte("Inf")) {
				t.Errorf("NaN or Inf token in output")
			}
			// Three strings and, as text, two binary values hold invalid UTF-8.
			wantInvalid := int64(1)
			if len(tc.opts) > 0 {
				wantInvalid = 3
			}
			if n := st.Stats().InvalidUTF8; n != wantInvalid {
				t.Errorf("InvalidUTF8 = %d, want %d", n, wantInvalid)
			}
			golden.Check(t, tc.file, got)
		})
	}
}

// TestGoldenCriticalValues states the values the golden files must hold,
// so that regenerating them cannot bless a regression.
func TestGoldenCriticalValues(t *testing.T) {
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", goldenRows())
	s := dataSplit("data.parquet", size, int64(len(goldenRows())))
	plain, _ := readAll(t, newReader(testFS(dir)), s, goldenSchema)
	iso, _ := readAll(t, newReader(testFS(dir), reader.WithISOTimestamps(true)), s, goldenSchema)
	text, _ := readAll(t, newReader(testFS(dir), reader.WithBinaryAsString(true)), s, goldenSchema)
	cases := []struct {
		name  string
		lines []string
		row   int
		want  string
	}{
		{"every column null", plain, 0, `"b":null,"i":null,"l":null,"f":null,"d":null,"dec9":null,"dec18":null,"dec38":null,"date":null,"time":null,"ts":null,"tstz":null,"tsns":null,"tstzns":null,"s":null,"u":null,"fixed":null,"bin":null,"st":null,"ls":null,"ll":null,"m":null,"mi":null,"ms":null,"deep":null,"unk":null`},
		{"max long", plain, 1, `"l":9223372036854775807,`},
		{"min long", plain, 2, `"l":-9223372036854775808,`},
		{"float 0.1", plain, 1, `"f":0.1,"d":0.1,`},
		{"NaN and -Inf are null", plain, 2, `"f":null,"d":null,`},
		{"decimal 12.30", plain, 1, `"dec9":"12.30",`},
		{"decimal(18,4) max", plain, 1, `"dec18":"922337203685477.5807",`},
		{"38 digits", plain, 1, `"dec38":"9999999999999999999999999999.9999999999",`},
		{"38 digits negative", plain, 2, `"dec38":"-9999999999999999999999999999.9999999999",`},
		{"date as millis", plain, 1, `"date":1704067200000,`},
		{"date before 1970", plain, 2, `"date":-86400000,`},
		{"time as micros", plain, 1, `"time":86399999999,`},
		{"-1500 µs is -1 ms", plain, 1, `"ts":-1,`},
		{"-1500000 ns is -1 ms", plain, 1, `"tsns":-1,`},
		{"1900 truncates toward zero", plain, 2, `"time":1,"ts":-2208988799876,"tstz":0,"tsns":-2208988799876,"tstzns":0,`},
		{"999999 ns is 0 ms", plain, 3, `"ts":0,"tstz":null,"tsns":0,`},
		// Before 1970, at the millisecond of the millis form (toward zero),
		// which Druid's Joda parse of the string also gives.
		{"iso micros", iso, 1, `"ts":"1969-12-31T23:59:59.999000Z","tstz":"2024-02-29T23:59:59.999999Z","tsns":"1969-12-31T23:59:59.999000000Z","tstzns":"2024-02-29T23:59:59.999999999Z",`},
		{"iso before 1970", iso, 2, `"ts":"1900-01-01T00:00:00.124000Z","tstz":"1970-01-01T00:00:00.000000Z","tsns":"1900-01-01T00:00:00.124000000Z","tstzns":"1970-01-01T00:00:00.000000000Z",`},
		{"iso keeps dates as millis", iso, 1, `"date":1704067200000,`},
		{"uuid", plain, 1, `"u":"123e4567-e89b-12d3-a456-426614174000",`},
		{"invalid utf-8", plain, 2, `"s":"bad \ufffd\ufffd utf8 \ufffd",`},
		{"controls and non-ASCII", plain, 1, `"s":"naïve café ✓ 😀 \u2028 <&> \"q\" \\ \t\n\r\u0000\u001f` + "\x7f" + `",`},
		{"empty binary", plain, 1, `"fixed":"YWJjZA==","bin":"",`},
		{"binary base64", plain, 2, `"fixed":"AP8Keg==","bin":"/u36zmhp",`},
		{"binary as text", text, 2, `"fixed":"\u0000\ufffd\nz","bin":"\ufffd\ufffd\ufffd\ufffdhi",`},
		{"nested nulls", plain, 3, `"st":{"a":null,"inner":{"x":null,"y":null}},"ls":[{"n":null,"s":null}],"ll":[null,[null]],"m":{"null":null},"mi":[{"key":0,"value":null}],`},
		{"deep", plain, 1, `"deep":{"l2":{"l3":[{"l4":{"k":{"v":[1,null,-1]}}}]}},"unk":null}`},
		{"deep nulls and empties", plain, 2, `"deep":{"l2":{"l3":[null,{"l4":null},{"l4":{}},{"l4":{"e":{"v":[]},"n":null,"vn":{"v":null}}}]}},"unk":null}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if line := tc.lines[tc.row]; !strings.Contains(line, tc.want) {
				t.Errorf("row %d lacks %s:\n%s", tc.row, tc.want, line)
			}
		})
	}
}
