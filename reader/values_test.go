package reader_test

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/druidiceberg/sidecar/reader"
)

// valueCase writes a one-column file (column "v", field id 1) and expects
// the emitted lines.
type valueCase struct {
	name  string
	write func(t *testing.T, dir string) (string, int64, int64)
	typ   iceberg.Type
	opts  []reader.Option
	want  []string
}

// column writes rows of the struct type R.
func column[R any](rows ...R) func(t *testing.T, dir string) (string, int64, int64) {
	return func(t *testing.T, dir string) (string, int64, int64) {
		p, size := writeParquet(t, dir, "data.parquet", rows)
		return p, size, int64(len(rows))
	}
}

// int96 builds an INT96 timestamp from a time.
func int96(ts time.Time) deprecated.Int96 {
	ns := ts.UnixNano()
	days := ns/int64(24*time.Hour) + 2440588
	nod := ns % int64(24*time.Hour)
	if nod < 0 {
		nod += int64(24 * time.Hour)
		days--
	}
	return deprecated.Int96{uint32(uint64(nod)), uint32(uint64(nod) >> 32), uint32(days)}
}

// decimal16 returns the 16-byte two's complement of a decimal string.
func decimal16(s string) [16]byte {
	v, _ := new(big.Int).SetString(s, 10)
	if v.Sign() < 0 {
		v.Add(v, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	var out [16]byte
	v.FillBytes(out[:])
	return out
}

func TestValues(t *testing.T) {
	type boolRow struct {
		V *bool `parquet:"v,id(1),optional"`
	}
	type int32Row struct {
		V int32 `parquet:"v,id(1)"`
	}
	type int64Row struct {
		V int64 `parquet:"v,id(1)"`
	}
	type floatRow struct {
		V float32 `parquet:"v,id(1)"`
	}
	type doubleRow struct {
		V float64 `parquet:"v,id(1)"`
	}
	type dateRow struct {
		V int32 `parquet:"v,id(1),date"`
	}
	type timeRow struct {
		V int64 `parquet:"v,id(1),time(microsecond)"`
	}
	type timeMillisRow struct {
		V int32 `parquet:"v,id(1),time(millisecond)"`
	}
	type tsMicrosRow struct {
		V int64 `parquet:"v,id(1),timestamp(microsecond)"`
	}
	type tsMillisRow struct {
		V int64 `parquet:"v,id(1),timestamp(millisecond)"`
	}
	type tsNanosRow struct {
		V int64 `parquet:"v,id(1),timestamp(nanosecond)"`
	}
	type int96Row struct {
		V deprecated.Int96 `parquet:"v,id(1)"`
	}
	type stringRow struct {
		V string `parquet:"v,id(1)"`
	}
	type binaryRow struct {
		V []byte `parquet:"v,id(1)"`
	}
	type fixedRow struct {
		V [4]byte `parquet:"v,id(1)"`
	}
	type uuidRow struct {
		V [16]byte `parquet:"v,id(1),uuid"`
	}
	type dec32Row struct {
		V int32 `parquet:"v,id(1),decimal(2:9)"`
	}
	type dec64Row struct {
		V int64 `parquet:"v,id(1),decimal(0:18)"`
	}
	type dec128Row struct {
		V [16]byte `parquet:"v,id(1),decimal(10:38)"`
	}
	type decBytesRow struct {
		V [4]byte `parquet:"v,id(1),decimal(3:9)"`
	}

	base := time.Date(2020, 1, 1, 9, 0, 0, 123456789, time.UTC)
	cases := []valueCase{
		{
			name:  "boolean",
			write: column(boolRow{ptr(true)}, boolRow{ptr(false)}, boolRow{}),
			typ:   iceberg.PrimitiveTypes.Bool,
			want:  []string{`{"v":true}`, `{"v":false}`, `{"v":null}`},
		},
		{
			name:  "int",
			write: column(int32Row{math.MinInt32}, int32Row{math.MaxInt32}, int32Row{0}),
			typ:   iceberg.PrimitiveTypes.Int32,
			want:  []string{`{"v":-2147483648}`, `{"v":2147483647}`, `{"v":0}`},
		},
		{
			name:  "long",
			write: column(int64Row{math.MinInt64}, int64Row{math.MaxInt64}),
			typ:   iceberg.PrimitiveTypes.Int64,
			want:  []string{`{"v":-9223372036854775808}`, `{"v":9223372036854775807}`},
		},
		{
			name:  "long promoted from int",
			write: column(int32Row{-7}, int32Row{math.MaxInt32}),
			typ:   iceberg.PrimitiveTypes.Int64,
			want:  []string{`{"v":-7}`, `{"v":2147483647}`},
		},
		{
			name: "float",
			write: column(floatRow{0.1}, floatRow{-2.5}, floatRow{float32(math.NaN())}, floatRow{float32(math.Inf(1))},
				floatRow{float32(math.Inf(-1))}, floatRow{1e-7}, floatRow{math.MaxFloat32}, floatRow{1e20}, floatRow{0}),
			typ: iceberg.PrimitiveTypes.Float32,
			want: []string{`{"v":0.1}`, `{"v":-2.5}`, `{"v":null}`, `{"v":null}`, `{"v":null}`, `{"v":1e-7}`,
				`{"v":3.4028235e+38}`, `{"v":100000000000000000000}`, `{"v":0}`},
		},
		{
			name:  "double promoted from float",
			write: column(floatRow{0.1}, floatRow{2}),
			typ:   iceberg.PrimitiveTypes.Float64,
			want:  []string{`{"v":0.10000000149011612}`, `{"v":2}`},
		},
		{
			name: "double",
			write: column(doubleRow{0.1}, doubleRow{1e21}, doubleRow{123456.789}, doubleRow{5e-324},
				doubleRow{math.NaN()}, doubleRow{math.Inf(-1)}, doubleRow{math.Copysign(0, -1)}),
			typ: iceberg.PrimitiveTypes.Float64,
			want: []string{`{"v":0.1}`, `{"v":1e+21}`, `{"v":123456.789}`, `{"v":5e-324}`,
				`{"v":null}`, `{"v":null}`, `{"v":-0.0}`},
		},
		{
			// Jackson reads -0 as the integer 0: -0.0 is the same float.
			name:  "negative zero float",
			write: column(floatRow{float32(math.Copysign(0, -1))}, floatRow{0}),
			typ:   iceberg.PrimitiveTypes.Float32,
			want:  []string{`{"v":-0.0}`, `{"v":0}`},
		},
		{
			name:  "date",
			write: column(dateRow{0}, dateRow{-1}, dateRow{18262}),
			typ:   iceberg.PrimitiveTypes.Date,
			want:  []string{`{"v":0}`, `{"v":-86400000}`, `{"v":1577836800000}`},
		},
		{
			name:  "time",
			write: column(timeRow{0}, timeRow{86399999999}),
			typ:   iceberg.PrimitiveTypes.Time,
			want:  []string{`{"v":0}`, `{"v":86399999999}`},
		},
		{
			name:  "time from millis",
			write: column(timeMillisRow{1500}),
			typ:   iceberg.PrimitiveTypes.Time,
			want:  []string{`{"v":1500000}`},
		},
		{
			name:  "timestamp truncates toward zero",
			write: column(tsMicrosRow{-1500}, tsMicrosRow{1500}, tsMicrosRow{-1000}, tsMicrosRow{base.UnixMicro()}),
			typ:   iceberg.PrimitiveTypes.Timestamp,
			want:  []string{`{"v":-1}`, `{"v":1}`, `{"v":-1}`, `{"v":1577869200123}`},
		},
		{
			name:  "timestamptz iso",
			write: column(tsMicrosRow{-1500}, tsMicrosRow{base.UnixMicro()}, tsMicrosRow{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()}),
			typ:   iceberg.PrimitiveTypes.TimestampTz,
			opts:  []reader.Option{reader.WithISOTimestamps(true)},
			want: []string{`{"v":"1969-12-31T23:59:59.999000Z"}`, `{"v":"2020-01-01T09:00:00.123456Z"}`,
				`{"v":"0001-01-01T00:00:00.000000Z"}`},
		},
		{
			name:  "timestamp from millis",
			write: column(tsMillisRow{-1234}),
			typ:   iceberg.PrimitiveTypes.Timestamp,
			want:  []string{`{"v":-1234}`},
		},
		{
			name:  "timestamp_ns",
			write: column(tsNanosRow{-1500000}, tsNanosRow{-999999}, tsNanosRow{base.UnixNano()}),
			typ:   iceberg.PrimitiveTypes.TimestampNs,
			want:  []string{`{"v":-1}`, `{"v":0}`, `{"v":1577869200123}`},
		},
		{
			name:  "timestamptz_ns iso",
			write: column(tsNanosRow{-1}, tsNanosRow{base.UnixNano()}),
			typ:   iceberg.PrimitiveTypes.TimestampTzNs,
			opts:  []reader.Option{reader.WithISOTimestamps(true)},
			// -1 ns is 0 ms in the millis form, so the same millisecond here.
			want: []string{`{"v":"1970-01-01T00:00:00.000000000Z"}`, `{"v":"2020-01-01T09:00:00.123456789Z"}`},
		},
		{
			name:  "int96 timestamp",
			write: column(int96Row{int96(base)}, int96Row{int96(time.Unix(0, -1500000))}),
			typ:   iceberg.PrimitiveTypes.Timestamp,
			want:  []string{`{"v":1577869200123}`, `{"v":-1}`},
		},
		{
			name:  "int96 timestamp iso",
			write: column(int96Row{int96(base)}, int96Row{int96(time.Date(1900, 6, 15, 12, 30, 0, 500, time.UTC))}),
			typ:   iceberg.PrimitiveTypes.Timestamp,
			opts:  []reader.Option{reader.WithISOTimestamps(true)},
			// 500 ns past a millisecond before 1970: the millisecond toward zero.
			want: []string{`{"v":"2020-01-01T09:00:00.123456Z"}`, `{"v":"1900-06-15T12:30:00.001000Z"}`},
		},
		{
			name: "string escapes",
			write: column(stringRow{"a\"b\\c\n\r\t\b\f\x01\x7f"}, stringRow{"<a href='x'>&amp;</a>"},
				stringRow{"héllo ✓ 😀"}, stringRow{"bad \xff\xfe utf8"}, stringRow{"sep\u2028\u2029"}, stringRow{""}),
			typ: iceberg.PrimitiveTypes.String,
			want: []string{`{"v":"a\"b\\c\n\r\t\b\f\u0001` + "\x7f" + `"}`, `{"v":"<a href='x'>&amp;</a>"}`,
				`{"v":"héllo ✓ 😀"}`, `{"v":"bad \ufffd\ufffd utf8"}`, `{"v":"sep\u2028\u2029"}`, `{"v":""}`},
		},
		{
			name:  "binary base64",
			write: column(binaryRow{[]byte{0, 1, 2, 255}}, binaryRow{[]byte{}}),
			typ:   iceberg.PrimitiveTypes.Binary,
			want:  []string{`{"v":"AAEC/w=="}`, `{"v":""}`},
		},
		{
			name:  "binary as string",
			write: column(binaryRow{[]byte("hi\x00\xff")}),
			typ:   iceberg.PrimitiveTypes.Binary,
			opts:  []reader.Option{reader.WithBinaryAsString(true)},
			want:  []string{`{"v":"hi\u0000\ufffd"}`},
		},
		{
			name:  "fixed",
			write: column(fixedRow{[4]byte{'a', 'b', 'c', 0xfb}}),
			typ:   iceberg.FixedTypeOf(4),
			want:  []string{`{"v":"YWJj+w=="}`},
		},
		{
			name:  "uuid",
			write: column(uuidRow{[16]byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0xff}}),
			typ:   iceberg.PrimitiveTypes.UUID,
			want:  []string{`{"v":"123e4567-e89b-12d3-a456-4266141740ff"}`},
		},
		{
			name:  "decimal int32",
			write: column(dec32Row{1230}, dec32Row{-5}, dec32Row{0}, dec32Row{-123}),
			typ:   iceberg.DecimalTypeOf(9, 2),
			want:  []string{`{"v":"12.30"}`, `{"v":"-0.05"}`, `{"v":"0.00"}`, `{"v":"-1.23"}`},
		},
		{
			name:  "decimal int64",
			write: column(dec64Row{math.MaxInt64}, dec64Row{math.MinInt64}),
			typ:   iceberg.DecimalTypeOf(18, 0),
			want:  []string{`{"v":"9223372036854775807"}`, `{"v":"-9223372036854775808"}`},
		},
		{
			name: "decimal 38 digits",
			write: column(dec128Row{decimal16("99999999999999999999999999999999999999")},
				dec128Row{decimal16("-99999999999999999999999999999999999999")},
				dec128Row{decimal16("-1")}, dec128Row{decimal16("10000000000000000000")},
				dec128Row{decimal16("12345678901234567890123")}),
			typ: iceberg.DecimalTypeOf(38, 10),
			want: []string{`{"v":"9999999999999999999999999999.9999999999"}`,
				`{"v":"-9999999999999999999999999999.9999999999"}`, `{"v":"-0.0000000001"}`,
				`{"v":"1000000000.0000000000"}`, `{"v":"1234567890123.4567890123"}`},
		},
		{
			name:  "decimal bytes",
			write: column(decBytesRow{[4]byte{0, 0, 0x04, 0xd2}}, decBytesRow{[4]byte{0xff, 0xff, 0xff, 0x85}}),
			typ:   iceberg.DecimalTypeOf(9, 3),
			want:  []string{`{"v":"1.234"}`, `{"v":"-0.123"}`},
		},
		{
			name:  "unknown is null",
			write: column(int32Row{1}),
			typ:   iceberg.PrimitiveTypes.Unknown,
			want:  []string{`{"v":null}`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, size, n := tc.write(t, dir)
			schema := iceberg.NewSchema(0, field(1, "v", tc.typ))
			got, _ := readAll(t, newReader(testFS(dir), tc.opts...), dataSplit("data.parquet", size, n), schema)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestNested covers structs, lists, maps, nulls at every level, a field
// that the file does not have, and key order.
func TestNested(t *testing.T) {
	type point struct {
		X *int32  `parquet:"x,id(21),optional"`
		Y *string `parquet:"y,id(22),optional"`
	}
	type item struct {
		N int64  `parquet:"n,id(31)"`
		S string `parquet:"s,id(32)"`
	}
	type row struct {
		ID    int64            `parquet:"id,id(1)"`
		P     *point           `parquet:"p,id(2),optional"`
		L     []*int32         `parquet:"l,id(3),optional,list" parquet-element:",id(4),optional"`
		M     map[string]int32 `parquet:"m,id(5),optional" parquet-key:",id(6)" parquet-value:",id(7)"`
		IM    map[int32]string `parquet:"im,id(8),optional" parquet-key:",id(9)" parquet-value:",id(10)"`
		Items []item           `parquet:"items,id(11),list" parquet-element:",id(12)"`
		LL    [][]int32        `parquet:"ll,id(13),list" parquet-element:",id(14),list"`
	}
	rows := []row{
		{ID: 1, P: &point{X: ptr(int32(1)), Y: ptr("a")}, L: []*int32{ptr(int32(1)), nil, ptr(int32(3))},
			M: map[string]int32{"k": 1}, IM: map[int32]string{7: "seven"}, Items: []item{{1, "x"}, {2, "y"}}},
		{ID: 2, P: &point{}, L: []*int32{}, Items: []item{}},
		{ID: 3},
	}
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", rows)
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "p", &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(21, "x", iceberg.PrimitiveTypes.Int32),
			field(22, "y", iceberg.PrimitiveTypes.String),
			field(23, "added", iceberg.PrimitiveTypes.String),
		}}),
		field(3, "l", &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.Int32}),
		field(5, "m", &iceberg.MapType{KeyID: 6, KeyType: iceberg.PrimitiveTypes.String, ValueID: 7, ValueType: iceberg.PrimitiveTypes.Int32, ValueRequired: true}),
		field(8, "im", &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.Int32, ValueID: 10, ValueType: iceberg.PrimitiveTypes.String, ValueRequired: true}),
		field(11, "items", &iceberg.ListType{ElementID: 12, ElementRequired: true, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(31, "n", iceberg.PrimitiveTypes.Int64), field(32, "s", iceberg.PrimitiveTypes.String),
		}}}),
		field(13, "ll", &iceberg.ListType{ElementID: 14, ElementRequired: true, Element: &iceberg.ListType{ElementID: 15, Element: iceberg.PrimitiveTypes.Int32}}),
		field(99, "missing", &iceberg.StructType{FieldList: []iceberg.NestedField{field(98, "z", iceberg.PrimitiveTypes.Int32)}}),
	)
	got, _ := readAll(t, newReader(testFS(dir)), dataSplit("data.parquet", size, 3), schema)
	want := []string{
		`{"id":1,"p":{"x":1,"y":"a","added":null},"l":[1,null,3],"m":{"k":1},"im":[{"key":7,"value":"seven"}],"items":[{"n":1,"s":"x"},{"n":2,"s":"y"}],"ll":[],"missing":null}`,
		`{"id":2,"p":{"x":null,"y":null,"added":null},"l":[],"m":null,"im":null,"items":[],"ll":[],"missing":null}`,
		`{"id":3,"p":null,"l":null,"m":null,"im":null,"items":[],"ll":[],"missing":null}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", join(got), join(want))
	}
}

// TestNestedListOfLists checks repetition levels deeper than one.
func TestNestedListOfLists(t *testing.T) {
	type row struct {
		LL [][]int32 `parquet:"ll,id(13),list" parquet-element:",id(14),list"`
	}
	rows := []row{{LL: [][]int32{{1, 2}, {}, {3}}}, {LL: [][]int32{}}, {LL: [][]int32{{4}}}}
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", rows)
	schema := iceberg.NewSchema(0,
		field(13, "ll", &iceberg.ListType{ElementID: 14, ElementRequired: true, Element: &iceberg.ListType{ElementID: 15, Element: iceberg.PrimitiveTypes.Int32}}),
	)
	got, _ := readAll(t, newReader(testFS(dir)), dataSplit("data.parquet", size, 3), schema)
	want := []string{`{"ll":[[1,2],[],[3]]}`, `{"ll":[]}`, `{"ll":[[4]]}`}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", join(got), join(want))
	}
}

func join(lines []string) string {
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

// TestRowsAcrossBatches reads nested rows that straddle pages (data pages
// v1 of a few hundred bytes) and batches (of 1 to 64 entries): every way
// must give the rows of the same data written in one page per column and
// read in batches that hold it whole.
func TestRowsAcrossBatches(t *testing.T) {
	type item struct {
		N int64  `parquet:"n,id(31)"`
		S string `parquet:"s,id(32)"`
	}
	type row struct {
		ID    int64            `parquet:"id,id(1)"`
		L     []*int32         `parquet:"l,id(3),optional,list" parquet-element:",id(4),optional"`
		M     map[string]int32 `parquet:"m,id(5),optional" parquet-key:",id(6)" parquet-value:",id(7)"`
		Items []item           `parquet:"items,id(11),list" parquet-element:",id(12)"`
		LL    [][]int32        `parquet:"ll,id(13),list" parquet-element:",id(14),list"`
	}
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(3, "l", &iceberg.ListType{ElementID: 4, Element: iceberg.PrimitiveTypes.Int32}),
		field(5, "m", &iceberg.MapType{KeyID: 6, KeyType: iceberg.PrimitiveTypes.String, ValueID: 7, ValueType: iceberg.PrimitiveTypes.Int32, ValueRequired: true}),
		field(11, "items", &iceberg.ListType{ElementID: 12, ElementRequired: true, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(31, "n", iceberg.PrimitiveTypes.Int64), field(32, "s", iceberg.PrimitiveTypes.String),
		}}}),
		field(13, "ll", &iceberg.ListType{ElementID: 14, ElementRequired: true, Element: &iceberg.ListType{ElementID: 15, Element: iceberg.PrimitiveTypes.Int32}}),
	)
	rows := make([]row, 400)
	for i := range rows {
		r := &rows[i]
		r.ID = int64(i)
		if i%7 != 0 {
			for j := range i % 13 {
				if j%4 == 3 {
					r.L = append(r.L, nil)
				} else {
					r.L = append(r.L, ptr(int32(i*j)))
				}
			}
		}
		if i%3 == 0 {
			r.M = map[string]int32{fmt.Sprint("k", i): int32(i)}
		}
		for j := range i % 5 {
			r.Items = append(r.Items, item{int64(j), strings.Repeat("s", j)})
		}
		for j := range i % 4 {
			r.LL = append(r.LL, make([]int32, j))
		}
	}
	dir := t.TempDir()
	_, whole := writeParquet(t, dir, "whole.parquet", rows, parquet.PageBufferSize(1<<20))
	_, paged := writeParquet(t, dir, "paged.parquet", rows, parquet.DataPageVersion(1), parquet.PageBufferSize(256))
	want, _ := readAll(t, newReader(testFS(dir)), dataSplit("whole.parquet", whole, int64(len(rows))), schema)
	if len(want) != len(rows) {
		t.Fatalf("%d rows, want %d", len(want), len(rows))
	}
	for _, n := range []int{0, 1, 2, 3, 5, 64} {
		got, _ := readAll(t, newReader(testFS(dir), reader.WithBatchEntries(n)), dataSplit("paged.parquet", paged, int64(len(rows))), schema)
		if !slices.Equal(got, want) {
			t.Errorf("pages of 256 bytes, batches of %d entries: got\n%s\nwant\n%s", n, join(got[:min(len(got), 5)]), join(want[:5]))
		}
	}
}
