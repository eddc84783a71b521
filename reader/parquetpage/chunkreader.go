// Package parquetpage reads the pages of a Parquet column chunk and
// decodes them into typed batches: levels as bytes, values as int32,
// int64, float, double, INT96 or byte-array slices, dictionary indexes
// resolved as each batch is decoded, no value boxed.
//
// It owns every allocation a page can ask for, so that a damaged page
// fails as such rather than taking the process down. Page headers are
// parquet-go's format types, decoded with its thrift code from bytes the
// Reader has read; every size in a header is held to the column chunk's
// bytes (a page's compressed size), to the footer (its value count), or
// to a stated maximum (MaxPageSize) before it sizes anything, and
// decompression goes through a Decompressor that the caller supplies and
// that may only produce the size the header gives. Values are decoded a
// batch at a time straight from the page, so no run or block header
// inside a page sizes a buffer: each is held to the values its page has
// left before one of its values is decoded.
//
// Memory per Reader: the read-ahead window (ReadAhead, or the chunk when
// smaller, or the largest page header), one data page (decompressed, or
// as stored when it is not compressed) and the dictionary page, each at
// most MaxPageSize, and a batch of at most the entries asked for (byte
// arrays rebuilt from DELTA_BYTE_ARRAY or BYTE_STREAM_SPLIT are cut at
// about 4 MiB). A compressed page that does not fit the window is read
// into a Scratch, which the Readers of one goroutine share: it is only
// needed until the page is decompressed.
package parquetpage

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// ErrCorrupt is the error that every damaged or impossible page, page
// header or column chunk wraps.
var ErrCorrupt = errors.New("damaged page")

const (
	// MaxPageSize is the largest page the Reader decompresses: 256 MiB
	// uncompressed. Writers cut pages at about 1 MiB.
	MaxPageSize = 256 << 20
	// ReadAhead is how much of a column chunk the Reader reads at a time:
	// many small pages, or the header and the start of a large one, whose
	// rest is then read in one go.
	ReadAhead = 64 << 10
	// maxHeader is the largest page header read: page statistics may hold
	// long values.
	maxHeader = 16 << 20
)

// Column describes the leaf column of a chunk.
type Column struct {
	Type   format.Type
	Length int // of a FIXED_LEN_BYTE_ARRAY value
	MaxDef int
	MaxRep int
	Codec  format.CompressionCodec
}

// Chunk locates a column chunk in its file, as the footer gives it.
type Chunk struct {
	Offset, Size int64
	// NumValues is the chunk's entries (values and nulls) in every page.
	NumValues int64
}

// Decompressor decompresses src, compressed with codec, into exactly size
// bytes, reusing dst's storage when it can. It must fail, without
// allocating beyond size, when src decompresses to anything else.
type Decompressor func(codec format.CompressionCodec, dst, src []byte, size int) ([]byte, error)

// Scratch holds the compressed pages of the Readers that share it, one at
// a time; Readers that share one must not be used concurrently.
type Scratch struct {
	raw []byte
}

// Reader reads the pages of one column chunk at a time.
type Reader struct {
	col        Column
	decompress Decompressor
	src        io.ReaderAt
	proto      thrift.CompactProtocol
	scratch    *Scratch

	// The bytes [pos, end) of the file are the chunk's still to read; win
	// holds those read ahead from pos.
	pos, end int64
	win      []byte
	winBuf   []byte
	page     []byte // the data page: decompressed, or read when too large for the window
	v2levels []byte // the levels of a data page v2 whose page is in scratch
	dictBuf  []byte // the decompressed dictionary page
	dict     dictionary
	hasDict  bool
	sawData  bool
	want     int64 // the chunk's entries, from the footer
	seen     int64 // entries of the pages read so far

	// The current data page: left entries whose levels are not decoded
	// yet; defs[lo:hi] and reps[lo:hi] decoded and not yet returned.
	v2       bool
	first    bool // no batch of the page returned yet
	left     int
	repDec   levelDecoder
	defDec   levelDecoder
	vals     valueDecoder
	defs     []uint8
	reps     []uint8
	lo, hi   int
	store    values
	maxDefOK bool // MaxDef+1 is a power of two: no decoded level exceeds it
	maxRepOK bool
}

// Reset points r at chunk c of column col in src; decompress decodes its
// compressed pages, read into s when they do not fit the window (nil: a
// Scratch of r's own).
func (r *Reader) Reset(src io.ReaderAt, col Column, c Chunk, decompress Decompressor, s *Scratch) {
	if s == nil {
		if r.scratch == nil {
			r.scratch = new(Scratch)
		}
		s = r.scratch
	}
	r.src, r.col, r.decompress, r.scratch = src, col, decompress, s
	r.pos, r.end, r.win = c.Offset, c.Offset+c.Size, nil
	r.want, r.seen = c.NumValues, 0
	r.hasDict, r.sawData = false, false
	r.left, r.lo, r.hi = 0, 0, 0
	r.maxDefOK = col.MaxDef&(col.MaxDef+1) == 0
	r.maxRepOK = col.MaxRep&(col.MaxRep+1) == 0
}

// Release drops the storage r holds for its pages and batches.
func (r *Reader) Release() {
	*r = Reader{}
}

// Read decodes the next entries of the chunk into v: at most max, and at
// most what is left of the current page. It returns io.EOF after the
// chunk's last page, once the entries of its pages are the footer's.
func (r *Reader) Read(v *Values, max int) error {
	*v = Values{}
	if r.lo == r.hi {
		for r.left == 0 {
			if err := r.nextPage(); err != nil {
				return err
			}
		}
		if err := r.levels(min(max, r.left)); err != nil {
			return err
		}
	}
	n := min(max, r.hi-r.lo)
	var defs, reps []uint8
	k := n
	if r.col.MaxDef > 0 {
		defs = r.defs[r.lo : r.lo+n]
		k = countLevel(defs, uint8(r.col.MaxDef))
	}
	if r.col.MaxRep > 0 {
		reps = r.reps[r.lo : r.lo+n]
	}
	got, err := r.vals.decode(v, &r.store, k)
	if err != nil {
		return err
	}
	if got < k {
		// Rebuilt byte arrays filled the batch: it ends after the last
		// value decoded, and the levels after it wait for the next Read.
		n = entriesFor(defs, uint8(r.col.MaxDef), got)
		defs = defs[:n]
		if reps != nil {
			reps = reps[:n]
		}
	}
	v.N, v.Def, v.Rep = n, defs, reps
	r.lo += n
	return nil
}

// levels decodes the levels of the next n entries of the page.
func (r *Reader) levels(n int) error {
	r.lo, r.hi = 0, n
	if r.col.MaxRep > 0 {
		if err := decodeLevels(&r.repDec, &r.reps, n, r.col.MaxRep, r.maxRepOK, "repetition"); err != nil {
			return err
		}
		if r.first && r.v2 && n > 0 && r.reps[0] != 0 {
			return fmt.Errorf("%w: a data page v2 that does not start a row", ErrCorrupt)
		}
	}
	if r.col.MaxDef > 0 {
		if err := decodeLevels(&r.defDec, &r.defs, n, r.col.MaxDef, r.maxDefOK, "definition"); err != nil {
			return err
		}
	}
	r.first = false
	r.left -= n
	return nil
}

// decodeLevels decodes n levels into *buf and holds them to the column's
// largest, unless the bit width cannot exceed it (ok).
func decodeLevels(dec *levelDecoder, buf *[]uint8, n, largest int, ok bool, what string) error {
	*buf = grow(*buf, n)
	most, err := dec.decode(*buf)
	if err != nil {
		return fmt.Errorf("%s levels: %w", what, err)
	}
	if !ok && int(most) > largest {
		return fmt.Errorf("%w: %s level %d of a column whose largest is %d", ErrCorrupt, what, most, largest)
	}
	return nil
}

// countLevel counts the levels equal to max (no level exceeds it).
func countLevel(levels []uint8, max uint8) int {
	n := 0
	for _, l := range levels {
		if l == max {
			n++
		}
	}
	return n
}

// entriesFor returns how many entries hold the first k values.
func entriesFor(defs []uint8, max uint8, k int) int {
	if defs == nil {
		return k
	}
	for i, l := range defs {
		if l == max {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return len(defs)
}

// nextPage reads the next page header and the page; a dictionary page is
// decoded whole, a data page made ready for Read.
func (r *Reader) nextPage() error {
	if r.pos >= r.end {
		if r.seen != r.want {
			return fmt.Errorf("%w: the column chunk's pages hold %d values, its footer says %d", ErrCorrupt, r.seen, r.want)
		}
		return io.EOF
	}
	h, err := r.header()
	if err != nil {
		return err
	}
	if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 {
		return fmt.Errorf("%w: a page of %d bytes, %d uncompressed", ErrCorrupt, h.CompressedPageSize, h.UncompressedPageSize)
	}
	if int64(h.CompressedPageSize) > r.end-r.pos {
		return fmt.Errorf("%w: a page of %d bytes where its column chunk has %d left", ErrCorrupt, h.CompressedPageSize, r.end-r.pos)
	}
	if h.UncompressedPageSize > MaxPageSize || h.CompressedPageSize > MaxPageSize {
		return fmt.Errorf("%w: a page of %d bytes, %d uncompressed, more than the %d read",
			ErrCorrupt, h.CompressedPageSize, h.UncompressedPageSize, MaxPageSize)
	}
	// A compressed page only needs to last until it is decompressed; the
	// levels of a data page v2 are copied out of it (dataPageV2).
	compressed := r.col.Codec != format.Uncompressed &&
		(!h.DataPageHeaderV2.Valid || !h.DataPageHeaderV2.V.IsCompressed.Valid || h.DataPageHeaderV2.V.IsCompressed.V)
	payload, err := r.payload(int(h.CompressedPageSize), !compressed)
	if err != nil {
		return err
	}
	if h.CRC != 0 {
		if got := crc32.ChecksumIEEE(payload); got != uint32(h.CRC) {
			return fmt.Errorf("%w: CRC checksum mismatch: the page's data has %08x, its header %08x", ErrCorrupt, got, uint32(h.CRC))
		}
	}
	switch h.Type {
	case format.DictionaryPage:
		return r.dictionaryPage(h, payload)
	case format.DataPage:
		return r.dataPageV1(h, payload)
	case format.DataPageV2:
		return r.dataPageV2(h, payload)
	}
	return fmt.Errorf("%w: a page of type %s", ErrCorrupt, h.Type)
}

// decodeHeader decodes a page header with parquet-go's thrift code, which
// is third-party code fed the file's bytes: a panic of its is the header's
// damage.
func decodeHeader(pr thrift.Reader, h *format.PageHeader) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the thrift decoder failed: %v", r)
		}
	}()
	return thrift.NewDecoder(pr).Decode(h)
}

// header decodes the page header at r.pos and consumes it.
func (r *Reader) header() (*format.PageHeader, error) {
	h := new(format.PageHeader)
	for size := 1 << 10; ; size *= 2 {
		b, err := r.peek(size)
		if err != nil {
			return nil, err
		}
		*h = format.PageHeader{}
		pr := r.proto.NewReaderFromBytes(b)
		err = decodeHeader(pr, h)
		if err == nil {
			r.skip(pr.BytesRead())
			return h, nil
		}
		if int64(len(b)) >= r.end-r.pos || len(b) >= maxHeader {
			return nil, fmt.Errorf("%w: page header: %w", ErrCorrupt, err)
		}
		size = max(size, len(b))
	}
}

// peek returns at least the next n bytes of the chunk (fewer only where
// it ends), reading ahead.
func (r *Reader) peek(n int) ([]byte, error) {
	n = int(min(int64(n), r.end-r.pos))
	if len(r.win) >= n {
		return r.win, nil
	}
	size := max(n, int(min(ReadAhead, r.end-r.pos)))
	if cap(r.winBuf) < size {
		r.winBuf = make([]byte, size)
	}
	buf := r.winBuf[:size]
	k := copy(buf, r.win)
	m, err := r.src.ReadAt(buf[k:], r.pos+int64(k))
	if m < len(buf)-k {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read column chunk: %w", err)
	}
	r.win = buf[:k+m]
	return r.win, nil
}

func (r *Reader) skip(n int) {
	r.win = r.win[n:]
	r.pos += int64(n)
}

// payload returns the next n bytes, a page's: in the window when they fit
// it, otherwise read into r.page when the page must last (own), into the
// scratch when it is decompressed at once.
func (r *Reader) payload(n int, own bool) ([]byte, error) {
	if n <= max(cap(r.winBuf), ReadAhead) {
		b, err := r.peek(n)
		if err != nil {
			return nil, err
		}
		r.skip(n)
		return b[:n:n], nil
	}
	dst := &r.scratch.raw
	if own {
		dst = &r.page
	}
	buf := grow(*dst, n)
	*dst = buf
	k := copy(buf, r.win)
	m, err := r.src.ReadAt(buf[k:], r.pos+int64(k))
	if m < n-k {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read column chunk: %w", err)
	}
	r.win = nil
	r.pos += int64(n)
	return buf, nil
}

// uncompress returns the payload's data of size bytes, decompressed when
// compressed is set, into dst's storage.
func (r *Reader) uncompress(dst, payload []byte, size int, compressed bool) ([]byte, error) {
	if r.col.Codec == format.Uncompressed || !compressed {
		if len(payload) != size {
			return nil, fmt.Errorf("%w: an uncompressed page of %d bytes whose header says %d", ErrCorrupt, len(payload), size)
		}
		return payload, nil
	}
	out, err := r.decompress(r.col.Codec, dst, payload, size)
	if err != nil {
		return nil, fmt.Errorf("%w: decompress: %w", ErrCorrupt, err)
	}
	if len(out) != size {
		return nil, fmt.Errorf("%w: a page that decompresses to %d bytes, its header says %d", ErrCorrupt, len(out), size)
	}
	return out, nil
}

func (r *Reader) dictionaryPage(h *format.PageHeader, payload []byte) error {
	if !h.DictionaryPageHeader.Valid {
		return fmt.Errorf("%w: a dictionary page without its header", ErrCorrupt)
	}
	if r.hasDict || r.sawData {
		return fmt.Errorf("%w: a dictionary page after the column chunk's first page", ErrCorrupt)
	}
	dh := &h.DictionaryPageHeader.V
	if dh.Encoding != format.Plain && dh.Encoding != format.PlainDictionary {
		return fmt.Errorf("%w: a dictionary page encoded %s", ErrCorrupt, dh.Encoding)
	}
	if dh.NumValues < 0 {
		return fmt.Errorf("%w: a dictionary page of %d values", ErrCorrupt, dh.NumValues)
	}
	data, err := r.uncompress(r.dictBuf, payload, int(h.UncompressedPageSize), true)
	if err != nil {
		return err
	}
	if r.col.Codec == format.Uncompressed {
		// The window (or r.page) moves on: the dictionary keeps a copy.
		data = append(r.dictBuf[:0], data...)
	}
	r.dictBuf = data
	if err := r.dict.decode(r.col.Type, r.col.Length, data, int(dh.NumValues)); err != nil {
		return fmt.Errorf("dictionary page: %w", err)
	}
	r.hasDict = true
	return nil
}

// dataPage checks a data page's entry count against the chunk's and
// prepares its values.
func (r *Reader) dataPage(n int32, enc format.Encoding, data []byte) error {
	if n < 0 || int64(n) > r.want-r.seen {
		return fmt.Errorf("%w: a data page of %d values where its column chunk has %d left", ErrCorrupt, n, r.want-r.seen)
	}
	var dict *dictionary
	if r.hasDict {
		dict = &r.dict
	}
	if err := r.vals.init(enc, r.col.Type, r.col.Length, data, int(n), dict); err != nil {
		return err
	}
	r.sawData, r.first = true, true
	r.seen += int64(n)
	r.left = int(n)
	return nil
}

func (r *Reader) dataPageV1(h *format.PageHeader, payload []byte) error {
	if !h.DataPageHeader.Valid {
		return fmt.Errorf("%w: a data page without its header", ErrCorrupt)
	}
	dh := &h.DataPageHeader.V
	data, err := r.uncompress(r.page, payload, int(h.UncompressedPageSize), true)
	if err != nil {
		return err
	}
	if r.col.Codec != format.Uncompressed {
		r.page = data
	}
	n := int(max(dh.NumValues, 0))
	r.v2 = false
	if r.col.MaxRep > 0 {
		if data, err = r.repDec.initV1(data, dh.RepetitionLevelEncoding, r.col.MaxRep, n); err != nil {
			return fmt.Errorf("repetition levels: %w", err)
		}
	}
	if r.col.MaxDef > 0 {
		if data, err = r.defDec.initV1(data, dh.DefinitionLevelEncoding, r.col.MaxDef, n); err != nil {
			return fmt.Errorf("definition levels: %w", err)
		}
	}
	return r.dataPage(dh.NumValues, dh.Encoding, data)
}

func (r *Reader) dataPageV2(h *format.PageHeader, payload []byte) error {
	if !h.DataPageHeaderV2.Valid {
		return fmt.Errorf("%w: a data page v2 without its header", ErrCorrupt)
	}
	dh := &h.DataPageHeaderV2.V
	repLen, defLen := int64(dh.RepetitionLevelsByteLength), int64(dh.DefinitionLevelsByteLength)
	if repLen < 0 || defLen < 0 || repLen+defLen > int64(len(payload)) || repLen+defLen > int64(h.UncompressedPageSize) {
		return fmt.Errorf("%w: a data page v2 of %d bytes with %d bytes of repetition and %d of definition levels",
			ErrCorrupt, len(payload), repLen, defLen)
	}
	n := int(max(dh.NumValues, 0))
	compressed := !dh.IsCompressed.Valid || dh.IsCompressed.V
	// The levels are never compressed; the values may be, and then the
	// page may be in the scratch, which other Readers reuse.
	levels := payload[:repLen+defLen]
	if compressed && r.col.Codec != format.Uncompressed {
		r.v2levels = append(r.v2levels[:0], levels...)
		levels = r.v2levels
	}
	if r.col.MaxRep > 0 {
		r.repDec.initRLE(levels[:repLen], r.col.MaxRep, n)
	}
	if r.col.MaxDef > 0 {
		r.defDec.initRLE(levels[repLen:], r.col.MaxDef, n)
	}
	size := int(int64(h.UncompressedPageSize) - repLen - defLen)
	data, err := r.uncompress(r.page, payload[repLen+defLen:], size, compressed)
	if err != nil {
		return err
	}
	if compressed && r.col.Codec != format.Uncompressed {
		r.page = data
	}
	r.v2 = true
	return r.dataPage(dh.NumValues, dh.Encoding, data)
}

// levelDecoder decodes the repetition or definition levels of a page:
// RLE/bit-packed hybrid, or the deprecated BIT_PACKED of data pages v1.
type levelDecoder struct {
	rle    rleDecoder
	packed bool // BIT_PACKED
	data   []byte
	bit    int
	width  uint
}

// initV1 reads the levels at the start of a v1 page's data and returns
// the data after them.
func (d *levelDecoder) initV1(data []byte, enc format.Encoding, maxLevel, n int) ([]byte, error) {
	w := uint(bits.Len(uint(maxLevel)))
	switch enc {
	case format.RLE:
		if len(data) < 4 {
			return nil, fmt.Errorf("%w: levels without their length", ErrCorrupt)
		}
		size := uint64(data[0]) | uint64(data[1])<<8 | uint64(data[2])<<16 | uint64(data[3])<<24
		if size > uint64(len(data)-4) {
			return nil, fmt.Errorf("%w: levels of %d bytes where %d remain", ErrCorrupt, size, len(data)-4)
		}
		d.packed = false
		d.rle.init(data[4:4+size], w, n)
		return data[4+size:], nil
	case format.BitPacked:
		size := (uint64(n)*uint64(w) + 7) / 8
		if size > uint64(len(data)) {
			return nil, fmt.Errorf("%w: BIT_PACKED levels of %d bytes where %d remain", ErrCorrupt, size, len(data))
		}
		*d = levelDecoder{packed: true, data: data[:size], width: w}
		return data[size:], nil
	}
	return nil, fmt.Errorf("%w: levels encoded %s", ErrCorrupt, enc)
}

func (d *levelDecoder) initRLE(data []byte, maxLevel, n int) {
	d.packed = false
	d.rle.init(data, uint(bits.Len(uint(maxLevel))), n)
}

// decode fills dst and returns the largest level.
func (d *levelDecoder) decode(dst []uint8) (uint8, error) {
	if !d.packed {
		return d.rle.decodeLevels(dst)
	}
	// BIT_PACKED: most significant bit first; initV1 checked the length.
	var most uint8
	for i := range dst {
		var v uint8
		for range d.width {
			v = v<<1 | d.data[d.bit/8]>>(7-d.bit%8)&1
			d.bit++
		}
		dst[i] = v
		most = max(most, v)
	}
	return most, nil
}
