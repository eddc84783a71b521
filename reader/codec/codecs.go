// Package codec holds the reader's bounded decompressors: Decompress for
// Parquet pages (the parquetpage.Decompressor of every stream) and
// DecodeDeflate, DecodeSnappy and DecodeZstd for Avro blocks. Each holds
// its output to a limit the caller gives (a page header's size, an Avro
// block's cap) before it allocates by what the compressed bytes claim.
//
// The reader decompresses pages itself: parquet-go's own decoders trust
// what the compressed bytes say about their size, so a damaged zstd frame
// header or snappy preamble makes them allocate up to gigabytes (zstd's
// limit is 64 GiB), a gzip or brotli page may expand without bound, and its
// LZ4 codec retries a failed block with a doubled buffer, forever.
// parquet-go reads only footers in the sidecar (page indexes and bloom
// filters skipped), so it never decompresses.
//
// It owns decompression only: the page and block formats around the bytes
// are parquetpage's and the Avro block reader's. A codec it has no decoder for wraps
// readerr.ErrUnsupported.
package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/druidiceberg/sidecar/reader/readerr"
)

// Decompress decompresses src, compressed with codec, into exactly size
// bytes (a page header's uncompressed size), in dst's storage when it is
// large enough: the parquetpage.Decompressor of the reader.
func Decompress(codec format.CompressionCodec, dst, src []byte, size int) ([]byte, error) {
	out, err := decodeAtMost(codec, dst[:0], src, size)
	if err != nil {
		return nil, err
	}
	if len(out) != size {
		return nil, fmt.Errorf("%s: the page decompresses to %d bytes, its header gives %d", codec, len(out), size)
	}
	return out, nil
}

// decodeAtMost decompresses src into at most limit bytes, appended to
// dst, and fails when the data would go on. Where the compressed data
// says how large it is (snappy's preamble, a zstd frame's content size)
// that is held to limit before anything is allocated; otherwise the
// buffer grows with the output, from a few times the input, so that a
// damaged header's size is never allocated for data that does not fill
// it.
func decodeAtMost(codec format.CompressionCodec, dst, src []byte, limit int) (out []byte, err error) {
	defer func() {
		// The decoders are third-party code fed a page's bytes: a panic of
		// theirs is that page's damage.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%s: the decoder failed on the page: %v", codec, r)
		}
	}()
	switch codec {
	case format.Snappy:
		out, err = DecodeSnappy(dst, src, limit)
	case format.Gzip:
		out, err = gzipPool.decode(dst, src, limit)
	case format.Brotli:
		out, err = brotliPool.decode(dst, src, limit)
	case format.Zstd:
		out, err = DecodeZstd(dst, src, limit)
	case format.Lz4Raw:
		out, err = decodeLZ4(dst, src, limit)
	default:
		return nil, fmt.Errorf("%w: pages compressed with %s", readerr.ErrUnsupported, codec)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", codec, err)
	}
	return out, nil
}

// firstGuess is the buffer a decoder starts with when the compressed data
// does not give its size: a few times the input, at most limit.
func firstGuess(src []byte, limit int) int {
	return min(limit, max(64<<10, 4*len(src)))
}

// TooLarge says that a page (or an Avro block) decompresses past its
// header's size (or the block's limit).
func TooLarge(limit int) error {
	return fmt.Errorf("the data decompresses to more than %d bytes, the most its header or limit allows", limit)
}

// DecodeSnappy checks the length the block's preamble gives before
// decoding, which snappy.Decode would allocate.
func DecodeSnappy(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, TooLarge(limit)
	}
	buf := slices.Grow(dst, n)[:n]
	return snappy.Decode(buf, src)
}

// decodeLZ4 decodes an LZ4 block, which does not give its size, into a
// buffer that grows fourfold while the block does not fit, up to limit and
// to the most an LZ4 block can expand (255 bytes of output for each byte
// of input).
func decodeLZ4(dst, src []byte, limit int) ([]byte, error) {
	most := min(limit, 256*len(src)+64)
	for c := firstGuess(src, most); ; c = min(most, 4*c) {
		buf := slices.Grow(dst, c)[:c]
		n, err := lz4.UncompressBlock(src, buf)
		if err == nil {
			return buf[:n], nil
		}
		if c == most {
			if most == limit {
				return nil, fmt.Errorf("%w (or the page decompresses to more than the %d bytes its header gives)", err, limit)
			}
			return nil, err
		}
	}
}

// zstdDecoders hold decoders that decode into dst's capacity at most,
// never into a buffer the frame header asks for.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // only for invalid options
	}
	return d
}}

// DecodeZstd decodes into a buffer of the frame's content size when its
// header gives one (held to limit first), and otherwise into one that
// grows fourfold while the output does not fit, up to limit.
//
// The decoder's cap limit fails a block that does not fit in what is left
// of the buffer as damage ("output bigger than max block size"), not as
// ErrDecoderSizeExceeded: a valid frame without a content size (what
// streaming writers such as zstd-jni's, and so parquet-mr's and Avro's,
// write) that expands past the first guess fails so. Any other failure
// below limit is therefore decoded once more into limit bytes, where only
// damage, or a frame past limit, fails.
func DecodeZstd(dst, src []byte, limit int) ([]byte, error) {
	c := firstGuess(src, limit)
	var h zstd.Header
	if h.Decode(src) == nil && h.HasFCS {
		if h.FrameContentSize > uint64(limit) {
			return nil, TooLarge(limit)
		}
		c = max(int(h.FrameContentSize), 1)
	}
	d := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(d)
	for {
		buf := slices.Grow(dst, c)
		out, err := d.DecodeAll(src, buf[:len(dst):len(dst)+c])
		switch {
		case err == nil:
			return out, nil
		case c >= limit && errors.Is(err, zstd.ErrDecoderSizeExceeded):
			return nil, TooLarge(limit)
		case c >= limit:
			return nil, fmt.Errorf("%w (or the data decompresses to more than %d bytes, the most its header or limit allows)", err, limit)
		case errors.Is(err, zstd.ErrDecoderSizeExceeded):
			c = min(limit, 4*c)
		default:
			c = limit
		}
	}
}

// streamPool decompresses with pooled stream readers (gzip, brotli).
type streamPool struct {
	pool  sync.Pool
	reset func(r any, src io.Reader) (any, error)
}

var (
	gzipPool = &streamPool{reset: func(r any, src io.Reader) (any, error) {
		if z, ok := r.(*gzip.Reader); ok {
			return z, z.Reset(src)
		}
		return gzip.NewReader(src)
	}}
	brotliPool = &streamPool{reset: func(r any, src io.Reader) (any, error) {
		if z, ok := r.(*brotli.Reader); ok {
			return z, z.Reset(src)
		}
		return brotli.NewReader(src), nil
	}}
)

// decode reads at most limit bytes into a buffer that grows with the
// output, then one byte more to tell a stream that ends there from one
// that goes on.
func (p *streamPool) decode(dst, src []byte, limit int) ([]byte, error) {
	r, err := p.reset(p.pool.Get(), bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	rd := r.(io.Reader)
	out := dst
	for c := firstGuess(src, limit); ; c = min(limit, 4*c) {
		out = slices.Grow(out, c-len(out)+len(dst))
		n, err := io.ReadFull(rd, out[len(out):len(dst)+c])
		out = out[:len(out)+n]
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				break // the stream ended: a page of len(out) bytes
			}
			return nil, err
		}
		if c < limit {
			continue
		}
		// The stream must end here; reading on also checks its trailer.
		var one [1]byte
		m, err := io.ReadAtLeast(rd, one[:], 1)
		if m > 0 {
			return nil, TooLarge(limit)
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		break
	}
	p.pool.Put(r)
	return out, nil
}

// deflatePool decompresses the raw deflate blocks of Avro's deflate codec.
var deflatePool = &streamPool{reset: func(r any, src io.Reader) (any, error) {
	if z, ok := r.(flate.Resetter); ok {
		return z, z.Reset(src, nil)
	}
	return flate.NewReader(src), nil
}}

// DecodeDeflate decompresses src, raw deflate as Avro's deflate codec
// writes it, into at most limit bytes appended to dst.
func DecodeDeflate(dst, src []byte, limit int) ([]byte, error) {
	return deflatePool.decode(dst, src, limit)
}
