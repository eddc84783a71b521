package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	_ "unsafe" // for go:linkname

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// parquetCodecs is parquet-go's table of the codecs it decompresses pages
// with, indexed by format.CompressionCodec (LookupCompressionCodec reads
// it). parquet-go has no option to choose them, and its own decoders trust
// what the compressed bytes say about their size: a damaged zstd frame
// header or snappy preamble makes them allocate up to gigabytes (zstd's
// limit is 64 GiB), a gzip or brotli page may expand without bound, and
// the LZ4 codec retries a failed block with a doubled buffer, forever. So
// one damaged page, or a footer damaged to name another codec, could
// take the process down. bounded replaces each entry at init with a codec
// that decompresses into the size the page header gives, and no further.
//
// init replaces the entries only after checking that each one holds the
// codec parquet-go exports for it (&parquet.Zstd and so on): should an
// upgrade of parquet-go move or reshape the table, it leaves the table
// alone rather than write into memory it does not know, and
// TestBoundedCodecsInstalled fails.
//
//go:linkname parquetCodecs github.com/parquet-go/parquet-go.compressionCodecs
var parquetCodecs [format.Lz4Raw + 1]compress.Codec

// parquetGoCodecs are the entries of parquetCodecs as parquet-go sets them.
var parquetGoCodecs = map[format.CompressionCodec]compress.Codec{
	format.Snappy: &parquet.Snappy,
	format.Gzip:   &parquet.Gzip,
	format.Brotli: &parquet.Brotli,
	format.Zstd:   &parquet.Zstd,
	format.Lz4Raw: &parquet.Lz4Raw,
}

func init() {
	for code, c := range parquetGoCodecs {
		if parquetCodecs[code] != c {
			return
		}
	}
	for code, c := range parquetGoCodecs {
		parquetCodecs[code] = newBounded(c)
	}
}

// bounded decompresses a page into at most len(dst) bytes, the page
// header's uncompressed size (parquet-go hands Decode a buffer of that
// length), and fails, having allocated nothing beyond it, when the data
// would go on. It cannot demand exactly that size: for a v2 data page the
// header's size also counts the levels, which are not compressed; a short
// page is left to parquet-go, which fails on it when its values run out.
// parquet-go's one other caller, the reading of gzip-compressed bloom
// filters, passes no buffer and so gets an error: the reader opens files
// with SkipBloomFilters. Encode is parquet-go's own.
type bounded struct {
	compress.Codec
	decode func(dst, src []byte) (int, error)
}

// newBounded gives the bounded codec for c, one of parquetGoCodecs.
func newBounded(c compress.Codec) compress.Codec {
	var decode func(dst, src []byte) (int, error)
	switch c.CompressionCodec() {
	case format.Snappy:
		decode = decodeSnappy
	case format.Gzip:
		decode = gzipPool.decode
	case format.Brotli:
		decode = brotliPool.decode
	case format.Zstd:
		decode = decodeZstd
	case format.Lz4Raw:
		decode = func(dst, src []byte) (int, error) { return lz4.UncompressBlock(src, dst) }
	default:
		panic(fmt.Sprintf("no bounded codec for %s", c))
	}
	return &bounded{Codec: c, decode: decode}
}

var _ compress.Codec = (*bounded)(nil)

func (b *bounded) Decode(dst, src []byte) ([]byte, error) {
	want := len(dst)
	n, err := b.decode(dst[:want:want], src)
	if err != nil {
		return dst[:0], fmt.Errorf("%s: %w", b.Codec, err)
	}
	if n > want {
		return dst[:0], fmt.Errorf("%s: the page decompresses to more than the %d bytes its header gives", b.Codec, want)
	}
	return dst[:n], nil
}

// decodeSnappy checks the length the block's preamble gives before
// decoding, which snappy.Decode would allocate.
func decodeSnappy(dst, src []byte) (int, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return 0, err
	}
	if n > len(dst) {
		return n, nil
	}
	out, err := snappy.Decode(dst, src)
	return len(out), err
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

func decodeZstd(dst, src []byte) (int, error) {
	d := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(d)
	out, err := d.DecodeAll(src, dst[:0])
	return len(out), err
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

// decode reads at most len(dst) bytes, then one byte more to tell a
// stream that ends there from one that goes on.
func (p *streamPool) decode(dst, src []byte) (int, error) {
	r, err := p.reset(p.pool.Get(), bytes.NewReader(src))
	if err != nil {
		return 0, err
	}
	rd := r.(io.Reader)
	n, err := io.ReadFull(rd, dst)
	switch {
	case err == nil:
		// The stream must end here; reading on also checks its trailer.
		var one [1]byte
		m, rerr := io.ReadAtLeast(rd, one[:], 1)
		n += m
		if rerr != nil && rerr != io.EOF {
			err = rerr
		}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		err = nil // a short page
	}
	if err == nil {
		p.pool.Put(r)
	}
	return n, err
}
