package reader_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// pointWKB is the little-endian WKB of POINT (x y).
func pointWKB(x, y float64) []byte {
	b := []byte{1, 1, 0, 0, 0}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

// writeSchemaParquet writes rows with an explicit parquet-go schema as the
// file name in dir and returns its split.
func writeSchemaParquet[T any](t *testing.T, dir, name string, schema *parquet.Schema, rows []T) token.Split {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, schema)
	if _, err := w.Write(rows); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", name, err)
	}
	if err := writeFile(filepath.Join(dir, name), buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return dataSplit(name, int64(buf.Len()), int64(len(rows)))
}

// TestVariantColumns reads variant columns as parquet-go writes them,
// unshredded and shredded (an object of a typed field and a list, which a
// value holds in part or whole when it does not fit), each value as the
// JSON it encodes.
func TestVariantColumns(t *testing.T) {
	shredded, err := parquet.ShreddedVariant(parquet.Group{
		"a":    parquet.Int(64),
		"tags": parquet.List(parquet.String()),
	})
	if err != nil {
		t.Fatal(err)
	}
	schema := parquet.NewSchema("t", parquet.Group{
		"id": parquet.FieldID(parquet.Int(64), 1),
		"v":  parquet.FieldID(parquet.Optional(parquet.Variant()), 2),
		"s":  parquet.FieldID(parquet.Optional(shredded), 3),
	})
	type row struct {
		ID int64 `parquet:"id"`
		V  any   `parquet:"v"`
		S  any   `parquet:"s"`
	}
	rows := []row{
		{1, map[string]any{"b": []any{int64(1), "x", nil}, "a": 1.5, "c": map[string]any{}}, map[string]any{"a": int64(7), "tags": []any{"p", "q"}}},
		{2, "text", map[string]any{"a": int64(8), "z": true}},              // a field typed_value lacks: in value
		{3, int64(-3), map[string]any{"a": "not a long", "tags": []any{}}}, // a field of another type
		{4, nil, "a scalar"},
		{5, []any{}, map[string]any{"tags": []any{"r", int64(9)}}}, // an element of another type
		{6, false, nil},
	}
	dir := t.TempDir()
	sp := writeSchemaParquet(t, dir, "v.parquet", schema, rows)
	ts := tableOf(iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "v", iceberg.VariantType{}),
		field(3, "s", iceberg.VariantType{}),
		field(4, "missing", iceberg.VariantType{}),
	))
	got, _ := readTable(t, newReader(testFS(dir)), sp, ts)
	want := []string{
		`{"id":1,"v":{"a":1.5,"b":[1,"x",null],"c":{}},"s":{"a":7,"tags":["p","q"]},"missing":null}`,
		`{"id":2,"v":"text","s":{"a":8,"z":true},"missing":null}`,
		`{"id":3,"v":-3,"s":{"a":"not a long","tags":[]},"missing":null}`,
		`{"id":4,"v":null,"s":"a scalar","missing":null}`,
		`{"id":5,"v":[],"s":{"tags":["r",9]},"missing":null}`,
		`{"id":6,"v":false,"s":null,"missing":null}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestGeoColumns reads geometry and geography columns with and without the
// Parquet logical type, as WKT, and as base64 WKB when asked.
func TestGeoColumns(t *testing.T) {
	schema := parquet.NewSchema("t", parquet.Group{
		"id":    parquet.FieldID(parquet.Int(64), 1),
		"g":     parquet.FieldID(parquet.Optional(parquet.Geometry("")), 2),
		"gg":    parquet.FieldID(parquet.Optional(parquet.Geography("", format.Spherical)), 3),
		"plain": parquet.FieldID(parquet.Optional(parquet.Leaf(parquet.ByteArrayType)), 4),
	})
	type row struct {
		ID    int64  `parquet:"id"`
		G     []byte `parquet:"g"`
		GG    []byte `parquet:"gg"`
		Plain []byte `parquet:"plain"`
	}
	rows := []row{{1, pointWKB(1, 2), pointWKB(-71.06, 42.36), pointWKB(0.5, -0.25)}, {2, nil, nil, nil}}
	dir := t.TempDir()
	sp := writeSchemaParquet(t, dir, "g.parquet", schema, rows)
	ts := tableOf(iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "g", iceberg.GeometryType{}),
		field(3, "gg", iceberg.GeographyType{}),
		field(4, "plain", iceberg.GeometryType{}),
	))
	got, _ := readTable(t, newReader(testFS(dir)), sp, ts)
	want := `{"id":1,"g":"POINT (1 2)","gg":"POINT (-71.06 42.36)","plain":"POINT (0.5 -0.25)"}` + "\n" +
		`{"id":2,"g":null,"gg":null,"plain":null}`
	if strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}

	t.Run("base64 WKB when the split asks, whatever binaryAsString says", func(t *testing.T) {
		wkb := sp
		wkb.Encoding = token.Encoding{GeoWKB: true, BinaryAsString: true}
		got, _ := readTable(t, newReader(testFS(dir)), wkb, ts)
		b64 := base64.StdEncoding.EncodeToString
		want := `{"id":1,"g":"` + b64(pointWKB(1, 2)) + `","gg":"` + b64(pointWKB(-71.06, 42.36)) + `","plain":"` + b64(pointWKB(0.5, -0.25)) + `"}`
		if got[0] != want {
			t.Errorf("got  %s\nwant %s", got[0], want)
		}
	})

	t.Run("a damaged value ends the stream with ErrCorruptFile", func(t *testing.T) {
		bad := writeSchemaParquet(t, dir, "bad.parquet", schema, []row{{1, pointWKB(1, 2), nil, nil}, {2, []byte{1, 1, 0, 0}, nil, nil}})
		st, err := newReader(testFS(dir)).Open(context.Background(), bad, ts)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var out bytes.Buffer
		if err := st.Run(context.Background(), &out, nil); !errors.Is(err, reader.ErrCorruptFile) || !strings.Contains(err.Error(), "row 1") {
			t.Errorf("run: %v, want ErrCorruptFile at row 1", err)
		}
	})
}

// nullAnnotated is a physical type annotated with Parquet's NULL (UNKNOWN)
// logical type, as writers store a column of nothing but nulls.
type nullAnnotated struct{ parquet.Type }

func (nullAnnotated) LogicalType() *format.LogicalType {
	return &format.LogicalType{Value: &format.NullType{}}
}

// TestUnknownStored: an unknown-typed field reads as null whether a file
// stores it or not, whatever the physical type of the column (iceberg-go
// and PyArrow write INT32 annotated NULL), and a NULL-annotated column
// reads as null for a field of any type.
func TestUnknownStored(t *testing.T) {
	schema := parquet.NewSchema("t", parquet.Group{
		"id":  parquet.FieldID(parquet.Int(64), 1),
		"u32": parquet.FieldID(parquet.Optional(parquet.Leaf(nullAnnotated{parquet.Int32Type})), 2),
		"ub":  parquet.FieldID(parquet.Optional(parquet.Leaf(nullAnnotated{parquet.ByteArrayType})), 3),
		"ud":  parquet.FieldID(parquet.Optional(parquet.Leaf(nullAnnotated{parquet.DoubleType})), 4),
		"st":  parquet.FieldID(parquet.Optional(parquet.Group{"x": parquet.FieldID(parquet.Optional(parquet.Leaf(nullAnnotated{parquet.Int32Type})), 6)}), 5),
	})
	type st struct {
		X *int32 `parquet:"x"`
	}
	type row struct {
		ID  int64    `parquet:"id"`
		U32 *int32   `parquet:"u32"`
		UB  []byte   `parquet:"ub"`
		UD  *float64 `parquet:"ud"`
		St  *st      `parquet:"st"`
	}
	dir := t.TempDir()
	sp := writeSchemaParquet(t, dir, "u.parquet", schema, []row{{ID: 1, St: &st{}}, {ID: 2}})
	ts := tableOf(iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "u32", iceberg.PrimitiveTypes.Unknown),
		field(3, "ub", iceberg.PrimitiveTypes.Unknown),
		field(4, "ud", iceberg.PrimitiveTypes.Float64),
		field(5, "st", &iceberg.StructType{FieldList: []iceberg.NestedField{field(6, "x", iceberg.PrimitiveTypes.Unknown)}}),
		field(7, "absent", iceberg.PrimitiveTypes.Unknown),
	))
	got, _ := readTable(t, newReader(testFS(dir)), sp, ts)
	want := `{"id":1,"u32":null,"ub":null,"ud":null,"st":{"x":null},"absent":null}` + "\n" +
		`{"id":2,"u32":null,"ub":null,"ud":null,"st":null,"absent":null}`
	if strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

// TestV3TypesTable reads every snapshot of tablegen's V3Types table
// (variants unshredded and shredded by iceberg-go and parquet-go, geometry
// and geography with and without their logical types, unknown stored and
// not, deletion vectors) and holds the rows to the ones the builder wrote
// out by hand, byte for byte and in file order.
func TestV3TypesTable(t *testing.T) {
	ctx := context.Background()
	cat := catalogtest.Local(t, t.TempDir())
	b, err := tablegen.V3Types(ctx, cat, table.Identifier{"v3", "t"})
	if err != nil {
		t.Fatal(err)
	}
	fsys := catalog.NewFS(nil, nil)
	for i, want := range b.Snapshots {
		tasks, err := b.Table.Scan(table.WithSnapshotID(want.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(tasks, func(a, b table.FileScanTask) int { return strings.Compare(a.File.FilePath(), b.File.FilePath()) })
		schema := snapshotSchema(t, b.Table, want.SnapshotID)
		var got []string
		for _, task := range tasks {
			sp, err := splits.FromTask(b.Table.Metadata(), b.Table.MetadataLocation(), want.SnapshotID, schema.ID, task)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := runSplit(t, ctx, newReader(fsys), sp, token.TableSchema{Schema: schema})
			got = append(got, strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")...)
		}
		if !slices.Equal(got, want.Rows) {
			t.Errorf("snapshot %d (%s):\n got %s\nwant %s", i+1, want.Doc, strings.Join(got, "\n     "), strings.Join(want.Rows, "\n     "))
		}
	}
}

// TestVariantDamagedInFile: a damaged variant ends the stream, at its row,
// with ErrCorruptFile after the rows before it.
func TestVariantDamagedInFile(t *testing.T) {
	schema := parquet.NewSchema("t", parquet.Group{
		"id": parquet.FieldID(parquet.Int(64), 1),
		"v":  parquet.FieldID(parquet.Optional(parquet.Variant()), 2),
	})
	type raw struct {
		Metadata []byte
		Value    []byte
	}
	type row struct {
		ID int64 `parquet:"id"`
		V  *raw  `parquet:"v"`
	}
	meta := []byte{1, 1, 0, 1, 'a'}
	rows := []row{
		{1, &raw{meta, []byte{2, 1, 0, 0, 1, 0}}}, // {"a":null}
		{2, &raw{meta, []byte{2, 1, 7, 0, 1, 0}}}, // a key id past the dictionary
	}
	dir := t.TempDir()
	sp := writeSchemaParquet(t, dir, "bad.parquet", schema, rows)
	ts := tableOf(iceberg.NewSchema(0, field(1, "id", iceberg.PrimitiveTypes.Int64), field(2, "v", iceberg.VariantType{})))
	st, err := newReader(testFS(dir), reader.WithBatchRows(1)).Open(context.Background(), sp, ts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	err = st.Run(context.Background(), &out, nil)
	if !errors.Is(err, reader.ErrCorruptFile) || !strings.Contains(err.Error(), "row 1") || !strings.Contains(err.Error(), "field id 7") {
		t.Errorf("run: %v, want ErrCorruptFile at row 1 naming the field id", err)
	}
	if out.String() != `{"id":1,"v":{"a":null}}`+"\n" {
		t.Errorf("rows before the damage: %q", out.String())
	}
}

// TestNestedVariants reads variants inside a list and a struct, where
// their columns repeat and nest with the others.
func TestNestedVariants(t *testing.T) {
	shredded, err := parquet.ShreddedVariant(parquet.Group{"k": parquet.Int(64)})
	if err != nil {
		t.Fatal(err)
	}
	schema := parquet.NewSchema("t", parquet.Group{
		"id": parquet.FieldID(parquet.Int(64), 1),
		"lv": parquet.FieldID(parquet.Optional(parquet.List(parquet.FieldID(parquet.Optional(shredded), 3))), 2),
		"st": parquet.FieldID(parquet.Optional(parquet.Group{"w": parquet.FieldID(parquet.Optional(parquet.Variant()), 5)}), 4),
	})
	type st struct {
		W any `parquet:"w"`
	}
	type row struct {
		ID int64 `parquet:"id"`
		LV []any `parquet:"lv"`
		St *st   `parquet:"st"`
	}
	rows := []row{
		{1, []any{map[string]any{"k": int64(1)}, "x", nil, map[string]any{"k": int64(2), "j": false}}, &st{[]any{int64(1)}}},
		{2, nil, nil},
		{3, []any{}, &st{nil}},
		{4, []any{map[string]any{}}, &st{map[string]any{"a": "b"}}},
	}
	dir := t.TempDir()
	sp := writeSchemaParquet(t, dir, "n.parquet", schema, rows)
	ts := tableOf(iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "lv", &iceberg.ListType{ElementID: 3, Element: iceberg.VariantType{}}),
		field(4, "st", &iceberg.StructType{FieldList: []iceberg.NestedField{field(5, "w", iceberg.VariantType{})}}),
	))
	got, _ := readTable(t, newReader(testFS(dir)), sp, ts)
	want := []string{
		`{"id":1,"lv":[{"k":1},"x",null,{"j":false,"k":2}],"st":{"w":[1]}}`,
		`{"id":2,"lv":null,"st":null}`,
		`{"id":3,"lv":[],"st":{"w":null}}`,
		`{"id":4,"lv":[{}],"st":{"w":{"a":"b"}}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
