package avro

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/twmb/avro"

	"github.com/druidiceberg/sidecar/reader/codec"
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// An Avro Object Container File is a header (the magic "Obj\x01", a map of
// metadata that holds the schema and the codec, a 16-byte sync marker) and
// blocks, each a record count, a byte size, that many bytes of records
// compressed with the codec, and the sync marker again. The reader reads
// the blocks itself, so that a block's records are decoded in place by
// the file's decode program (avrodecode.go); the rules are those of
// Avro's DataFileStream (Java) and of github.com/twmb/avro/ocf, with the
// reader's bounds: a header of at most maxAvroHeaderBytes, a block of at
// most maxAvroBlockBytes compressed (and no more than its file) and
// decompressed, by the reader's bounded codecs.

// avroMagic opens every Avro Object Container File.
var avroMagic = [4]byte{'O', 'b', 'j', 1}

// maxAvroZeroByteRecords bounds the records of one block beyond its bytes:
// a record of only null fields takes no bytes, so a block's count alone
// could make a tiny file yield billions of them (ocf's
// maxOCFZeroByteSlack).
const maxAvroZeroByteRecords = 4 << 10

// avroBlocks reads the blocks of an Avro file after its header.
type avroBlocks struct {
	r      *bufio.Reader
	codec  string
	sync   [16]byte
	schema *avro.Schema
	// maxBlock bounds a block's compressed size: maxAvroBlockBytes, and
	// no more than the file.
	maxBlock int64
	// comp and out hold the last block read, compressed and decompressed:
	// a block is decoded before the next is read.
	comp, out []byte
}

// readAvroHeader reads the header of an Avro file from r: its schema, its
// codec and its sync marker. Every length in it is held to
// maxAvroHeaderBytes before it sizes anything.
func readAvroHeader(r *bufio.Reader, maxBlock int64) (*avroBlocks, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("read the Avro magic: %w", noEOF(err))
	}
	if magic != avroMagic {
		return nil, fmt.Errorf("not an Avro file: it starts with %q", magic[:])
	}
	meta := map[string][]byte{}
	for {
		count, err := binary.ReadVarint(r)
		if err != nil {
			return nil, fmt.Errorf("read the Avro header's metadata: %w", noEOF(err))
		}
		if count == 0 {
			break
		}
		if count < 0 {
			// A block of the map with its byte size, which is not needed.
			if count = -count; count < 0 {
				return nil, fmt.Errorf("the Avro header's metadata has a block of %d entries", count)
			}
			if _, err := binary.ReadVarint(r); err != nil {
				return nil, fmt.Errorf("read the Avro header's metadata: %w", noEOF(err))
			}
		}
		if count > maxAvroHeaderBytes {
			return nil, fmt.Errorf("the Avro header's metadata has a block of %d entries", count)
		}
		for range count {
			key, err := readHeaderBytes(r)
			if err != nil {
				return nil, err
			}
			val, err := readHeaderBytes(r)
			if err != nil {
				return nil, err
			}
			meta[string(key)] = val
		}
	}
	b := &avroBlocks{r: r, codec: "null", maxBlock: maxBlock}
	if _, err := io.ReadFull(r, b.sync[:]); err != nil {
		return nil, fmt.Errorf("read the Avro header's sync marker: %w", noEOF(err))
	}
	if c, ok := meta["avro.codec"]; ok {
		b.codec = string(c)
	}
	switch b.codec {
	case "null", "deflate", "snappy", "zstandard":
	default:
		return nil, fmt.Errorf("%w: the Avro codec %.64q (the reader decodes null, deflate, snappy and zstandard)", readerr.ErrUnsupported, b.codec)
	}
	schema, ok := meta["avro.schema"]
	if !ok {
		return nil, errors.New("the Avro header has no avro.schema")
	}
	var err error
	if b.schema, err = avro.Parse(string(schema)); err != nil {
		return nil, fmt.Errorf("parse the Avro schema: %w", err)
	}
	return b, nil
}

// readHeaderBytes reads a length-prefixed string or bytes of the header.
func readHeaderBytes(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadVarint(r)
	if err != nil {
		return nil, fmt.Errorf("read the Avro header's metadata: %w", noEOF(err))
	}
	if n < 0 || n > maxAvroHeaderBytes {
		return nil, fmt.Errorf("the Avro header's metadata holds a value of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("read the Avro header's metadata: %w", noEOF(err))
	}
	return b, nil
}

// noEOF makes an end of the file inside a structure an unexpected one:
// io.EOF is only the clean end, before a block.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// next reads the next block that holds records and returns them
// decompressed, with their count; io.EOF at the clean end of the file.
// The block is valid until the next call.
func (b *avroBlocks) next() ([]byte, int64, error) {
	for {
		count, err := binary.ReadVarint(b.r)
		if err != nil {
			if err == io.EOF {
				return nil, 0, io.EOF
			}
			return nil, 0, fmt.Errorf("read an Avro block's count: %w", err)
		}
		size, err := binary.ReadVarint(b.r)
		switch {
		case err != nil:
			return nil, 0, fmt.Errorf("read an Avro block's size: %w", noEOF(err))
		case count < 0:
			return nil, 0, fmt.Errorf("an Avro block of %d records", count)
		case size < 0:
			return nil, 0, fmt.Errorf("an Avro block of %d bytes", size)
		case size > b.maxBlock:
			return nil, 0, fmt.Errorf("an Avro block of %d bytes, more than the %d a block may hold here", size, b.maxBlock)
		}
		if int64(cap(b.comp)) < size {
			b.comp = make([]byte, size)
		}
		b.comp = b.comp[:size]
		if _, err := io.ReadFull(b.r, b.comp); err != nil {
			return nil, 0, fmt.Errorf("read an Avro block of %d bytes: %w", size, noEOF(err))
		}
		var sync [16]byte
		if _, err := io.ReadFull(b.r, sync[:]); err != nil {
			return nil, 0, fmt.Errorf("read an Avro block's sync marker: %w", noEOF(err))
		}
		if sync != b.sync {
			return nil, 0, errors.New("an Avro block's sync marker is not the header's")
		}
		if count == 0 {
			// Allowed, if pointless: the records go on in the next block.
			continue
		}
		block, err := b.decompress()
		if err != nil {
			return nil, 0, fmt.Errorf("decompress an Avro block (%s): %w", b.codec, err)
		}
		if count > int64(len(block))+maxAvroZeroByteRecords {
			return nil, 0, fmt.Errorf("an Avro block claims %d records in %d bytes", count, len(block))
		}
		return block, count, nil
	}
}

// decompress decompresses the block in comp with the file's codec, into
// at most maxAvroBlockBytes.
func (b *avroBlocks) decompress() (out []byte, err error) {
	defer func() {
		// The decoders are third-party code fed a block's bytes: a panic of
		// theirs is that block's damage.
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the decoder failed on the block: %v", r)
		}
	}()
	const limit = maxAvroBlockBytes
	switch b.codec {
	case "deflate":
		out, err = codec.DecodeDeflate(b.out[:0], b.comp, limit)
	case "snappy":
		// A snappy block ends with the CRC-32 of its decompressed bytes.
		if len(b.comp) < 4 {
			return nil, errors.New("a snappy block without its checksum")
		}
		body := b.comp[:len(b.comp)-4]
		if out, err = codec.DecodeSnappy(b.out[:0], body, limit); err == nil &&
			crc32.ChecksumIEEE(out) != binary.BigEndian.Uint32(b.comp[len(body):]) {
			err = errors.New("the snappy block's checksum does not match its bytes")
		}
	case "zstandard":
		out, err = codec.DecodeZstd(b.out[:0], b.comp, limit)
	default: // null: the bytes themselves
		if len(b.comp) > limit {
			return nil, codec.TooLarge(limit)
		}
		return b.comp, nil
	}
	if err != nil {
		return nil, err
	}
	b.out = out
	return out, nil
}
