package reader_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// parseSchema parses an Iceberg schema from table-metadata JSON, so that
// initial defaults are typed as iceberg-go gives them after parsing.
func parseSchema(t *testing.T, fields string) *iceberg.Schema {
	t.Helper()
	var s iceberg.Schema
	if err := json.Unmarshal([]byte(`{"type":"struct","schema-id":1,"fields":[`+fields+`]}`), &s); err != nil {
		t.Fatalf("parse schema: %v", err)
	}
	return &s
}

// TestProjection emits only the split's columns, in schema order, and
// still reads an equality key column that is not emitted.
func TestProjection(t *testing.T) {
	type row struct {
		ID   int64  `parquet:"id,id(1)"`
		Name string `parquet:"name,id(2)"`
		Big  string `parquet:"big,id(3)"`
	}
	type delRow struct {
		Name string `parquet:"name,id(2)"`
	}
	dir := t.TempDir()
	big := strings.Repeat("x", 4096)
	rows := []row{{1, "a", big}, {2, "b", big}, {3, "c", big}}
	for i := range 200 {
		rows = append(rows, row{int64(10 + i), "z", big + itoa(i)})
	}
	_, size := writeParquet(t, dir, "data.parquet", rows)
	pd, zd := writeParquet(t, dir, "eq.parquet", []delRow{{"b"}})
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "name", iceberg.PrimitiveTypes.String),
		field(3, "big", iceberg.PrimitiveTypes.String),
		field(4, "v", iceberg.VariantType{}), // in no file
	)
	s := dataSplit("data.parquet", size, int64(len(rows)),
		token.DeleteFile{Kind: token.DeleteEquality, Path: pd, Format: "PARQUET", Size: zd, EqualityIDs: []int{2}})

	t.Run("columns in schema order, key column read but not emitted", func(t *testing.T) {
		s := s
		s.Columns = []int{1}
		counter := &countingIO{IO: testFS(dir)}
		got, st := readTable(t, newReader(counter), s, tableOf(schema))
		if got[0] != `{"id":1}` || got[1] != `{"id":3}` || len(got) != 202 || st.RowsDeleted[token.DeleteEquality] != 1 {
			t.Errorf("got %q… (%d lines), stats %+v", got[:2], len(got), st)
		}
		// The big column's chunk (over 800 KB) is never fetched.
		if n := counter.n.Load(); n > int64(size)/4 {
			t.Errorf("read %d bytes of a %d-byte file for two small columns", n, size)
		}
	})
	t.Run("order of Columns does not matter", func(t *testing.T) {
		s := s
		s.Columns = []int{2, 1}
		s.Deletes = nil
		got, _ := readTable(t, newReader(testFS(dir)), s, tableOf(schema))
		if got[0] != `{"id":1,"name":"a"}` {
			t.Errorf("got %q", got[0])
		}
	})
	t.Run("unknown column id", func(t *testing.T) {
		s := s
		s.Columns = []int{1, 99}
		_, err := newReader(testFS(dir)).Open(context.Background(), s, tableOf(schema))
		if !errors.Is(err, reader.ErrSchemaMismatch) {
			t.Errorf("got %v, want ErrSchemaMismatch", err)
		}
	})
	t.Run("all columns: the variant the file lacks is null", func(t *testing.T) {
		got, _ := readTable(t, newReader(testFS(dir)), s, tableOf(schema))
		if got[0] != `{"id":1,"name":"a","big":"`+big+`","v":null}` {
			t.Errorf("got %.80q…", got[0])
		}
	})
}

// countingIO counts the bytes read through it (the columns of a stream
// read their pages concurrently).
type countingIO struct {
	icebergio.IO
	n atomic.Int64
}

func (c *countingIO) Open(name string) (icebergio.File, error) {
	f, err := c.IO.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, c: c}, nil
}

type countingFile struct {
	icebergio.File
	c *countingIO
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.c.n.Add(int64(n))
	return n, err
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.c.n.Add(int64(n))
	return n, err
}

var _ io.ReaderAt = (*countingFile)(nil)

// TestIdentityAndDefaults fills the fields a data file lacks: identity
// partition values first, then initial defaults, then null; and matches
// equality deletes on them.
func TestIdentityAndDefaults(t *testing.T) {
	type row struct {
		ID int64 `parquet:"id,id(1)"`
	}
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", []row{{1}, {2}})
	schema := parseSchema(t, `
		{"id":1,"name":"id","required":true,"type":"long"},
		{"id":2,"name":"region","required":false,"type":"string","initial-default":"ignored: identity wins"},
		{"id":3,"name":"day","required":false,"type":"date"},
		{"id":4,"name":"dec","required":false,"type":"decimal(9,2)"},
		{"id":5,"name":"when","required":false,"type":"timestamptz"},
		{"id":6,"name":"bin","required":false,"type":"binary"},
		{"id":7,"name":"u","required":false,"type":"uuid"},
		{"id":8,"name":"f","required":false,"type":"float"},
		{"id":9,"name":"n_long","required":false,"type":"long","initial-default":42},
		{"id":10,"name":"n_str","required":false,"type":"string","initial-default":"d\u00e9faut"},
		{"id":11,"name":"n_date","required":false,"type":"date","initial-default":"2024-01-02"},
		{"id":12,"name":"n_time","required":false,"type":"time","initial-default":"12:00:00.000001"},
		{"id":13,"name":"n_ts","required":false,"type":"timestamp","initial-default":"1969-12-31T23:59:59.9985"},
		{"id":14,"name":"n_tstz","required":false,"type":"timestamptz","initial-default":"2024-01-02T03:04:05.123456+00:00"},
		{"id":15,"name":"n_tsns","required":false,"type":"timestamp_ns","initial-default":"2024-01-02T03:04:05.123456789"},
		{"id":16,"name":"n_dec","required":false,"type":"decimal(9,2)","initial-default":"12.30"},
		{"id":17,"name":"n_bin","required":false,"type":"binary","initial-default":"0aff"},
		{"id":18,"name":"n_fixed","required":false,"type":"fixed[2]","initial-default":"6869"},
		{"id":19,"name":"n_uuid","required":false,"type":"uuid","initial-default":"123e4567-e89b-12d3-a456-426614174000"},
		{"id":20,"name":"n_bool","required":false,"type":"boolean","initial-default":true},
		{"id":21,"name":"n_double","required":false,"type":"double","initial-default":0.1},
		{"id":22,"name":"n_float","required":false,"type":"float","initial-default":0.1},
		{"id":23,"name":"n_int","required":false,"type":"int","initial-default":-7},
		{"id":24,"name":"n_struct","required":false,"type":{"type":"struct","fields":[
			{"id":25,"name":"a","required":false,"type":"int","initial-default":5},
			{"id":26,"name":"b","required":false,"type":"string"}]},"initial-default":{}},
		{"id":27,"name":"n_null","required":false,"type":"string"},
		{"id":28,"name":"n_unknown","required":false,"type":"unknown"}`)
	identity := []token.IdentityValue{
		{FieldID: 2, Value: json.RawMessage(`"eu"`)},
		{FieldID: 3, Value: json.RawMessage(`-1`)},
		{FieldID: 4, Value: json.RawMessage(`"-5"`)},
		{FieldID: 5, Value: json.RawMessage(`-1500`)},
		{FieldID: 6, Value: json.RawMessage(`"AP8="`)},
		{FieldID: 7, Value: json.RawMessage(`"123e4567-e89b-12d3-a456-426614174000"`)},
		{FieldID: 8, Value: json.RawMessage(`0.1`)},
	}
	s := dataSplit("data.parquet", size, 2)
	s.Data.Identity = identity
	got, _ := readAll(t, newReader(testFS(dir)), s, schema)
	want := `{"id":1,"region":"eu","day":-86400000,"dec":"-0.05","when":-1,"bin":"AP8=",` +
		`"u":"123e4567-e89b-12d3-a456-426614174000","f":0.1,"n_long":42,"n_str":"défaut","n_date":1704153600000,` +
		`"n_time":43200000001,"n_ts":-1,"n_tstz":1704164645123,"n_tsns":1704164645123,"n_dec":"12.30","n_bin":"Cv8=",` +
		`"n_fixed":"aGk=","n_uuid":"123e4567-e89b-12d3-a456-426614174000","n_bool":true,"n_double":0.1,"n_float":0.1,` +
		`"n_int":-7,"n_struct":{"a":5,"b":null},"n_null":null,"n_unknown":null}`
	if len(got) != 2 || got[0] != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}

	t.Run("iso and binary as string pinned by the split", func(t *testing.T) {
		s := s
		s.Columns = []int{1, 5, 6, 14, 15}
		s.Encoding = token.Encoding{ISOTimestamps: true, BinaryAsString: true}
		got, _ := readAll(t, newReader(testFS(dir)), s, schema)
		want := `{"id":1,"when":"1969-12-31T23:59:59.999000Z","bin":"\u0000\ufffd","n_tstz":"2024-01-02T03:04:05.123456Z","n_tsns":"2024-01-02T03:04:05.123456789Z"}`
		if got[0] != want {
			t.Errorf("got  %s\nwant %s", got[0], want)
		}
	})
	t.Run("invalid binary as string counted once per row", func(t *testing.T) {
		s := s
		s.Columns = []int{6}
		_, st := readAll(t, newReader(testFS(dir), reader.WithBinaryAsString(true)), s, schema)
		if st.InvalidUTF8 != 2 {
			t.Errorf("InvalidUTF8 = %d, want 2", st.InvalidUTF8)
		}
	})

	type delRow struct {
		ID     int64  `parquet:"id,id(1)"`
		Region string `parquet:"region,id(2)"`
		NLong  int64  `parquet:"n_long,id(9)"`
	}
	pd, zd := writeParquet(t, dir, "eq.parquet", []delRow{{1, "eu", 42}, {2, "us", 41}})
	eq := func(ids ...int) token.DeleteFile {
		return token.DeleteFile{Kind: token.DeleteEquality, Path: pd, Format: "PARQUET", Size: zd, EqualityIDs: ids}
	}
	cases := []struct {
		name string
		del  token.DeleteFile
		want []int64
	}{
		{"identity value as key", eq(1, 2), []int64{2}},
		{"initial default as key", eq(1, 9), []int64{2}},
		{"both", eq(1, 2, 9), []int64{2}},
		{"constant key alone", eq(2), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := s
			s.Columns = []int{1}
			s.Deletes = []token.DeleteFile{tc.del}
			got, _ := readAll(t, newReader(testFS(dir)), s, schema)
			var ids []int64
			for _, l := range got {
				var r struct{ ID int64 }
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("ids %v, want %v", ids, tc.want)
			}
		})
	}

	t.Run("bad values", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			identity []token.IdentityValue
			schema   *iceberg.Schema
		}{
			{"identity string for a long", []token.IdentityValue{{FieldID: 2, Value: json.RawMessage(`"x"`)}},
				iceberg.NewSchema(0, field(2, "r", iceberg.PrimitiveTypes.Int64))},
			{"identity int out of range", []token.IdentityValue{{FieldID: 2, Value: json.RawMessage(`3000000000`)}},
				iceberg.NewSchema(0, field(2, "r", iceberg.PrimitiveTypes.Int32))},
			{"default not a date", nil, parseSchema(t, `{"id":2,"name":"r","required":false,"type":"date","initial-default":"tomorrow"}`)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := dataSplit("data.parquet", size, 2)
				s.Data.Identity = tc.identity
				_, err := newReader(testFS(dir)).Open(context.Background(), s, tableOf(tc.schema))
				if !errors.Is(err, reader.ErrSchemaMismatch) {
					t.Errorf("got %v, want ErrSchemaMismatch", err)
				}
			})
		}
	})
}

// TestTypePromotion reads a file written before int→long, float→double,
// decimal(9,2)→decimal(18,2) and date→timestamp promotions next to one
// written after, with an equality delete file written before: keys match
// in the table's types.
func TestTypePromotion(t *testing.T) {
	type oldRow struct {
		ID  int32   `parquet:"id,id(1)"`
		F   float32 `parquet:"f,id(2)"`
		Dec int32   `parquet:"dec,id(3),decimal(2:9)"`
		Day int32   `parquet:"day,id(4),date"`
		DNs int32   `parquet:"dns,id(5),date"`
	}
	type newRow struct {
		ID  int64   `parquet:"id,id(1)"`
		F   float64 `parquet:"f,id(2)"`
		Dec int64   `parquet:"dec,id(3),decimal(2:18)"`
		Day int64   `parquet:"day,id(4),timestamp(microsecond)"`
		DNs int64   `parquet:"dns,id(5),timestamp(nanosecond)"`
	}
	type oldDelete struct {
		ID  int32 `parquet:"id,id(1)"`
		Day int32 `parquet:"day,id(4),date"`
	}
	type oldDecDelete struct {
		Dec int32   `parquet:"dec,id(3),decimal(2:9)"`
		F   float32 `parquet:"f,id(2)"`
	}
	dir := t.TempDir()
	const day = 19724 // 2024-01-02
	const dayMicros = int64(day) * 86_400_000_000
	_, zOld := writeParquet(t, dir, "old.parquet", []oldRow{
		{1, 0.5, 1230, day, day}, {2, 0.25, -5, -1, -1}, {3, 1, 7, day, day},
	})
	_, zNew := writeParquet(t, dir, "new.parquet", []newRow{
		{1, 0.5, 1230, dayMicros, dayMicros * 1000}, {2, 0.1, 99999999999, dayMicros + 1, 0}, {3, 1, 7, dayMicros, 0},
	})
	pd, zd := writeParquet(t, dir, "eq-old.parquet", []oldDelete{{1, day}, {3, day}})
	pd2, zd2 := writeParquet(t, dir, "eq-dec.parquet", []oldDecDelete{{-5, 0.25}, {7, 1}})
	schema := iceberg.NewSchema(2,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "f", iceberg.PrimitiveTypes.Float64),
		field(3, "dec", iceberg.DecimalTypeOf(18, 2)),
		field(4, "day", iceberg.PrimitiveTypes.TimestampTz),
		field(5, "dns", iceberg.PrimitiveTypes.TimestampNs),
	)
	byDay := token.DeleteFile{Kind: token.DeleteEquality, Path: pd, Format: "PARQUET", Size: zd, EqualityIDs: []int{1, 4}}
	byDec := token.DeleteFile{Kind: token.DeleteEquality, Path: pd2, Format: "PARQUET", Size: zd2, EqualityIDs: []int{3, 2}}
	cases := []struct {
		name string
		file string
		size int64
		dels []token.DeleteFile
		opts []reader.Option
		want []string
	}{
		{"old file, new types", "old.parquet", zOld, nil, nil, []string{
			`{"id":1,"f":0.5,"dec":"12.30","day":1704153600000,"dns":1704153600000}`,
			`{"id":2,"f":0.25,"dec":"-0.05","day":-86400000,"dns":-86400000}`,
			`{"id":3,"f":1,"dec":"0.07","day":1704153600000,"dns":1704153600000}`,
		}},
		{"old file iso", "old.parquet", zOld, nil, []reader.Option{reader.WithISOTimestamps(true)}, []string{
			`{"id":1,"f":0.5,"dec":"12.30","day":"2024-01-02T00:00:00.000000Z","dns":"2024-01-02T00:00:00.000000000Z"}`,
			`{"id":2,"f":0.25,"dec":"-0.05","day":"1969-12-31T00:00:00.000000Z","dns":"1969-12-31T00:00:00.000000000Z"}`,
			`{"id":3,"f":1,"dec":"0.07","day":"2024-01-02T00:00:00.000000Z","dns":"2024-01-02T00:00:00.000000000Z"}`,
		}},
		{"old deletes on old file", "old.parquet", zOld, []token.DeleteFile{byDay, byDec}, nil, nil},
		{"old deletes on new file", "new.parquet", zNew, []token.DeleteFile{byDay, byDec}, nil, []string{
			`{"id":2,"f":0.1,"dec":"999999999.99","day":1704153600000,"dns":0}`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := dataSplit(tc.file, tc.size, 3)
			s.Deletes = tc.dels
			got, _ := readAll(t, newReader(testFS(dir), tc.opts...), s, schema)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", join(got), join(tc.want))
			}
		})
	}
}

// TestNameMapping reads a data file and an equality delete file written
// without field ids through the table's name mapping, including renamed
// columns (aliases) and nested struct, list and map fields.
func TestNameMapping(t *testing.T) {
	type point struct {
		X int32  `parquet:"x"`
		Y string `parquet:"old_y"`
	}
	type row struct {
		ID    int64            `parquet:"id"`
		Name  string           `parquet:"name"`
		P     point            `parquet:"p"`
		L     []point          `parquet:"l,list"`
		M     map[string]int32 `parquet:"m"`
		Extra string           `parquet:"unmapped"`
	}
	type delRow struct {
		ID int64 `parquet:"id"`
	}
	dir := t.TempDir()
	_, size := writeParquet(t, dir, "data.parquet", []row{
		{1, "a", point{1, "y1"}, []point{{2, "y2"}}, map[string]int32{"k": 3}, "junk"},
		{2, "b", point{4, "y4"}, nil, nil, "junk"},
	})
	pd, zd := writeParquet(t, dir, "eq.parquet", []delRow{{2}})
	pt := func(x, y int) *iceberg.StructType {
		return &iceberg.StructType{FieldList: []iceberg.NestedField{
			field(x, "x", iceberg.PrimitiveTypes.Int32), field(y, "y", iceberg.PrimitiveTypes.String),
		}}
	}
	schema := iceberg.NewSchema(3,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "full_name", iceberg.PrimitiveTypes.String),
		field(3, "p", pt(4, 5)),
		field(6, "l", &iceberg.ListType{ElementID: 7, Element: pt(8, 9)}),
		field(10, "m", &iceberg.MapType{KeyID: 11, KeyType: iceberg.PrimitiveTypes.String, ValueID: 12, ValueType: iceberg.PrimitiveTypes.Int32}),
		field(13, "added", iceberg.PrimitiveTypes.String),
	)
	var nm iceberg.NameMapping
	if err := json.Unmarshal([]byte(`[
		{"field-id":1,"names":["id"]},
		{"field-id":2,"names":["name","full_name"]},
		{"field-id":3,"names":["p"],"fields":[{"field-id":4,"names":["x"]},{"field-id":5,"names":["old_y","y"]}]},
		{"field-id":6,"names":["l"],"fields":[{"field-id":7,"names":["element"],"fields":[
			{"field-id":8,"names":["x"]},{"field-id":9,"names":["old_y","y"]}]}]},
		{"field-id":10,"names":["m"],"fields":[{"field-id":11,"names":["key"]},{"field-id":12,"names":["value"]}]},
		{"field-id":13,"names":["added"]}]`), &nm); err != nil {
		t.Fatal(err)
	}
	s := dataSplit("data.parquet", size, 2)
	ts := token.TableSchema{Schema: schema, NameMapping: nm}
	got, _ := readTable(t, newReader(testFS(dir)), s, ts)
	want := []string{
		`{"id":1,"full_name":"a","p":{"x":1,"y":"y1"},"l":[{"x":2,"y":"y2"}],"m":{"k":3},"added":null}`,
		`{"id":2,"full_name":"b","p":{"x":4,"y":"y4"},"l":[],"m":{},"added":null}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", join(got), join(want))
	}

	s.Deletes = []token.DeleteFile{{Kind: token.DeleteEquality, Path: pd, Format: "PARQUET", Size: zd, EqualityIDs: []int{1}}}
	got, _ = readTable(t, newReader(testFS(dir)), s, ts)
	if !slices.Equal(got, want[:1]) {
		t.Errorf("with the delete file: got\n%s", join(got))
	}

	for _, tc := range []struct {
		name  string
		split token.Split
	}{
		{"data file", dataSplit("data.parquet", size, 2)},
		{"equality delete file", s},
	} {
		t.Run("no mapping: "+tc.name, func(t *testing.T) {
			sp := tc.split
			if tc.name == "equality delete file" {
				// A data file with ids, so only the delete file lacks them.
				withIDs, _ := writeIDs(t, dir, 3)
				sp.Data = withIDs.Data
			}
			_, err := newReader(testFS(dir)).Open(context.Background(), sp, tableOf(schema))
			if !errors.Is(err, reader.ErrNoFieldIDs) || !strings.Contains(err.Error(), "name mapping") {
				t.Errorf("got %v, want ErrNoFieldIDs naming the missing name mapping", err)
			}
		})
	}
}
