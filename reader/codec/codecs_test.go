package codec

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strconv"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

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
			return snappy.Encode(nil, make([]byte, 1<<20))
		}},
		{"zstd of 64 MiB of zeros", format.Zstd, func(t *testing.T) []byte { return zstdZeros(t, true) }},
		{"zstd of 64 MiB of zeros, its size not given", format.Zstd, func(t *testing.T) []byte { return zstdZeros(t, false) }},
		{"gzip of 64 MiB of zeros", format.Gzip, gzipZeros},
		{"brotli of 64 MiB of zeros", format.Brotli, brotliZeros},
		{"LZ4 of 64 MiB of zeros", format.Lz4Raw, lz4Zeros},
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

// The bombs of TestBoundedCodecsBombs: 64 MiB of zeros in each codec,
// four times the 16 MiB its check allows, so that a decoder that expands
// them unbounded fails it. They are built from the formats' repeating
// parts rather than by compressing 64 MiB, which under -race took seconds
// of CPU a codec (brotli's encoder alone three), and each is held to
// expanding past the check with the codec's own unbounded decoder first:
// a malformed bomb would fail as the test wants, for another reason.
const (
	zerosSize = 64 << 20
	// checkedPast is what a bomb must expand past: the check's 16 MiB.
	checkedPast = 16 << 20
)

// expandsPast fails t unless r, a codec's unbounded decoder over a bomb,
// yields more than checkedPast zeros.
func expandsPast(t *testing.T, r io.Reader) {
	t.Helper()
	n, err := io.Copy(zeroWriter{t}, io.LimitReader(r, checkedPast+1))
	if err != nil || n != checkedPast+1 {
		t.Fatalf("the bomb expands to %d bytes (%v), not past %d", n, err, checkedPast)
	}
}

// zeroWriter fails its test on a byte other than zero.
type zeroWriter struct{ t *testing.T }

// zeros64K is what zeroWriter compares its writes with, io.Copy's 32 KiB
// and more.
var zeros64K = make([]byte, 64<<10)

func (w zeroWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; rest = rest[min(len(rest), len(zeros64K)):] {
		if n := min(len(rest), len(zeros64K)); !bytes.Equal(rest[:n], zeros64K[:n]) {
			w.t.Fatalf("the bomb expands to bytes other than zeros: %q", rest[:n])
		}
	}
	return len(p), nil
}

// zstdZeros is a zstd frame of RLE blocks of 128 KiB of zeros, with the
// frame's content size as EncodeAll writes it (sized) or without, so that
// only decoding can tell.
func zstdZeros(t *testing.T, sized bool) []byte {
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50} // no content size, a 1 MiB window
	if sized {
		frame = binary.LittleEndian.AppendUint32([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x50}, zerosSize)
	}
	const blk = 128 << 10
	for left := zerosSize; left > 0; left -= blk {
		h := uint32(blk)<<3 | 1<<1 // an RLE block of blk bytes
		if left == blk {
			h |= 1 // the last
		}
		frame = append(frame, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	d, err := zstd.NewReader(bytes.NewReader(frame), zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	expandsPast(t, d)
	return frame
}

// gzipZeros is a gzip member whose deflate stream repeats the compressed
// form of 1 MiB of zeros (flushed, so it ends byte-aligned) 64 times.
func gzipZeros(t *testing.T) []byte {
	var chunk bytes.Buffer
	w, err := flate.NewWriter(&chunk, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	if _, err := w.Write(zeros); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	member := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff} // deflate, no name, no time
	var crc uint32
	for range zerosSize >> 20 {
		member = append(member, chunk.Bytes()...)
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	member = append(member, 0x01, 0x00, 0x00, 0xff, 0xff) // a final empty stored block
	member = binary.LittleEndian.AppendUint32(member, crc)
	member = binary.LittleEndian.AppendUint32(member, zerosSize)
	r, err := gzip.NewReader(bytes.NewReader(member))
	if err != nil {
		t.Fatal(err)
	}
	expandsPast(t, r)
	return member
}

// brotliZeros is what brotli.NewWriterLevel(w, 5) writes for 64 MiB of
// zeros: four meta-blocks of 16 MiB (its encoder takes seconds over them
// under -race).
func brotliZeros(t *testing.T) []byte {
	stream := []byte{
		0xcb, 0xff, 0xff, 0x3f, 0x00, 0x24, 0x00, 0xe2, 0xb1, 0x40, 0x72, 0xef, 0xff, 0xf8, 0xff, 0xff,
		0x07, 0x80, 0x04, 0x40, 0x1c, 0x16, 0x80, 0xee, 0xfd, 0x1f, 0xff, 0xff, 0xff, 0x00, 0x90, 0x00,
		0x88, 0xc3, 0x02, 0xd0, 0xbd, 0xff, 0xe3, 0xff, 0xff, 0x1f, 0x00, 0x12, 0x00, 0x71, 0x58, 0x00,
		0xba, 0xf7, 0x7f, 0xfc, 0xff, 0xff, 0x03, 0x40, 0x02, 0x20, 0x0e, 0x0b, 0x40, 0xf7, 0xfe, 0x8f,
		0xff, 0xff, 0x7f, 0x00, 0x48, 0x00, 0xc4, 0x61, 0x01, 0xe8, 0xde, 0xff, 0xf1, 0xff, 0xff, 0x0f,
		0x00, 0x09, 0x80, 0x38, 0x2c, 0x00, 0xdd, 0xfb, 0x3f, 0xfe, 0xff, 0xff, 0x01, 0x20, 0x01, 0x10,
		0x87, 0x05, 0xa0, 0x7b, 0xff, 0x37,
	}
	expandsPast(t, brotli.NewReader(bytes.NewReader(stream)))
	return stream
}

// lz4Zeros is an LZ4 block of one literal zero and one match at offset 1
// that copies it to 64 MiB less five bytes, then the five literal zeros a
// block ends with.
func lz4Zeros(t *testing.T) []byte {
	const match = zerosSize - 6
	block := []byte{0x1f, 0x00, 0x01, 0x00} // 1 literal (0), then a match of 15+4 or more at offset 1
	rest := match - 19
	block = append(block, bytes.Repeat([]byte{0xff}, rest/255)...)
	block = append(block, byte(rest%255), 0x50, 0, 0, 0, 0, 0)
	out := make([]byte, zerosSize)
	n, err := lz4.UncompressBlock(block, out)
	if err != nil || n != zerosSize {
		t.Fatalf("the bomb decodes to %d bytes (%v), not %d", n, err, zerosSize)
	}
	expandsPast(t, bytes.NewReader(out[:n]))
	return block
}

// TestZstdFramesWithoutContentSize decodes frames a streaming encoder
// writes, which do not give their content size (zstd-jni's stream, and so
// parquet-mr's pages and Avro's zstandard blocks, write such frames), that
// expand far past DecodeZstd's first guess: into their exact size, into a
// larger limit, and across several frames. The decoder's cap limit fails
// a block that does not fit in what is left of the buffer as damage, not
// as a size to grow to, and such valid frames were refused. A limit one
// byte short still fails on its size, and a damaged frame as damage.
func TestZstdFramesWithoutContentSize(t *testing.T) {
	var data []byte
	for i := 0; len(data) < 1<<20; i++ {
		data = strconv.AppendInt(append(data, "row "...), int64(i), 10)
		data = strconv.AppendInt(append(data, " value "...), int64(i*i%1000), 10)
		data = append(data, '\n')
	}
	stream := func(parts ...[]byte) []byte {
		var frames []byte
		for _, p := range parts {
			var buf bytes.Buffer
			w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			frames = append(frames, buf.Bytes()...)
		}
		return frames
	}
	one := stream(data)
	var h zstd.Header
	// The first guess, four times the frame, must fall inside a block
	// (128 KiB each) and short of the data.
	if err := h.Decode(one); err != nil || h.HasFCS || 4*len(one) < 64<<10 || 4*len(one)%(128<<10) == 0 || 4*len(one) >= len(data) {
		t.Fatalf("the frame (%d bytes of %d, %v): want no content size, past 16 KiB and expanding more than fourfold", len(one), len(data), err)
	}
	for _, tc := range []struct {
		name  string
		src   []byte
		want  []byte
		limit int
	}{
		{"exact", one, data, len(data)},
		{"larger limit", one, data, 64 << 20},
		{"odd limit", one, data, len(data) + 12345},
		{"two frames", stream(data[:300_001], data[300_001:]), data, len(data)},
	} {
		for _, dst := range []string{"", "kept"} {
			out, err := DecodeZstd([]byte(dst), tc.src, tc.limit)
			if err != nil || !bytes.Equal(out, append([]byte(dst), tc.want...)) {
				t.Errorf("%s, after %q: %d bytes, %v", tc.name, dst, len(out), err)
			}
		}
	}
	if _, err := DecodeZstd(nil, one, len(data)-1); err == nil || !bytes.Contains([]byte(err.Error()), []byte("more than")) {
		t.Errorf("a limit one byte short: %v, want a failure on the size", err)
	}
	damaged := bytes.Clone(one)
	damaged[len(damaged)/2] ^= 0xff
	if _, err := DecodeZstd(nil, damaged, len(data)); err == nil {
		t.Error("a damaged frame decodes")
	}
}
