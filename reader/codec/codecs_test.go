package codec

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/internal/cost"
)

// boundedCodecs are the codecs the reader decompresses pages with.
var boundedCodecs = []format.CompressionCodec{format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw}

// TestBoundedCodecsRoundTrip decodes what each codec encodes into its
// size or more (a v2 page header's size counts the levels too), and
// refuses a page header that gives less.
func TestBoundedCodecsRoundTrip(t *testing.T) {
	page := bytes.Repeat([]byte("druid iceberg sidecar 0123456789 "), 1000)
	for _, c := range boundedCodecs {
		t.Run(c.String(), func(t *testing.T) {
			enc, err := parquet.LookupCompressionCodec(c).Encode(nil, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{len(page), len(page) + 100} {
				got, err := decodeAtMost(c, nil, enc, size)
				if err != nil || !bytes.Equal(got, page) {
					t.Fatalf("decoding a page of %d bytes into at most %d: %d bytes, %v", len(page), size, len(got), err)
				}
			}
			if got, err := Decompress(c, nil, enc, len(page)); err != nil || !bytes.Equal(got, page) {
				t.Fatalf("decompressing a page of its header's size: %d bytes, %v", len(got), err)
			}
			for _, size := range []int{len(page) - 1, 0} {
				if _, err := decodeAtMost(c, nil, enc, size); err == nil {
					t.Errorf("a header giving %d bytes for a page of %d: no error", size, len(page))
				}
			}
			if _, err := Decompress(c, nil, enc, len(page)+100); err == nil {
				t.Error("a page shorter than its header's size decompressed")
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
	// 64 MiB of zeros compress to tens of KiB, and are four times the
	// 16 MiB the check allows: a decoder that expands them unbounded fails
	// it.
	expanding := make([]byte, 64<<20)
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
		{"zstd of 64 MiB of zeros", format.Zstd, bomb(format.Zstd)},
		{"gzip of 64 MiB of zeros", format.Gzip, bomb(format.Gzip)},
		{"brotli of 64 MiB of zeros", format.Brotli, bomb(format.Brotli)},
		{"LZ4 of 64 MiB of zeros", format.Lz4Raw, bomb(format.Lz4Raw)},
		{"LZ4 garbage", format.Lz4Raw, func(*testing.T) []byte { return []byte{0xff, 0xff, 0xff, 0xff, 0x00} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data(t)
			dst := make([]byte, pageSize)
			// Warm the codec's pools, so that only the decoding is measured.
			_, _ = Decompress(tc.codec, dst, data, pageSize)
			allocated := cost.AllocatedBy(func() {
				if _, err := Decompress(tc.codec, dst, data, pageSize); err == nil {
					t.Error("no error")
				}
			})
			if allocated > 16<<20 {
				t.Errorf("decoding allocated %d MiB for a page of %d bytes", allocated>>20, pageSize)
			}
		})
	}
}

// BenchmarkBoundedCodecs decodes a 1 MiB page with the reader's bounded
// decompression of each codec and with parquet-go's own.
func BenchmarkBoundedCodecs(b *testing.B) {
	page := make([]byte, 1<<20)
	for i := range page {
		page[i] = byte(i * i >> 7) // compresses, but not to nothing
	}
	for _, c := range boundedCodecs {
		codec := parquet.LookupCompressionCodec(c)
		enc, err := codec.Encode(nil, page)
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []struct {
			name   string
			decode func(dst []byte) ([]byte, error)
		}{
			{"bounded", func(dst []byte) ([]byte, error) { return Decompress(c, dst, enc, len(page)) }},
			{"parquet-go", func(dst []byte) ([]byte, error) { return codec.Decode(dst, enc) }},
		} {
			b.Run(c.String()+"/"+impl.name, func(b *testing.B) {
				dst := make([]byte, len(page))
				b.SetBytes(int64(len(page)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := impl.decode(dst); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
