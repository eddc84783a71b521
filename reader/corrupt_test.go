package reader_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/internal/cost"
	"github.com/druidiceberg/sidecar/reader"
)

// corruptRow is the row of the files TestCorruptFiles damages: a flat
// column of each width, and a decimal.
type corruptRow struct {
	ID    int64   `parquet:"id,id(1)"`
	Qty   int32   `parquet:"qty,id(2)"`
	Score float64 `parquet:"score,id(3)"`
	Amt   int64   `parquet:"amt,id(4),decimal(2:18)"`
	Name  string  `parquet:"name,id(5)"`
	Fx    [4]byte `parquet:"fx,id(6),dict"`
}

func corruptSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "qty", iceberg.PrimitiveTypes.Int32),
		field(3, "score", iceberg.PrimitiveTypes.Float64),
		field(4, "amt", iceberg.DecimalTypeOf(18, 2)),
		field(5, "name", iceberg.PrimitiveTypes.String),
		field(6, "fx", iceberg.FixedTypeOf(4)),
	)
}

// rewriteFooter decodes a Parquet file's footer, lets change damage it and
// writes the file back with the changed footer, as a damaged but readable
// file would be.
func rewriteFooter(t *testing.T, data []byte, change func(*format.FileMetaData)) []byte {
	t.Helper()
	n := len(data)
	start := n - 8 - int(binary.LittleEndian.Uint32(data[n-8:]))
	var md format.FileMetaData
	proto := &thrift.CompactProtocol{}
	if err := thrift.Unmarshal(proto, data[start:n-8], &md); err != nil {
		t.Fatal(err)
	}
	change(&md)
	footer, err := thrift.Marshal(proto, &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(data[:start]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// TestCorruptFiles holds the reader to the damage FuzzCorruptParquet found
// parquet-go reading without complaint (or, for LZ4, without end, before
// the reader's bounded codecs): each
// must be ErrCorruptFile, before a row is served.
func TestCorruptFiles(t *testing.T) {
	rows := make([]corruptRow, 8)
	for i := range rows {
		rows[i] = corruptRow{ID: int64(i), Qty: int32(10 * i), Score: float64(i) / 4, Amt: int64(100*i + 5), Name: strings.Repeat("n", i+1), Fx: [4]byte{byte(i % 3)}}
	}
	write := func(t *testing.T, opts ...parquet.WriterOption) []byte {
		var buf bytes.Buffer
		if err := parquet.Write(&buf, rows, opts...); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	leaf := func(md *format.FileMetaData, name string) *format.SchemaElement {
		for i := range md.Schema {
			if md.Schema[i].Name == name {
				return &md.Schema[i]
			}
		}
		t.Fatalf("no column %s", name)
		return nil
	}
	chunk := func(md *format.FileMetaData, i int) *format.ColumnMetaData {
		return &md.RowGroups[0].Columns[i].MetaData
	}
	footer := func(change func(md *format.FileMetaData)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			return rewriteFooter(t, write(t, parquet.Compression(&parquet.Zstd)), change)
		}
	}

	tests := []struct {
		name    string
		file    func(t *testing.T) []byte
		records int64 // what the manifest says; 0: len(rows)
		want    string
		err     error // nil: ErrCorruptFile
	}{
		{"a logical type narrower than the physical type", footer(func(md *format.FileMetaData) {
			leaf(md, "id").LogicalType.Value = &format.IntType{BitWidth: 32, IsSigned: true}
		}), 0, "reads it as INT32", nil},
		{"a repetition type out of range", footer(func(md *format.FileMetaData) {
			leaf(md, "name").RepetitionType.V = 5
		}), 0, "repetition type 5", nil},
		{"a physical type the chunk contradicts", footer(func(md *format.FileMetaData) {
			leaf(md, "score").Type.V = format.Float
		}), 0, "is FLOAT in the schema but its chunk is DOUBLE", nil},
		{"a chunk that starts inside another", footer(func(md *format.FileMetaData) {
			chunk(md, 1).DataPageOffset = chunk(md, 0).DataPageOffset
			chunk(md, 1).DictionaryPageOffset = chunk(md, 0).DictionaryPageOffset
		}), 0, "overlap", nil},
		{"a compressed chunk marked uncompressed", footer(func(md *format.FileMetaData) {
			chunk(md, 2).Codec = format.Uncompressed
		}), 0, "is uncompressed, but", nil},
		{"a decimal with more digits than its type holds", footer(func(md *format.FileMetaData) {
			leaf(md, "amt").LogicalType.Value = &format.DecimalType{Scale: 2, Precision: 38}
		}), 0, "more digits than", nil},
		{"fewer rows than the manifest counts", func(t *testing.T) []byte { return write(t) }, int64(len(rows)) + 1,
			"footer counts 8 rows (8 in its row groups), the manifest 9", nil},
		{"a row group shorter than its columns", footer(func(md *format.FileMetaData) {
			md.NumRows, md.RowGroups[0].NumRows = 7, 7
		}), 7, "values past the row group's last row", nil},
		{"a fixed(4) column of another length", footer(func(md *format.FileMetaData) {
			leaf(md, "fx").TypeLength.V = 12
		}), 0, "cannot be read as fx fixed[4]", reader.ErrSchemaMismatch},
		{"an LZ4 page that fails its checksum", func(t *testing.T) []byte {
			data := write(t, parquet.Compression(&lz4.Codec{}))
			pages := parquetPages(data)
			data[pages[0].payload] ^= 0xff
			return data
		}, 0, "checksum mismatch", nil},
		{"a footer length longer than the file", func(t *testing.T) []byte {
			data := write(t)
			binary.LittleEndian.PutUint32(data[len(data)-8:], 1<<28)
			return data
		}, 0, "footer is longer than the file's", nil},
		{"a zstd chunk marked LZ4", footer(func(md *format.FileMetaData) {
			for i := range md.RowGroups[0].Columns {
				chunk(md, i).Codec = format.Lz4Raw
			}
		}), 0, "LZ4", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := tc.file(t)
			if err := writeFile(filepath.Join(dir, "data.parquet"), data); err != nil {
				t.Fatal(err)
			}
			records := tc.records
			if records == 0 {
				records = int64(len(rows))
			}
			sp := dataSplit("data.parquet", int64(len(data)), records)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out bytes.Buffer
			err := readSplit(ctx, newReader(testFS(dir)), sp, tableOf(corruptSchema()), &out)
			want := tc.err
			if want == nil {
				want = reader.ErrCorruptFile
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v after %d bytes of rows, want %v saying %q", err, out.Len(), want, tc.want)
			}
		})
	}

	// The same file, intact, reads.
	dir := t.TempDir()
	data := write(t, parquet.Compression(&lz4.Codec{}))
	if err := writeFile(filepath.Join(dir, "data.parquet"), data); err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, newReader(testFS(dir)), dataSplit("data.parquet", int64(len(data)), int64(len(rows))), corruptSchema())
	if len(got) != len(rows) || got[7] != `{"id":7,"qty":70,"score":1.75,"amt":"7.05","name":"nnnnnnnn","fx":"AQAAAA=="}` {
		t.Fatalf("the intact LZ4 file reads as %q", got)
	}
}

// TestRunBombs damages one run header inside a page (dictionary indexes,
// definition levels, a DELTA_BINARY_PACKED block), with the page's CRC
// made to match, so that it asks for 2^31 values or more: parquet-go
// sized its decoding from such headers and exhausted memory. The reader
// must fail with ErrCorruptFile having allocated little.
func TestRunBombs(t *testing.T) {
	type row struct {
		ID   int64   `parquet:"id,id(1),delta"`
		Fx   [4]byte `parquet:"fx,id(6),dict"`
		Note *string `parquet:"note,id(10),optional"`
	}
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(6, "fx", iceberg.FixedTypeOf(4)),
		field(10, "note", iceberg.PrimitiveTypes.String),
	)
	rows := make([]row, 1000)
	note := "n"
	for i := range rows {
		rows[i] = row{ID: int64(i * i), Fx: [4]byte{byte(i % 3)}}
		if i%3 != 0 {
			rows[i].Note = &note
		}
	}
	// huge is a 5-byte varint: an RLE run header of 2^31 values, or (odd)
	// a bit-packed one of 2^34.
	huge := binary.AppendUvarint(nil, 1<<32)
	tests := []struct {
		name    string
		version int
		column  string
		at      func(h *format.PageHeader) int // where in the page's data the header to damage starts
		want    string
	}{
		{"dictionary indexes, data page v2", 2, "fx", func(h *format.PageHeader) int { return 1 }, "an RLE run of 2147483648 values"},
		{"dictionary indexes, data page v1", 1, "fx", func(h *format.PageHeader) int { return 1 }, "an RLE run of 2147483648 values"},
		{"definition levels, data page v2", 2, "note", func(h *format.PageHeader) int { return 0 }, "an RLE run of 2147483648 values"},
		{"definition levels, data page v1", 1, "note", func(h *format.PageHeader) int { return 4 }, "an RLE run of 2147483648 values"},
		// The third varint of the header, after the block size (128: 2
		// bytes) and the miniblock count (1 byte): the value count.
		{"a DELTA_BINARY_PACKED header", 2, "id", func(h *format.PageHeader) int { return 3 }, "claims 4294967296 values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := parquet.Write(&buf, rows, parquet.DataPageVersion(tc.version)); err != nil {
				t.Fatal(err)
			}
			data := damageFirstDataPage(t, buf.Bytes(), tc.column, func(h *format.PageHeader, page []byte) {
				at := tc.at(h)
				if h.DataPageHeaderV2.Valid {
					v := &h.DataPageHeaderV2.V
					if tc.column != "note" {
						at += int(v.RepetitionLevelsByteLength + v.DefinitionLevelsByteLength)
					}
				}
				copy(page[at:], huge)
			})
			dir := t.TempDir()
			if err := writeFile(filepath.Join(dir, "data.parquet"), data); err != nil {
				t.Fatal(err)
			}
			sp := dataSplit("data.parquet", int64(len(data)), int64(len(rows)))
			var out bytes.Buffer
			var err error
			allocated := cost.AllocatedBy(func() {
				err = readSplit(context.Background(), newReader(testFS(dir)), sp, tableOf(schema), &out)
			})
			if !errors.Is(err, reader.ErrCorruptFile) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrCorruptFile saying %q", err, tc.want)
			}
			if allocated > 16<<20 {
				t.Errorf("the read allocated %d MiB", allocated>>20)
			}
		})
	}
}

// damageFirstDataPage lets change damage the data of the first data page
// of a column of an uncompressed Parquet file, in place, and sets the
// page's CRC to match, so that only the damage itself can tell.
func damageFirstDataPage(t *testing.T, data []byte, column string, change func(*format.PageHeader, []byte)) []byte {
	t.Helper()
	data = bytes.Clone(data)
	n := len(data)
	var md format.FileMetaData
	proto := &thrift.CompactProtocol{}
	if err := thrift.Unmarshal(proto, data[n-8-int(binary.LittleEndian.Uint32(data[n-8:])):n-8], &md); err != nil {
		t.Fatal(err)
	}
	for _, cc := range md.RowGroups[0].Columns {
		if cc.MetaData.PathInSchema[0] != column {
			continue
		}
		if cc.MetaData.Codec != format.Uncompressed {
			t.Fatalf("column %s is %s", column, cc.MetaData.Codec)
		}
		pos := cc.MetaData.DataPageOffset
		br := bytes.NewReader(data[pos:])
		var h format.PageHeader
		if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
			t.Fatal(err)
		}
		payload := int64(n) - int64(br.Len())
		page := data[payload : payload+int64(h.CompressedPageSize)]
		change(&h, page)
		if h.CRC == 0 {
			return data
		}
		h.CRC = int32(crc32.ChecksumIEEE(page))
		b, err := thrift.Marshal(proto, &h)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != payload-pos {
			t.Skipf("the page header re-encodes to %d bytes, not %d", len(b), payload-pos)
		}
		copy(data[pos:], b)
		return data
	}
	t.Fatalf("no column %s", column)
	return nil
}
