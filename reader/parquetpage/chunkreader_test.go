package parquetpage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// page is one page of a hand-made column chunk.
type page struct {
	header  format.PageHeader
	payload []byte
}

// dataPage is an uncompressed data page v1 of n values in enc.
func dataPage(n int32, enc format.Encoding, payload []byte) page {
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(payload)), CompressedPageSize: int32(len(payload))}
	h.DataPageHeader.Valid = true
	h.DataPageHeader.V = format.DataPageHeader{NumValues: n, Encoding: enc, DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE}
	return page{h, payload}
}

// chunk encodes pages one after the other.
func chunk(t *testing.T, pages ...page) []byte {
	t.Helper()
	var b []byte
	for _, p := range pages {
		h, err := thrift.Marshal(&thrift.CompactProtocol{}, &p.header)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, h...), p.payload...)
	}
	return b
}

// levels prefixes v1 levels with their length.
func levels(b ...byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// readAll reads every entry of the chunk, and returns the first error and
// the bytes the heap allocated meanwhile.
func readAll(data []byte, col Column, values int64) (error, uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var r Reader
	r.Reset(bytes.NewReader(data), col, Chunk{Offset: 0, Size: int64(len(data)), NumValues: values},
		func(format.CompressionCodec, []byte, []byte, int) ([]byte, error) {
			return nil, errors.New("not compressed")
		}, nil)
	var v Values
	var err error
	for err == nil {
		err = r.Read(&v, 1024)
	}
	runtime.ReadMemStats(&after)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err, after.TotalAlloc - before.TotalAlloc
}

// TestRunHeadersHeldToThePage gives pages whose run, block and count
// headers ask for far more values than the page has: each must fail with
// ErrCorrupt having allocated about nothing, where a decoder that sized its
// output from the header would ask for gigabytes.
func TestRunHeadersHeldToThePage(t *testing.T) {
	i64 := Column{Type: format.Int64}
	optional := Column{Type: format.Int64, MaxDef: 1}
	list := Column{Type: format.Int64, MaxDef: 3, MaxRep: 1}
	str := Column{Type: format.ByteArray}
	dict := page{payload: binary.LittleEndian.AppendUint64(nil, 7)}
	dict.header = format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: 8, CompressedPageSize: 8}
	dict.header.DictionaryPageHeader.Valid = true
	dict.header.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: 1, Encoding: format.Plain}
	hugeDict := dict
	hugeDict.header.DictionaryPageHeader.V.NumValues = 1 << 30
	tests := []struct {
		name   string
		col    Column
		values int64
		pages  []page
		why    string // in the error
	}{
		{"an RLE definition-level run of 2^31 values", optional, 10,
			[]page{dataPage(10, format.Plain, append(levels(binary.AppendUvarint(nil, 1<<32)...), 1))}, "an RLE run of 2147483648 values"},
		{"a bit-packed repetition-level run of 2^34 values", list, 10,
			[]page{dataPage(10, format.Plain, append(append(levels(binary.AppendUvarint(nil, 1<<32|1)...), levels(20, 3)...), make([]byte, 80)...))}, "a bit-packed run of 17179869184 values"},
		{"an RLE run of 2^40 dictionary indexes", i64, 10,
			[]page{dict, dataPage(10, format.RLEDictionary, append([]byte{1}, binary.AppendUvarint(nil, 1<<41)...))}, "an RLE run of 1099511627776 values"},
		{"a dictionary page of 2^30 values in 8 bytes", i64, 10, []page{hugeDict}, "a dictionary page of 1073741824 values"},
		{"a DELTA_BINARY_PACKED header of 2^40 values", i64, 10,
			[]page{dataPage(10, format.DeltaBinaryPacked, deltaHeader(128, 4, 1<<40))}, "claims 1099511627776 values"},
		{"a DELTA_BINARY_PACKED block of 2^30 values", i64, 10,
			[]page{dataPage(10, format.DeltaBinaryPacked, deltaHeader(1<<30, 4, 10))}, "a DELTA_BINARY_PACKED block of 1073741824"},
		{"a DELTA_LENGTH_BYTE_ARRAY length of 2^30", str, 1,
			[]page{dataPage(1, format.DeltaLengthByteArray, deltaHeader(128, 4, 1, 1<<30))}, "a byte array of 1073741824 bytes"},
		{"a data page of 2^30 values in a chunk of 10", i64, 10,
			[]page{dataPage(1<<30, format.Plain, make([]byte, 80))}, "a data page of 1073741824 values"},
		{"a page of 2 GiB uncompressed", i64, 10, func() []page {
			p := dataPage(10, format.Plain, make([]byte, 80))
			p.header.UncompressedPageSize = 1<<31 - 1
			return []page{p}
		}(), "2147483647 uncompressed"},
		{"a page longer than its chunk", i64, 10, func() []page {
			p := dataPage(10, format.Plain, make([]byte, 80))
			p.header.CompressedPageSize, p.header.UncompressedPageSize = 1<<30, 1<<30
			return []page{p}
		}(), "a page of 1073741824 bytes where"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err, allocated := readAll(chunk(t, tc.pages...), tc.col, tc.values)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %v, want ErrCorrupt: %s", err, tc.why)
			}
			if allocated > 1<<20 {
				t.Errorf("allocated %d KiB", allocated>>10)
			}
		})
	}
}

// deltaHeader is a DELTA_BINARY_PACKED header with the first value.
func deltaHeader(block, minis, total uint64, first ...int64) []byte {
	b := binary.AppendUvarint(nil, block)
	b = binary.AppendUvarint(b, minis)
	b = binary.AppendUvarint(b, total)
	f := int64(0)
	if len(first) > 0 {
		f = first[0]
	}
	return binary.AppendVarint(b, f)
}

// TestLevelsAboveTheMaximum refuses a definition level the column cannot
// have.
func TestLevelsAboveTheMaximum(t *testing.T) {
	col := Column{Type: format.Int64, MaxDef: 2} // 2 bits: 3 is too high
	p := dataPage(1, format.Plain, append(levels(2, 3), make([]byte, 8)...))
	if err, _ := readAll(chunk(t, p), col, 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("error %v, want ErrCorrupt", err)
	}
	// An RLE run's value takes a whole byte whatever the width: with one
	// bit, 129 is not a level (found by FuzzCorruptParquet: it read as
	// neither null nor a value).
	col = Column{Type: format.Int64, MaxDef: 1}
	p = dataPage(1, format.Plain, append(levels(2, 129), make([]byte, 8)...))
	if err, _ := readAll(chunk(t, p), col, 1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "value 129 does not fit in 1 bits") {
		t.Errorf("a 1-bit RLE run of 129: error %v, want ErrCorrupt", err)
	}
}

// TestChunkValueCount holds a chunk's pages to the footer's value count.
func TestChunkValueCount(t *testing.T) {
	col := Column{Type: format.Int64}
	p := dataPage(1, format.Plain, make([]byte, 8))
	if err, _ := readAll(chunk(t, p), col, 1); err != nil {
		t.Fatalf("a chunk of one value: %v", err)
	}
	if err, _ := readAll(chunk(t, p), col, 2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a chunk of one value whose footer says 2: error %v, want ErrCorrupt", err)
	}
}
