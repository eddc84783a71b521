package reader

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// boundedCodecs are the codecs InstallBoundedCodecs replaces in
// parquet-go's table.
var boundedCodecs = []format.CompressionCodec{format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw}

// TestBoundedCodecsInstalled checks that parquet-go decompresses pages with
// the bounded codecs, and that its table still has the shape the linkname
// in codecs.go assumes: an upgrade that changes it must fail here.
func TestBoundedCodecsInstalled(t *testing.T) {
	if err := InstallBoundedCodecs(); err != nil {
		t.Fatal(err)
	}
	for _, c := range boundedCodecs {
		got := parquet.LookupCompressionCodec(c)
		b, ok := got.(*bounded)
		if !ok {
			t.Errorf("parquet-go decompresses %s with %T, not the bounded codec", c, got)
			continue
		}
		if b.CompressionCodec() != c {
			t.Errorf("the bounded codec at %s is %s", c, b.CompressionCodec())
		}
	}
	if got := parquet.LookupCompressionCodec(format.Uncompressed); got.CompressionCodec() != format.Uncompressed {
		t.Errorf("UNCOMPRESSED is %s", got)
	}
}

// TestBoundedCodecsRefuseForeignTable: a table whose entries are not
// parquet-go's codecs (a reshaped table after an upgrade) is left as it is,
// and the install fails.
func TestBoundedCodecsRefuseForeignTable(t *testing.T) {
	var table [format.Lz4Raw + 1]compress.Codec
	for code, c := range parquetGoCodecs {
		table[code] = c
	}
	table[format.Gzip] = &parquet.Zstd // shifted by one entry
	before := table
	if err := installBounded(&table); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("installBounded = %v, want a refusal", err)
	}
	if table != before {
		t.Fatal("a refused install changed the table")
	}
	table[format.Gzip] = &parquet.Gzip
	if err := installBounded(&table); err != nil {
		t.Fatal(err)
	}
	if _, ok := table[format.Zstd].(*bounded); !ok {
		t.Fatalf("zstd is %T after the install", table[format.Zstd])
	}
}

// TestBoundedCodecsRoundTrip decodes what each codec encodes into its
// size or more (a v2 page header's size counts the levels too), and
// refuses a page header that gives less.
func TestBoundedCodecsRoundTrip(t *testing.T) {
	page := bytes.Repeat([]byte("druid iceberg sidecar 0123456789 "), 1000)
	for _, c := range boundedCodecs {
		t.Run(c.String(), func(t *testing.T) {
			codec := parquet.LookupCompressionCodec(c)
			enc, err := codec.Encode(nil, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{len(page), len(page) + 100} {
				got, err := codec.Decode(make([]byte, size), enc)
				if err != nil || !bytes.Equal(got, page) {
					t.Fatalf("decoding a page of %d bytes into %d: %d bytes, %v", len(page), size, len(got), err)
				}
			}
			for _, size := range []int{len(page) - 1, 0} {
				if _, err := codec.Decode(make([]byte, size), enc); err == nil {
					t.Errorf("a header giving %d bytes for a page of %d: no error", size, len(page))
				}
			}
		})
	}
}

// TestBoundedCodecsBombs gives each codec data that claims, or expands to,
// far more than the page header's size: each must fail having allocated
// about nothing, where parquet-go's own codecs allocate gigabytes (or, for
// LZ4, loop doubling their buffer).
func TestBoundedCodecsBombs(t *testing.T) {
	const pageSize = 4096
	expanding := make([]byte, 256<<20) // compresses to a few hundred KiB
	bomb := func(c format.CompressionCodec) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			enc, err := parquet.LookupCompressionCodec(c).Encode(nil, expanding)
			if err != nil {
				t.Fatal(err)
			}
			return enc
		}
	}
	tests := []struct {
		name  string
		codec format.CompressionCodec
		data  func(t *testing.T) []byte
	}{
		{"a zstd frame header claiming 3 GiB", format.Zstd, func(*testing.T) []byte {
			// Magic, a single-segment descriptor with a 4-byte content
			// size, the size, then a block header of a raw block.
			frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0}
			frame = binary.LittleEndian.AppendUint32(frame, 3<<30)
			return append(frame, 0x01, 0x00, 0x00, 'x')
		}},
		{"a snappy preamble claiming 4 GiB", format.Snappy, func(*testing.T) []byte {
			return append(binary.AppendUvarint(nil, 1<<32-1), 0x00, 'x')
		}},
		{"a snappy block of 1 MiB", format.Snappy, func(*testing.T) []byte {
			return snappy.Encode(nil, expanding[:1<<20])
		}},
		{"zstd of 256 MiB of zeros", format.Zstd, bomb(format.Zstd)},
		{"gzip of 256 MiB of zeros", format.Gzip, bomb(format.Gzip)},
		{"brotli of 256 MiB of zeros", format.Brotli, bomb(format.Brotli)},
		{"LZ4 of 256 MiB of zeros", format.Lz4Raw, bomb(format.Lz4Raw)},
		{"LZ4 garbage", format.Lz4Raw, func(*testing.T) []byte { return []byte{0xff, 0xff, 0xff, 0xff, 0x00} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data(t)
			codec := parquet.LookupCompressionCodec(tc.codec)
			dst := make([]byte, pageSize)
			// Warm the codec's pools, so that only the decoding is measured.
			_, _ = codec.Decode(dst, data)
			allocated := allocatedBy(func() {
				if _, err := codec.Decode(dst, data); err == nil {
					t.Error("no error")
				}
			})
			if allocated > 16<<20 {
				t.Errorf("decoding allocated %d MiB for a page of %d bytes", allocated>>20, pageSize)
			}
		})
	}
}

// allocatedBy gives the bytes the Go heap allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkBoundedCodecs decodes a 1 MiB page with each bounded codec and
// with parquet-go's own, which it wraps.
func BenchmarkBoundedCodecs(b *testing.B) {
	page := make([]byte, 1<<20)
	for i := range page {
		page[i] = byte(i * i >> 7) // compresses, but not to nothing
	}
	for _, c := range boundedCodecs {
		codec := parquet.LookupCompressionCodec(c).(*bounded)
		enc, err := codec.Encode(nil, page)
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []struct {
			name  string
			codec compress.Codec
		}{{"bounded", codec}, {"parquet-go", codec.Codec}} {
			b.Run(c.String()+"/"+impl.name, func(b *testing.B) {
				dst := make([]byte, len(page))
				b.SetBytes(int64(len(page)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := impl.codec.Decode(dst, enc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
