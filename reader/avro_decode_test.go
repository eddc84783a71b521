package reader_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// The Avro files of these tests are encoded by hand where the writer the
// other tests use (github.com/twmb/avro/ocf) never goes: arrays and maps in
// several blocks, each with its byte size (a negative count, as Java's
// BlockingBinaryEncoder writes them), a map that writes a key twice, enums,
// and a union whose null comes second.

// avroBlocks appends items as the blocks of an Avro array or map, per
// items a block (all of them in one when per is 0), each with its byte
// size when sized, then the end marker.
func appendAvroBlocks(b []byte, items [][]byte, per int, sized bool) []byte {
	if per <= 0 {
		per = max(1, len(items))
	}
	for chunk := range slices.Chunk(items, per) {
		body := bytes.Join(chunk, nil)
		if sized {
			b = binary.AppendVarint(b, -int64(len(chunk)))
			b = binary.AppendVarint(b, int64(len(body)))
		} else {
			b = binary.AppendVarint(b, int64(len(chunk)))
		}
		b = append(b, body...)
	}
	return binary.AppendVarint(b, 0)
}

// appendAllTypes appends r as a record of allTypesAvro, its tags and
// attrs framed by appendAvroBlocks.
func appendAllTypes(b []byte, r allTypesRow, per int, sized bool) []byte {
	// optional appends a union of null and a value: branch 0 is null.
	optional := func(b []byte, present bool, value func([]byte) []byte) []byte {
		if !present {
			return binary.AppendVarint(b, 0)
		}
		return value(binary.AppendVarint(b, 1))
	}
	b = binary.AppendVarint(b, r.ID)
	b = optional(b, r.Name != nil, func(b []byte) []byte { return appendAvroString(b, *r.Name) })
	b = optional(b, r.Score != nil, func(b []byte) []byte { return binary.LittleEndian.AppendUint64(b, math.Float64bits(*r.Score)) })
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r.F))
	b = append(b, map[bool]byte{false: 0, true: 1}[r.Flag])
	b = binary.AppendVarint(b, int64(r.Day))
	b = optional(b, r.TS != nil, func(b []byte) []byte { return binary.AppendVarint(b, *r.TS) })
	b = binary.BigEndian.AppendUint64(b, uint64(r.Amt))
	b = append(append(b, r.Big[:]...), r.U[:]...)
	b = optional(b, r.Bin != nil, func(b []byte) []byte { return appendAvroString(b, string(r.Bin)) })
	var tags [][]byte
	for _, s := range r.Tags {
		tags = append(tags, appendAvroString(nil, s))
	}
	b = appendAvroBlocks(b, tags, per, sized)
	b = binary.AppendVarint(b, r.T)
	b = binary.AppendVarint(b, r.TSNS)
	var attrs [][]byte
	for k, v := range r.Attrs {
		attrs = append(attrs, binary.AppendVarint(appendAvroString(nil, k), int64(v)))
	}
	b = appendAvroBlocks(b, attrs, per, sized)
	return optional(b, r.Inner != nil, func(b []byte) []byte {
		b = binary.AppendVarint(b, int64(r.Inner.A))
		return optional(b, r.Inner.B != nil, func(b []byte) []byte { return appendAvroString(b, *r.Inner.B) })
	})
}

// TestAvroBlockFraming reads the rows of allTypesRows encoded by hand with
// their arrays and maps in blocks of one item and of two, with and without
// byte sizes, in every codec, every column and through projections (which
// skip the other columns, by the byte sizes where there are some), and
// wants the bytes of the same rows in Parquet.
func TestAvroBlockFraming(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pq, _ := allTypesRows(300)
	_, pqSize := writeParquet(t, dir, "d.parquet", pq)
	schema := tableOf(allTypesSchema())
	r := newReader(testFS(dir))
	for _, per := range []int{1, 2} {
		for _, sized := range []bool{false, true} {
			var payload []byte
			for _, row := range pq {
				payload = appendAllTypes(payload, row, per, sized)
			}
			for c, codec := range avroCodecs {
				file := avroBlock{schema: allTypesAvro, codec: uint8(c), count: int64(len(pq)), payload: payload}.file()
				fsys := &overlayIO{IO: testFS(dir), path: bucket + "/d.avro", data: file}
				for _, cols := range [][]int{nil, {1}, {20, 9}, {12}, {15, 2}, {11, 13, 14}} {
					ps, as := dataSplit("d.parquet", pqSize, int64(len(pq))), avroSplit("d.avro", int64(len(file)), int64(len(pq)))
					ps.Columns, as.Columns = cols, cols
					var want, got bytes.Buffer
					if err := readSplit(context.Background(), r, ps, schema, &want); err != nil {
						t.Fatal(err)
					}
					if err := readSplit(context.Background(), newReader(fsys), as, schema, &got); err != nil {
						t.Fatalf("%d an item a block, sized %v, %s, columns %v: %v", per, sized, codec, cols, err)
					}
					if !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("%d an item a block, sized %v, %s, columns %v: %s", per, sized, codec, cols, firstDiff(got.Bytes(), want.Bytes()))
					}
				}
			}
		}
	}
}

// nestedMapAvro is a map of maps, beside a long.
const nestedMapAvro = `{"type":"record","name":"t","fields":[
 {"name":"m","type":{"type":"map","values":{"type":"map","values":"long","key-id":5,"value-id":6},"key-id":3,"value-id":4},"field-id":1},
 {"name":"id","type":"long","field-id":2}]}`

// nestedMapTable is nestedMapAvro's table.
func nestedMapTable() token.TableSchema {
	return tableOf(iceberg.NewSchema(0,
		field(1, "m", &iceberg.MapType{KeyID: 3, KeyType: iceberg.PrimitiveTypes.String, ValueID: 4, ValueRequired: true,
			ValueType: &iceberg.MapType{KeyID: 5, KeyType: iceberg.PrimitiveTypes.String, ValueID: 6,
				ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: true}}),
		field(2, "id", iceberg.PrimitiveTypes.Int64)))
}

// avroEntry is one entry of an Avro map of longs.
func avroEntry(key string, value int64) []byte {
	return binary.AppendVarint(appendAvroString(nil, key), value)
}

// TestAvroMapEntries writes a map's entries in the byte order of their
// keys, a key written twice (in another block) with its last value, inside
// a map and around one, and skips such maps, framed with byte sizes or
// not, when they are not projected.
func TestAvroMapEntries(t *testing.T) {
	t.Parallel()
	schema := nestedMapTable()
	for _, sized := range []bool{false, true} {
		// {"b": {"y":1, "x":2, "y":5}, "a": {}}, then {"b": {"z":3}, "c": {"k":4}}
		var rec []byte
		inner := func(entries ...[]byte) []byte { return appendAvroBlocks(nil, entries, 2, sized) }
		rec = appendAvroBlocks(rec, [][]byte{
			append(appendAvroString(nil, "b"), inner(avroEntry("y", 1), avroEntry("x", 2), avroEntry("y", 5))...),
			append(appendAvroString(nil, "a"), inner()...),
			append(appendAvroString(nil, "b"), inner(avroEntry("z", 3))...),
			append(appendAvroString(nil, "c"), inner(avroEntry("k", 4))...),
		}, 2, sized)
		rec = binary.AppendVarint(rec, 7)
		file := avroBlock{schema: nestedMapAvro, count: 1, payload: rec}.file()
		for _, tc := range []struct {
			columns []int
			want    string
		}{
			{nil, `{"m":{"a":{},"b":{"z":3},"c":{"k":4}},"id":7}`},
			{[]int{2}, `{"id":7}`},
		} {
			got := readAvroBytes(t, file, tc.columns, schema)
			if got != tc.want+"\n" {
				t.Errorf("sized %v, columns %v: got %s, want %s", sized, tc.columns, got, tc.want)
			}
		}
	}
}

// enumAvro has an enum and a union whose null is its second branch.
const enumAvro = `{"type":"record","name":"t","fields":[
 {"name":"e","type":{"type":"enum","name":"color","symbols":["red","green","blue"]},"field-id":1},
 {"name":"s","type":["string","null"],"field-id":2}]}`

// enumTable is enumAvro's table.
func enumTable() token.TableSchema {
	return tableOf(iceberg.NewSchema(0, field(1, "e", iceberg.PrimitiveTypes.String), field(2, "s", iceberg.PrimitiveTypes.String)))
}

// TestAvroEnumAndUnionOrder reads an enum as its symbol and a union of a
// string and null either way round, projected or not.
func TestAvroEnumAndUnionOrder(t *testing.T) {
	t.Parallel()
	schema := enumTable()
	rec := binary.AppendVarint(nil, 2)
	rec = appendAvroString(binary.AppendVarint(rec, 0), "x")
	rec = binary.AppendVarint(rec, 0)
	rec = binary.AppendVarint(rec, 1)
	file := avroBlock{schema: enumAvro, count: 2, payload: rec}.file()
	for _, tc := range []struct {
		columns []int
		want    string
	}{
		{nil, `{"e":"blue","s":"x"}` + "\n" + `{"e":"red","s":null}` + "\n"},
		{[]int{2}, `{"s":"x"}` + "\n" + `{"s":null}` + "\n"},
		{[]int{1}, `{"e":"blue"}` + "\n" + `{"e":"red"}` + "\n"},
	} {
		if got := readAvroBytes(t, file, tc.columns, schema); got != tc.want {
			t.Errorf("columns %v: got\n%s want\n%s", tc.columns, got, tc.want)
		}
	}
}

// TestAvroDamagedRecords refuses records that their block cannot hold, or
// that say what their schema cannot, with ErrCorruptFile naming the
// record and the column: decoded, and skipped.
func TestAvroDamagedRecords(t *testing.T) {
	t.Parallel()
	mapSchema := nestedMapTable()
	enumSchema := enumTable()
	// A block of one entry whose byte size runs past the record's block.
	pastEnd := append(binary.AppendVarint(binary.AppendVarint(nil, -1), 1000), appendAvroString(nil, "a")...)
	for _, tc := range []struct {
		name    string
		schema  string
		table   token.TableSchema
		columns []int
		payload []byte
		want    string
	}{
		{"an enum symbol past the symbols", enumAvro, enumSchema, nil,
			append(binary.AppendVarint(nil, 3), 2), "record 0: column e: enum symbol 3 of 3"},
		{"a union branch past the branches", enumAvro, enumSchema, nil,
			append(binary.AppendVarint(nil, 0), 4), "record 0: column s: union branch 2 of 2"},
		{"a union branch past the branches, skipped", enumAvro, enumSchema, []int{1},
			append(binary.AppendVarint(nil, 0), 4), "record 0: column s: union branch 2 of 2"},
		{"a block's byte size past the block, skipped", nestedMapAvro, mapSchema, []int{2},
			pastEnd, "record 0: column m: a block of 1000 bytes"},
		{"a string past the block", nestedMapAvro, mapSchema, nil,
			append(binary.AppendVarint(nil, 1), appendAvroString(nil, "abc")[:2]...), "record 0: column m.key: a value of 3 bytes"},
		{"a block count past the bytes", nestedMapAvro, mapSchema, nil,
			binary.AppendVarint(nil, 1<<40), "record 0: column m: a block of 1099511627776 items"},
		{"a varint of 11 bytes", nestedMapAvro, mapSchema, []int{2},
			append(binary.AppendVarint(nil, 0), bytes.Repeat([]byte{0xff}, 10)...), "record 0: column id: a varint too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := avroBlock{schema: tc.schema, count: 1, payload: tc.payload}.file()
			fsys := &overlayIO{IO: testFS(t.TempDir()), path: bucket + "/d.avro", data: file}
			sp := avroSplit("d.avro", int64(len(file)), 1)
			sp.Columns = tc.columns
			err := readSplit(context.Background(), newReader(fsys), sp, tc.table, &bytes.Buffer{})
			if !errors.Is(err, reader.ErrCorruptFile) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrCorruptFile with %q", err, tc.want)
			}
		})
	}
}

// readAvroBytes reads the Avro file file as a data file of one split with
// the given columns, and returns the rows.
func readAvroBytes(t *testing.T, file []byte, columns []int, ts token.TableSchema) string {
	t.Helper()
	fsys := &overlayIO{IO: testFS(t.TempDir()), path: bucket + "/d.avro", data: file}
	sp := avroSplit("d.avro", int64(len(file)), 0)
	sp.Columns = columns
	var out bytes.Buffer
	if err := readSplit(context.Background(), newReader(fsys), sp, ts, &out); err != nil {
		t.Fatalf("columns %v: %v", columns, err)
	}
	return out.String()
}
