package tablegen

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/variant"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	geoarrow "github.com/geoarrow/geoarrow-go"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// The V3Types table: the Iceberg v3 types that have a physical layout of
// their own, each in the layouts the writers give it.
//
//	id long (required, 1), v variant (2), g geometry (3), gg geography (4),
//	u unknown (5)

// v3Row is one row of the V3Types table: a variant as the Go value
// arrow-go's variant builder takes (variantNullValue for a variant null,
// nil for SQL null), geometries as WKB, and the row as JSON, written out
// by hand.
type v3Row struct {
	id    int64
	v     any
	g, gg []byte
	json  string
}

// variantNullValue stands for a variant holding the variant null, which
// is not SQL null.
type variantNullValue struct{}

// wkbPoint and the others spell little-endian ISO WKB.
func wkbPoint(x, y float64) []byte { return wkbCoords(wkbHeader(1), x, y) }

func wkbHeader(code uint32) []byte { return binary.LittleEndian.AppendUint32([]byte{1}, code) }

func wkbCoords(b []byte, cs ...float64) []byte {
	for _, c := range cs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c))
	}
	return b
}

func wkbLine(cs ...float64) []byte {
	return wkbCoords(binary.LittleEndian.AppendUint32(wkbHeader(2), uint32(len(cs)/2)), cs...)
}

var v3Uuid = uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7")

// v3Unshredded are the rows of data file 1, written by iceberg-go without
// shredding: every kind of variant value, every geometry type.
var v3Unshredded = []v3Row{
	{1, map[string]any{"n": int64(1), "s": "x", "f": 1.5, "arr": []any{true, nil, "y"}, "obj": map[string]any{"k": int64(-2)}},
		wkbPoint(1, 2), wkbPoint(-71.06, 42.36),
		`{"id":1,"v":{"arr":[true,null,"y"],"f":1.5,"n":1,"obj":{"k":-2},"s":"x"},"g":"POINT (1 2)","gg":"POINT (-71.06 42.36)","u":null}`},
	{2, []any{int64(1), "two", 3.25}, wkbLine(0, 0, 1, 1, 2, 0), nil,
		`{"id":2,"v":[1,"two",3.25],"g":"LINESTRING (0 0, 1 1, 2 0)","gg":null,"u":null}`},
	{3, "plain string",
		wkbCoords(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(wkbHeader(3), 1), 5), 0, 0, 4, 0, 4, 4, 0, 4, 0, 0),
		wkbPoint(0, 0),
		`{"id":3,"v":"plain string","g":"POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))","gg":"POINT (0 0)","u":null}`},
	{4, variantNullValue{}, nil, nil, `{"id":4,"v":null,"g":null,"gg":null,"u":null}`},
	{5, nil, append(append(binary.LittleEndian.AppendUint32(wkbHeader(4), 2), wkbPoint(1, 2)...), wkbPoint(3, 4)...),
		wkbLine(10, 20, 30, 40),
		`{"id":5,"v":null,"g":"MULTIPOINT ((1 2), (3 4))","gg":"LINESTRING (10 20, 30 40)","u":null}`},
	{6, map[string]any{
		"d":   variant.DecimalValue[decimal.Decimal32]{Scale: 2, Value: decimal.Decimal32(1230)},
		"dt":  arrow.Date32(19_000),
		"ts":  arrow.Timestamp(1_700_000_000_123_456),
		"tm":  arrow.Time64(3_600_000_000),
		"b":   []byte{1, 2, 3},
		"u":   v3Uuid,
		"i8":  int8(-8),
		"fl":  float32(0.1),
		"esc": "quote \" 日本",
	}, append(append(binary.LittleEndian.AppendUint32(wkbHeader(7), 2), wkbPoint(1, 2)...), wkbLine(0, 0, 1, 1)...), nil,
		`{"id":6,"v":{"b":"AQID","d":"12.30","dt":1641600000000,"esc":"quote \" 日本","fl":0.1,"i8":-8,"tm":3600000000,` +
			`"ts":1700000000123,"u":"f79c3e09-677c-4bbd-a479-3f349cb785e7"},` +
			`"g":"GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))","gg":null,"u":null}`},
}

// v3Shredded are the rows of data file 2, written by iceberg-go with
// shredding on. It shreds b (a string in every row) and c (a list in one),
// and keeps a (a long, and a string in one row) in the value column, so
// that every object is partially shredded. The rows without c read as
// "c":[null]: iceberg-go v0.7.0's writer stores their c as a list of one
// element that holds nothing (definition level 4 under c.typed_value),
// where it should store c as missing, and every reader, iceberg-go's own
// too, reads that as a list of one null.
var v3Shredded = []v3Row{
	{7, map[string]any{"a": int64(10), "b": "p"}, wkbPoint(7, 7), nil, `{"id":7,"v":{"a":10,"b":"p","c":[null]},"g":"POINT (7 7)","gg":null,"u":null}`},
	{8, map[string]any{"a": int64(11), "b": "q"}, nil, nil, `{"id":8,"v":{"a":11,"b":"q","c":[null]},"g":null,"gg":null,"u":null}`},
	{9, map[string]any{"a": int64(12), "b": "r"}, nil, nil, `{"id":9,"v":{"a":12,"b":"r","c":[null]},"g":null,"gg":null,"u":null}`},
	{10, map[string]any{"a": int64(13), "b": "s", "c": []any{int64(1)}}, nil, nil,
		`{"id":10,"v":{"a":13,"b":"s","c":[1]},"g":null,"gg":null,"u":null}`},
	{11, map[string]any{"a": "fourteen", "b": "t"}, nil, nil, `{"id":11,"v":{"a":"fourteen","b":"t","c":[null]},"g":null,"gg":null,"u":null}`},
	{12, nil, nil, nil, `{"id":12,"v":null,"g":null,"gg":null,"u":null}`},
}

// v3ForeignRow is a row of data file 3, written with parquet-go: a
// variant shredded as an object of a long and a list of strings, geometry
// and geography with their Parquet logical types, and no unknown column.
type v3ForeignRow struct {
	ID int64  `parquet:"id"`
	V  any    `parquet:"v"`
	G  []byte `parquet:"g"`
	GG []byte `parquet:"gg"`
}

var v3Foreign = []struct {
	row  v3ForeignRow
	json string
}{
	{v3ForeignRow{14, map[string]any{"a": int64(1), "tags": []any{"x", "y"}}, wkbPoint(5, 5), wkbPoint(10, 20)},
		`{"id":14,"v":{"a":1,"tags":["x","y"]},"g":"POINT (5 5)","gg":"POINT (10 20)","u":null}`},
	{v3ForeignRow{15, map[string]any{"a": int64(2), "z": "extra"}, wkbLine(), nil},
		`{"id":15,"v":{"a":2,"z":"extra"},"g":"LINESTRING EMPTY","gg":null,"u":null}`},
	{v3ForeignRow{16, []any{int64(1), int64(2)}, nil, nil},
		`{"id":16,"v":[1,2],"g":null,"gg":null,"u":null}`},
	{v3ForeignRow{17, map[string]any{"tags": []any{"r", int64(9)}}, nil, wkbPoint(-1, -1)},
		`{"id":17,"v":{"tags":["r",9]},"g":null,"gg":"POINT (-1 -1)","u":null}`},
}

var v3Cols = []string{"id", "v", "g", "gg", "u"}

// V3TypesWKB is the WKB of the geometry column g of the V3Types row with
// the given id; nil when it has none.
func V3TypesWKB(id int64) []byte {
	for _, r := range append(slices.Clone(v3Unshredded), v3Shredded...) {
		if r.id == id {
			return r.g
		}
	}
	for _, r := range v3Foreign {
		if r.row.ID == id {
			return r.row.G
		}
	}
	return nil
}

// V3TypesSchema is the schema of the V3Types table.
func V3TypesSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.VariantType{}},
		iceberg.NestedField{ID: 3, Name: "g", Type: iceberg.GeometryType{}},
		iceberg.NestedField{ID: 4, Name: "gg", Type: iceberg.GeographyType{}},
		iceberg.NestedField{ID: 5, Name: "u", Type: iceberg.PrimitiveTypes.Unknown},
	)
}

// V3Types writes a format-version 3 table of the types that have a layout
// of their own (see V3TypesSchema), in five snapshots, and returns it with
// the expected rows of each:
//
//  1. data file 1 (iceberg-go, variants unshredded; geometries as plain
//     binary, as iceberg-go writes them; unknown stored as INT32 annotated
//     NULL): ids 1-6, a variant of every kind (objects, arrays, each
//     primitive, the variant null, SQL null) and every geometry type;
//  2. data file 2 (iceberg-go with write.parquet.shred-variants): ids 7-12,
//     objects that iceberg-go shreds in part into typed_value (see
//     v3Shredded), and SQL null (a value of another basic type would keep
//     iceberg-go from shredding at all);
//  3. data file 3 (parquet-go, a foreign writer): ids 14-17, a variant
//     shredded as {a long, tags list<string>} and values that fit it in part
//     or not at all, geometry and geography with the GEOMETRY and
//     GEOGRAPHY logical types, and no column for u;
//  4. a deletion vector on data file 1 (id 2) and data file 3 (id 15).
//  5. (schema 1) ts timestamp_ns added with an initial-default
//     (V3TypesTsDefault), which the earlier files' rows read, and data file
//     4 (parquet-go): ids 20-23 with ts stored (before 1970, below the
//     millisecond, null) and no column for v, g, gg or u.
//
// The builder fails unless data file 2 is shredded, so the table holds
// the layouts it says it holds. iceberg-go's ReadTasks reads snapshots 1
// and 2 as the rows say, and fails on the others (see
// Expected.OracleDiffers).
func V3Types(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
	tbl, err := icewrite.CreateTable(ctx, cat, ident, V3TypesSchema(), 3)
	if err != nil {
		return nil, err
	}
	b := &Built{}
	var rows []string
	live := func(deleted ...int64) []string {
		out := []string{}
		for _, r := range rows {
			gone := false
			for _, id := range deleted {
				gone = gone || strings.HasPrefix(r, fmt.Sprintf(`{"id":%d,`, id))
			}
			if !gone {
				out = append(out, r)
			}
		}
		return out
	}

	// 1. Unshredded.
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	batch, err := v3Batch(sc, v3Unshredded)
	if err != nil {
		return nil, err
	}
	tbl, first, err := icewrite.AppendBatch(ctx, tbl, 1, batch)
	if err != nil {
		return nil, err
	}
	for _, r := range v3Unshredded {
		rows = append(rows, r.json)
	}
	b.record(tbl, "variants unshredded, geometries as plain binary, unknown stored", v3Cols, live())

	// 2. Shredded by iceberg-go.
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.ParquetShredVariantsKey: "true"}); err != nil {
		return nil, fmt.Errorf("turn variant shredding on for %s: %w", identString(ident), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("turn variant shredding on for %s: %w", identString(ident), err)
	}
	if batch, err = v3Batch(sc, v3Shredded); err != nil {
		return nil, err
	}
	tbl, second, err := icewrite.AppendBatch(ctx, tbl, 2, batch)
	if err != nil {
		return nil, err
	}
	if err := requireShredded(ctx, tbl, second.FilePath()); err != nil {
		return nil, err
	}
	for _, r := range v3Shredded {
		rows = append(rows, r.json)
	}
	b.record(tbl, "variants shredded by iceberg-go", v3Cols, live())

	// 3. Written by parquet-go.
	third, err := writeV3Foreign(ctx, tbl)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{third}, nil); err != nil {
		return nil, err
	}
	for _, r := range v3Foreign {
		rows = append(rows, r.json)
	}
	b.record(tbl, "a shredded variant and logical-typed geometries written by parquet-go", v3Cols, live())
	b.Snapshots[2].OracleDiffers = oracleGeoLogical

	// 4. Deletion vectors.
	wfs, err := icewrite.WriteFS(ctx, tbl)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
	for _, d := range []struct {
		file string
		pos  int64
	}{{first.FilePath(), 1}, {third.FilePath(), 1}} {
		if err := w.Add(d.file, []int64{d.pos}, 0, nil); err != nil {
			return nil, fmt.Errorf("add deletion vector for %s: %w", d.file, err)
		}
	}
	loc := icewrite.DataPath(tbl, "dv-1.puffin")
	dvs, err := w.Flush(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("write deletion vector file %s: %w", loc, err)
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, dvs); err != nil {
		return nil, err
	}
	b.record(tbl, "deletion vectors of ids 2 and 15", v3Cols, live(2, 15))
	b.Snapshots[3].OracleDiffers = b.Snapshots[2].OracleDiffers

	// 5. A timestamp_ns column with an initial-default, and a file that
	// stores it.
	if tbl, err = updateSchema(ctx, tbl, func(u *table.UpdateSchema) {
		u.AddColumn([]string{"ts"}, iceberg.PrimitiveTypes.TimestampNs, "", false,
			iceberg.NewLiteral(iceberg.TimestampNano(V3TypesTsDefault)))
	}); err != nil {
		return nil, err
	}
	fifth, err := writeV3Timestamps(ctx, tbl)
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, []iceberg.DataFile{fifth}, nil); err != nil {
		return nil, err
	}
	var withTs []string
	for _, r := range live(2, 15) {
		withTs = append(withTs, strings.TrimSuffix(r, "}")+`,"ts":`+strconv.FormatInt(V3TypesTsDefault/1_000_000, 10)+"}")
	}
	for _, r := range v3Timestamps {
		withTs = append(withTs, fmt.Sprintf(`{"id":%d,"v":null,"g":null,"gg":null,"u":null,"ts":%s}`, r.ID, r.ms))
	}
	b.record(tbl, "ts timestamp_ns added with an initial-default; a file that stores it", append(slices.Clone(v3Cols), "ts"), withTs)
	b.Snapshots[4].OracleDiffers = b.Snapshots[2].OracleDiffers
	return b, nil
}

// V3TypesTsDefault is the initial-default of the V3Types column ts
// (timestamp_ns), in nanoseconds since the epoch: its rows in the files
// written before ts existed read it, as epoch milliseconds truncated.
const V3TypesTsDefault = 1_700_000_000_123_456_789

// v3TsRow is a row of the V3Types data file that stores ts, and nothing
// but id.
type v3TsRow struct {
	ID int64  `parquet:"id,id(1)"`
	Ts *int64 `parquet:"ts,id(6),optional,timestamp(nanosecond)"`
}

// v3Timestamps are the rows of that file, with ts as served (ms is the
// expected JSON value: epoch milliseconds truncated toward zero).
var v3Timestamps = []struct {
	v3TsRow
	ms string
}{
	{v3TsRow{20, ptr(int64(1_700_000_000_999_999_999))}, "1700000000999"},
	{v3TsRow{21, ptr(int64(-1_500_000))}, "-1"},
	{v3TsRow{22, ptr(int64(-500_000))}, "0"},
	{v3TsRow{23, nil}, jNull},
}

// writeV3Timestamps writes v3Timestamps with parquet-go as data file 4.
func writeV3Timestamps(ctx context.Context, tbl *table.Table) (iceberg.DataFile, error) {
	rows := make([]v3TsRow, len(v3Timestamps))
	for i, r := range v3Timestamps {
		rows[i] = r.v3TsRow
	}
	return writeForeignFile(ctx, tbl, DataFileName(4), rows)
}

// writeForeignFile writes rows with parquet-go as the unpartitioned data
// file name of tbl, and describes it for a commit.
func writeForeignFile[T any](ctx context.Context, tbl *table.Table, name string, rows []T, opts ...parquet.WriterOption) (iceberg.DataFile, error) {
	loc := icewrite.DataPath(tbl, name)
	size, err := icewrite.WriteParquetFile(ctx, tbl, loc, rows, opts...)
	if err != nil {
		return nil, err
	}
	db, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, loc, iceberg.ParquetFile,
		nil, nil, nil, int64(len(rows)), size)
	if err != nil {
		return nil, fmt.Errorf("describe data file %s: %w", loc, err)
	}
	return db.Build(), nil
}

// oracleGeoLogical is why iceberg-go v0.7.0's ReadTasks does not read the
// V3Types table from its third snapshot on.
const oracleGeoLogical = "iceberg-go cannot read a column with the Parquet GEOMETRY or GEOGRAPHY logical type " +
	"(cannot promote binary to geometry)"

// v3Batch builds the record batch of rows in the table's Arrow schema sc.
func v3Batch(sc *arrow.Schema, rows []v3Row) (arrow.RecordBatch, error) {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	vb, ok := rb.Field(1).(*extensions.VariantBuilder)
	if !ok {
		return nil, fmt.Errorf("%w: column v builds with %T, not a variant builder", ErrInvalidArgument, rb.Field(1))
	}
	for _, r := range rows {
		rb.Field(0).(*array.Int64Builder).Append(r.id)
		switch x := r.v.(type) {
		case nil:
			vb.AppendNull()
		default:
			var bld variant.Builder
			var err error
			if _, null := x.(variantNullValue); null {
				err = bld.AppendNull()
			} else {
				err = bld.Append(x)
			}
			if err != nil {
				return nil, fmt.Errorf("build variant of row %d: %w", r.id, err)
			}
			v, err := bld.Build()
			if err != nil {
				return nil, fmt.Errorf("build variant of row %d: %w", r.id, err)
			}
			vb.Append(v)
		}
		for i, g := range [][]byte{r.g, r.gg} {
			gb, ok := rb.Field(2 + i).(*geoarrow.WKBBuilder)
			if !ok {
				return nil, fmt.Errorf("%w: column %d builds with %T, not a WKB builder", ErrInvalidArgument, 2+i, rb.Field(2+i))
			}
			if g == nil {
				gb.AppendNull()
			} else {
				gb.Append(g)
			}
		}
		rb.Field(4).AppendNull()
	}
	return rb.NewRecordBatch(), nil
}

// requireShredded fails unless the variant column of the data file at
// path has a typed_value.
func requireShredded(ctx context.Context, tbl *table.Table, path string) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open file io of %s: %w", identString(tbl.Identifier()), err)
	}
	f, err := fsys.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return fmt.Errorf("read footer of %s: %w", path, err)
	}
	if v := pf.Root().Column("v"); v == nil || v.Column("typed_value") == nil {
		return fmt.Errorf("%w: iceberg-go did not shred the variants of %s", ErrInvalidArgument, path)
	}
	return nil
}

// writeV3Foreign writes data file 3 with parquet-go and describes it.
func writeV3Foreign(ctx context.Context, tbl *table.Table) (iceberg.DataFile, error) {
	shredded, err := parquet.ShreddedVariant(parquet.Group{
		"a":    parquet.Int(64),
		"tags": parquet.List(parquet.String()),
	})
	if err != nil {
		return nil, fmt.Errorf("shredded variant type: %w", err)
	}
	schema := parquet.NewSchema("table", parquet.Group{
		"id": parquet.FieldID(parquet.Int(64), 1),
		"v":  parquet.FieldID(parquet.Optional(shredded), 2),
		"g":  parquet.FieldID(parquet.Optional(parquet.Geometry("")), 3),
		"gg": parquet.FieldID(parquet.Optional(parquet.Geography("", format.Spherical)), 4),
	})
	rows := make([]v3ForeignRow, len(v3Foreign))
	for i, r := range v3Foreign {
		rows[i] = r.row
	}
	return writeForeignFile(ctx, tbl, DataFileName(3), rows, schema)
}
