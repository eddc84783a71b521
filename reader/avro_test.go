package reader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// writeAvro writes records as an Avro Object Container File named name in
// dir, with the given schema (Iceberg's Avro schema, field ids as
// attributes), and returns its path and size.
func writeAvro(t testing.TB, dir, name, schema string, recs []map[string]any, opts ...ocf.WriterOpt) (string, int64) {
	t.Helper()
	s, err := avro.Parse(schema)
	if err != nil {
		t.Fatalf("parse avro schema: %v", err)
	}
	var buf bytes.Buffer
	w, err := ocf.NewWriter(&buf, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Encode(r); err != nil {
			t.Fatalf("encode %v: %v", r, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := writeFile(path, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return path, int64(buf.Len())
}

// avroSplit describes an Avro data file written under dir.
func avroSplit(name string, size, records int64, deletes ...token.DeleteFile) token.Split {
	s := dataSplit(name, size, records, deletes...)
	s.Data.Format = "AVRO"
	return s
}

// allTypesRow is a row of every primitive and nested type, as Parquet.
type allTypesRow struct {
	ID    int64            `parquet:"id,id(1)"`
	Name  *string          `parquet:"name,id(2),optional"`
	Score *float64         `parquet:"score,id(3),optional"`
	F     float32          `parquet:"f,id(4)"`
	Flag  bool             `parquet:"flag,id(5)"`
	Day   int32            `parquet:"day,id(6),date"`
	TS    *int64           `parquet:"ts,id(7),optional,timestamp(microsecond)"`
	Amt   int64            `parquet:"amt,id(8),decimal(2:18)"`
	Big   [16]byte         `parquet:"big,id(9),decimal(4:38)"`
	U     [16]byte         `parquet:"u,id(10),uuid"`
	Bin   []byte           `parquet:"bin,id(11),optional"`
	Tags  []string         `parquet:"tags,id(12),list"`
	T     int64            `parquet:"t,id(13),time(microsecond)"`
	TSNS  int64            `parquet:"tsns,id(14),timestamp(nanosecond)"`
	Attrs map[string]int32 `parquet:"attrs,id(15)"`
	Inner *allTypesInner   `parquet:"inner,id(20),optional"`
}

type allTypesInner struct {
	A int32   `parquet:"a,id(21)"`
	B *string `parquet:"b,id(22),optional"`
}

// allTypesAvro is the same row's Iceberg Avro schema.
const allTypesAvro = `{"type":"record","name":"table","fields":[
 {"name":"id","type":"long","field-id":1},
 {"name":"name","type":["null","string"],"default":null,"field-id":2},
 {"name":"score","type":["null","double"],"default":null,"field-id":3},
 {"name":"f","type":"float","field-id":4},
 {"name":"flag","type":"boolean","field-id":5},
 {"name":"day","type":{"type":"int","logicalType":"date"},"field-id":6},
 {"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true}],"default":null,"field-id":7},
 {"name":"amt","type":{"type":"fixed","name":"fixed_8","size":8,"logicalType":"decimal","precision":18,"scale":2},"field-id":8},
 {"name":"big","type":{"type":"fixed","name":"fixed_16","size":16,"logicalType":"decimal","precision":38,"scale":4},"field-id":9},
 {"name":"u","type":{"type":"fixed","name":"uuid_fixed","size":16,"logicalType":"uuid"},"field-id":10},
 {"name":"bin","type":["null","bytes"],"default":null,"field-id":11},
 {"name":"tags","type":{"type":"array","items":"string","element-id":16},"field-id":12},
 {"name":"t","type":{"type":"long","logicalType":"time-micros"},"field-id":13},
 {"name":"tsns","type":{"type":"long","logicalType":"timestamp-nanos","adjust-to-utc":false},"field-id":14},
 {"name":"attrs","type":{"type":"map","values":"int","key-id":17,"value-id":18},"field-id":15},
 {"name":"inner","type":["null",{"type":"record","name":"r20","fields":[
   {"name":"a","type":"int","field-id":21},
   {"name":"b","type":["null","string"],"default":null,"field-id":22}]}],"default":null,"field-id":20}
]}`

// allTypesSchema is the table schema of both files.
func allTypesSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		field(2, "name", iceberg.PrimitiveTypes.String),
		field(3, "score", iceberg.PrimitiveTypes.Float64),
		field(4, "f", iceberg.PrimitiveTypes.Float32),
		field(5, "flag", iceberg.PrimitiveTypes.Bool),
		field(6, "day", iceberg.PrimitiveTypes.Date),
		field(7, "ts", iceberg.PrimitiveTypes.TimestampTz),
		field(8, "amt", iceberg.DecimalTypeOf(18, 2)),
		field(9, "big", iceberg.DecimalTypeOf(38, 4)),
		field(10, "u", iceberg.PrimitiveTypes.UUID),
		field(11, "bin", iceberg.PrimitiveTypes.Binary),
		field(12, "tags", &iceberg.ListType{ElementID: 16, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}),
		field(13, "t", iceberg.PrimitiveTypes.Time),
		field(14, "tsns", iceberg.PrimitiveTypes.TimestampNs),
		field(15, "attrs", &iceberg.MapType{KeyID: 17, KeyType: iceberg.PrimitiveTypes.String, ValueID: 18,
			ValueType: iceberg.PrimitiveTypes.Int32, ValueRequired: true}),
		field(20, "inner", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 21, Name: "a", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			field(22, "b", iceberg.PrimitiveTypes.String),
		}}),
	)
}

// allTypesRows returns n rows of allTypesRow and the same rows as Avro
// records. Maps hold at most one entry: Parquet keeps a map's stored
// order, the Avro decoder does not (see TestAvroMapKeyOrder).
func allTypesRows(n int) ([]allTypesRow, []map[string]any) {
	var pq []allTypesRow
	var av []map[string]any
	for i := range n {
		r := allTypesRow{
			ID: int64(i), F: float32(i) / 10, Flag: i%2 == 0, Day: int32(19000 + i),
			Amt: int64(i*1234 - 5000), T: int64(i) * 1_000_001, TSNS: 1_700_000_000_123_456_789 + int64(i),
			Tags: []string{}, Attrs: map[string]int32{},
		}
		big.NewInt(int64(i) * -987654321).FillBytes(r.Big[:])
		if i%3 == 1 { // negative, two's complement
			v := new(big.Int).Lsh(big.NewInt(-int64(i)), 70)
			b := new(big.Int).Add(v, new(big.Int).Lsh(big.NewInt(1), 128)).Bytes()
			copy(r.Big[16-len(b):], b)
		}
		r.U[0], r.U[15] = byte(i), 0xab
		if i%4 != 0 {
			r.Name = ptr("n\u00e9" + itoa(i) + "\"q")
			r.Score = ptr(float64(i) * 0.1)
			r.TS = ptr(int64(1_700_000_000_000_000 + i*1001))
			r.Bin = []byte{byte(i), 0, 0xff}
			r.Tags = []string{"a" + itoa(i), "b"}
			r.Attrs = map[string]int32{"k" + itoa(i): int32(i)}
			r.Inner = &allTypesInner{A: int32(-i)}
			if i%2 == 1 {
				r.Inner.B = ptr("in" + itoa(i))
			}
		}
		pq = append(pq, r)

		rec := map[string]any{
			"id": r.ID, "f": r.F, "flag": r.Flag, "day": r.Day, "t": r.T, "tsns": r.TSNS,
			"amt": big.NewInt(r.Amt).FillBytes(make([]byte, 8)), "big": r.Big[:], "u": r.U[:],
			"name": nil, "score": nil, "ts": nil, "bin": nil, "inner": nil,
		}
		if r.Amt < 0 {
			rec["amt"] = new(big.Int).Add(big.NewInt(r.Amt), new(big.Int).Lsh(big.NewInt(1), 64)).FillBytes(make([]byte, 8))
		}
		tags := make([]any, len(r.Tags))
		for j, s := range r.Tags {
			tags[j] = s
		}
		rec["tags"] = tags
		attrs := map[string]any{}
		for k, v := range r.Attrs {
			attrs[k] = v
		}
		rec["attrs"] = attrs
		if r.Name != nil {
			rec["name"], rec["score"], rec["ts"], rec["bin"] = *r.Name, *r.Score, *r.TS, r.Bin
		}
		if r.Inner != nil {
			inner := map[string]any{"a": r.Inner.A, "b": nil}
			if r.Inner.B != nil {
				inner["b"] = *r.Inner.B
			}
			rec["inner"] = inner
		}
		av = append(av, rec)
	}
	return pq, av
}

// TestAvroMatchesParquet reads the same rows written as Parquet and as
// Avro, and wants the same bytes: every type, nulls, nesting, the output
// options, a projection, and both kinds of delete file in either format.
func TestAvroMatchesParquet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pq, av := allTypesRows(1200)
	_, pqSize := writeParquet(t, dir, "d.parquet", pq)
	_, avSize := writeAvro(t, dir, "d.avro", allTypesAvro, av, ocf.WithCodec(ocf.DeflateCodec(1)), ocf.WithBlockCount(500))
	schema := allTypesSchema()

	type delRow struct {
		Name *string `parquet:"name,id(2),optional"`
	}
	const delAvro = `{"type":"record","name":"d","fields":[{"name":"name","type":["null","string"],"default":null,"field-id":2}]}`
	eqP, eqPSize := writeParquet(t, dir, "eq.parquet", []delRow{{ptr("n\u00e95\"q")}, {nil}})
	eqA, eqASize := writeAvro(t, dir, "eq.avro", delAvro, []map[string]any{{"name": "n\u00e97\"q"}})
	const posAvro = `{"type":"record","name":"p","fields":[{"name":"file_path","type":"string","field-id":2147483546},
		{"name":"pos","type":"long","field-id":2147483545}]}`
	deletes := func(data string) []token.DeleteFile {
		var recs []map[string]any
		for _, p := range []int64{1, 2, 1199} {
			recs = append(recs, map[string]any{"file_path": bucket + "/" + data, "pos": p})
		}
		pp, ps := writeAvro(t, dir, "pos-"+data+".avro", posAvro, recs)
		return []token.DeleteFile{
			{Kind: token.DeleteEquality, Path: eqP, Format: "PARQUET", Size: eqPSize, Records: 2, EqualityIDs: []int{2}},
			{Kind: token.DeleteEquality, Path: eqA, Format: "AVRO", Size: eqASize, Records: 1, EqualityIDs: []int{2}},
			{Kind: token.DeletePosition, Path: pp, Format: "AVRO", Size: ps, Records: 3},
		}
	}
	cases := []struct {
		name    string
		opts    []reader.Option
		columns []int
		deletes bool
	}{
		{name: "every column"},
		{name: "iso timestamps, binary as string", opts: []reader.Option{reader.WithISOTimestamps(true), reader.WithBinaryAsString(true)}},
		{name: "projection", columns: []int{20, 1, 12}},
		{name: "deletes in both formats", deletes: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps, as := dataSplit("d.parquet", pqSize, 1200), avroSplit("d.avro", avSize, 1200)
			ps.Columns, as.Columns = tc.columns, tc.columns
			if tc.deletes {
				ps.Deletes, as.Deletes = deletes("d.parquet"), deletes("d.avro")
			}
			r := newReader(testFS(dir), tc.opts...)
			want, wst := readAll(t, r, ps, schema)
			got, gst := readAll(t, r, as, schema)
			if len(want) == 0 || !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("line %d:\n avro    %s\n parquet %s", i, got[i], want[i])
					}
				}
				t.Fatalf("avro gave %d lines, parquet %d", len(got), len(want))
			}
			if gst.RowsRead != wst.RowsRead || gst.RowsEmitted != wst.RowsEmitted ||
				!maps2Equal(gst.RowsDeleted, wst.RowsDeleted) {
				t.Errorf("stats: avro %+v, parquet %+v", gst, wst)
			}
			if tc.deletes && (gst.RowsDeleted[token.DeletePosition] != 3 || gst.RowsDeleted[token.DeleteEquality] < 2) {
				t.Errorf("deletes not applied: %+v", gst.RowsDeleted)
			}
		})
	}
	// A hand-derived line, so that both formats agreeing on a wrong value
	// fails too.
	got, _ := readAll(t, newReader(testFS(dir)), avroSplit("d.avro", avSize, 1200), schema)
	const line1 = `{"id":1,"name":"né1\"q","score":0.1,"f":0.1,"flag":false,"day":1641686400000,"ts":1700000000001,` +
		`"amt":"-37.66","big":"-118059162071741130.3424","u":"01000000-0000-0000-0000-0000000000ab","bin":"AQD/",` +
		`"tags":["a1","b"],"t":1000001,"tsns":1700000000123,"attrs":{"k1":1},"inner":{"a":-1,"b":"in1"}}`
	if got[1] != line1 {
		t.Errorf("row 1:\n got  %s\n want %s", got[1], line1)
	}
}

func maps2Equal[K comparable, V comparable](a, b map[K]V) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// TestAvroEvolution reads an Avro file by field id through the table's
// later schema: a renamed column, a dropped one, one added with an initial
// default, an identity partition value the file does not store, and a
// column promoted from int to long.
func TestAvroEvolution(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const old = `{"type":"record","name":"t","fields":[
		{"name":"id","type":"int","field-id":1},
		{"name":"old_name","type":["null","string"],"default":null,"field-id":2},
		{"name":"dropped","type":"string","field-id":3},
		{"name":"f","type":"float","field-id":4},
		{"name":"kv","type":{"type":"array","logicalType":"map","items":{"type":"record","name":"k5_v6","fields":[
			{"name":"key","type":"int","field-id":6},{"name":"value","type":["null","string"],"default":null,"field-id":7}]}},"field-id":5},
		{"name":"ol","type":["null",{"type":"array","items":["null","long"],"element-id":9}],"default":null,"field-id":8}]}`
	recs := []map[string]any{
		{"id": int32(1), "old_name": "a", "dropped": "x", "f": float32(0.1),
			"kv": []any{map[string]any{"key": int32(2), "value": "two"}, map[string]any{"key": int32(1), "value": nil}},
			"ol": []any{int64(1), nil, int64(3)}},
		{"id": int32(2), "old_name": nil, "dropped": "y", "f": float32(2.5), "kv": []any{}, "ol": nil},
		{"id": int32(3), "old_name": "c", "dropped": "z", "f": float32(-1), "kv": []any{}, "ol": []any{}},
	}
	_, size := writeAvro(t, dir, "old.avro", old, recs, ocf.WithCodec(ocf.SnappyCodec()))
	schema := parseSchema(t, `
		{"id":1,"name":"id","required":true,"type":"long"},
		{"id":2,"name":"name","required":false,"type":"string"},
		{"id":4,"name":"f","required":false,"type":"double"},
		{"id":5,"name":"kv","required":false,"type":{"type":"map","key-id":6,"key":"int","value-id":7,"value":"string","value-required":false}},
		{"id":8,"name":"ol","required":false,"type":{"type":"list","element-id":9,"element":"long","element-required":false}},
		{"id":10,"name":"added","required":false,"type":"string","initial-default":"d\u00e9faut"},
		{"id":11,"name":"region","required":false,"type":"string"}`)
	s := avroSplit("old.avro", size, 3)
	s.Data.Identity = []token.IdentityValue{{FieldID: 11, Value: json.RawMessage(`"eu"`)}}
	got, _ := readAll(t, newReader(testFS(dir)), s, schema)
	want := []string{
		`{"id":1,"name":"a","f":0.10000000149011612,"kv":[{"key":2,"value":"two"},{"key":1,"value":null}],"ol":[1,null,3],"added":"défaut","region":"eu"}`,
		`{"id":2,"name":null,"f":2.5,"kv":[],"ol":null,"added":"défaut","region":"eu"}`,
		`{"id":3,"name":"c","f":-1,"kv":[],"ol":[],"added":"défaut","region":"eu"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAvroMapKeyOrder writes an Avro map's entries in key order: the
// decoder does not keep the stored order, and the stream must be the same
// on every read.
func TestAvroMapKeyOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sc = `{"type":"record","name":"t","fields":[{"name":"m","type":{"type":"map","values":["null","long"],"key-id":2,"value-id":3},"field-id":1}]}`
	_, size := writeAvro(t, dir, "m.avro", sc, []map[string]any{
		{"m": map[string]any{"zeta": int64(1), "alpha": nil, "mid": int64(3), "beta": int64(4)}},
	})
	schema := iceberg.NewSchema(0, field(1, "m", &iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64}))
	for range 5 {
		got, _ := readAll(t, newReader(testFS(dir)), avroSplit("m.avro", size, 1), schema)
		if want := `{"m":{"alpha":null,"beta":4,"mid":3,"zeta":1}}`; len(got) != 1 || got[0] != want {
			t.Fatalf("got %q, want %s", got, want)
		}
	}
}

// TestAvroDamaged refuses an Avro file that is not what its manifest says,
// or not Avro at all, with ErrCorruptFile.
func TestAvroDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, av := allTypesRows(200)
	path, size := writeAvro(t, dir, "d.avro", allTypesAvro, av, ocf.WithBlockCount(50))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "cut.avro"), raw[:size*2/3]); err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(raw)
	flipped[len(flipped)-5] ^= 0xff // in the last sync marker
	if err := writeFile(filepath.Join(dir, "flip.avro"), flipped); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "orc.avro"), []byte("ORC not avro at all")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		s       token.Split
		atStart bool // refused by Open, before any byte
	}{
		{"fewer records than the manifest", avroSplit("d.avro", size, 201), false},
		{"more records than the manifest", avroSplit("d.avro", size, 199), false},
		{"truncated", avroSplit("cut.avro", size*2/3, 200), false},
		{"sync marker damaged", avroSplit("flip.avro", size, 200), false},
		{"not an Avro file", avroSplit("orc.avro", 19, 1), true},
	}
	schema := allTypesSchema()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newReader(testFS(dir))
			ctx := context.Background()
			st, err := r.Open(ctx, tc.s, tableOf(schema))
			if err == nil {
				defer st.Close()
				err = st.Run(ctx, &bytes.Buffer{}, nil)
				if tc.atStart {
					t.Errorf("Open accepted it")
				}
			}
			if !errors.Is(err, reader.ErrCorruptFile) {
				t.Errorf("got %v, want ErrCorruptFile", err)
			}
		})
	}
}

// TestORCRefused keeps ORC a clear ErrUnsupported, for a data file and a
// delete file alike.
func TestORCRefused(t *testing.T) {
	t.Parallel()
	schema := iceberg.NewSchema(0, field(1, "id", iceberg.PrimitiveTypes.Int64))
	s := dataSplit("d.orc", 10, 1)
	s.Data.Format = "ORC"
	_, err := newReader(testFS(t.TempDir())).Open(context.Background(), s, tableOf(schema))
	if !errors.Is(err, reader.ErrUnsupported) || !strings.Contains(err.Error(), "ORC") {
		t.Errorf("ORC data file: %v", err)
	}
}
