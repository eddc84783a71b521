package handlers

import (
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/druidiceberg/sidecar/splits"
)

// Compressed row streams. Druid's http input source decompresses an
// entity by the extension of its URI's path: RetryingInputEntity.open in
// apache/druid (processing/src/main/java/org/apache/druid/data/input/
// RetryingInputEntity.java) returns CompressionUtils.decompress(openRaw(),
// getPath()), and HttpEntity.getPath is uri.getPath(); decompress
// (processing/src/main/java/org/apache/druid/utils/CompressionUtils.java)
// reads a path ending in ".gz" with a GZIPInputStream and one ending in
// ".zst" with commons-compress's ZstdCompressorInputStream. Its retries
// happen below the decompression, on the compressed bytes: openRaw is a
// RetryingInputStream, which after a failure reopens the entity at the
// count of raw bytes it read, and HttpEntity.openInputStream sends
// `Range: bytes=<offset>-`. So the compressed stream of a token must be
// the same bytes on every read, on every replica, for a resumed read to
// continue where the broken one stopped.
//
// The bytes depend only on the row stream's: the compressor is fed fixed
// chunks of it (compressChunk bytes, however the reader batches its
// writes), never flushed before the end, and its settings are fixed
// (gzip at klauspost/compress's BestSpeed with a zero header time; zstd
// at SpeedFastest, one goroutine, with its content checksum), so the same
// rows give the same bytes. Replicas serving one ingestion must run one
// release: another compressor version may compress otherwise, and a
// resumed read would then fail its checksum (the task fails and Druid
// runs it again) rather than read wrong rows.

// compressChunk is how many bytes of the row stream the compressor is fed
// at a time.
const compressChunk = 64 << 10

// rowSuffixes are the suffixes of the row route, by compression.
var rowSuffixes = map[splits.Compression]string{
	splits.CompressionNone: "/rows",
	splits.CompressionGzip: "/rows.ndjson.gz",
	splits.CompressionZstd: "/rows.ndjson.zst",
}

// contentTypes are the row stream's media types, by compression.
var contentTypes = map[splits.Compression]string{
	splits.CompressionNone: "application/x-ndjson",
	splits.CompressionGzip: "application/gzip",
	splits.CompressionZstd: "application/zstd",
}

// chunkedCompressor feeds a compressor fixed chunks of what is written to
// it; Close writes the rest and ends the compressed stream.
type chunkedCompressor struct {
	c   io.WriteCloser
	buf []byte
}

// newCompressor returns a writer that compresses what is written to it
// into w, or nil for CompressionNone.
func newCompressor(c splits.Compression, w io.Writer) (*chunkedCompressor, error) {
	var zw io.WriteCloser
	switch c {
	case splits.CompressionNone:
		return nil, nil
	case splits.CompressionGzip:
		g, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("start gzip: %w", err)
		}
		zw = g
	case splits.CompressionZstd:
		z, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(true))
		if err != nil {
			return nil, fmt.Errorf("start zstd: %w", err)
		}
		zw = z
	default:
		return nil, fmt.Errorf("%w: compression %q", errBadRequest, c)
	}
	return &chunkedCompressor{c: zw, buf: make([]byte, 0, compressChunk)}, nil
}

func (cc *chunkedCompressor) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := copy(cc.buf[len(cc.buf):cap(cc.buf)], p)
		cc.buf, p = cc.buf[:len(cc.buf)+k], p[k:]
		if len(cc.buf) == cap(cc.buf) {
			if _, err := cc.c.Write(cc.buf); err != nil {
				return n - len(p), err
			}
			cc.buf = cc.buf[:0]
		}
	}
	return n, nil
}

// Close compresses what is left and writes the end of the stream.
func (cc *chunkedCompressor) Close() error {
	if len(cc.buf) > 0 {
		if _, err := cc.c.Write(cc.buf); err != nil {
			return err
		}
		cc.buf = cc.buf[:0]
	}
	return cc.c.Close()
}
