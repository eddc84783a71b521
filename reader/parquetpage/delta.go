package parquetpage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// maxDeltaBlock is the largest DELTA_BINARY_PACKED block accepted, as in
// parquet-go; writers use 128 (parquet-mr, arrow, parquet-go) or 1024.
const maxDeltaBlock = 1 << 16

// deltaDecoder decodes DELTA_BINARY_PACKED integers a batch at a time,
// straight from the page: no buffer is sized by a header. The header's
// value count is held to the page's before anything is decoded, and every
// block header to the bytes that follow it.
type deltaDecoder struct {
	data      []byte
	pos       int  // the next block header, or the end of the values
	is32      bool // values are INT32: bit widths up to 32
	perMini   int  // values in a miniblock, a multiple of 32
	minis     int  // miniblocks in a block
	total     int  // values not yet decoded
	first     bool // the header's first value is not yet decoded
	last      int64
	minDelta  int64
	widths    []byte // of the current block
	mini      int    // current miniblock in the block; minis when none
	width     uint
	miniBit   int // bit offset of the current miniblock's data
	inMini    int // values decoded from the current miniblock
	remaining int // deltas left in the stream (total - 1 after the first)
}

// init reads the header of a stream of at most limit values at data.
func (d *deltaDecoder) init(data []byte, is32 bool, limit int) error {
	*d = deltaDecoder{data: data, is32: is32}
	var h [3]uint64
	for i := range h {
		u, k := binary.Uvarint(d.data[d.pos:])
		if k <= 0 {
			return fmt.Errorf("%w: a DELTA_BINARY_PACKED header does not decode", ErrCorrupt)
		}
		h[i] = u
		d.pos += k
	}
	first, k := binary.Varint(d.data[d.pos:])
	if k <= 0 {
		return fmt.Errorf("%w: a DELTA_BINARY_PACKED header does not decode", ErrCorrupt)
	}
	d.pos += k
	block, minis, total := h[0], h[1], h[2]
	switch {
	case block == 0 || block%128 != 0 || block > maxDeltaBlock:
		return fmt.Errorf("%w: a DELTA_BINARY_PACKED block of %d values", ErrCorrupt, block)
	case minis == 0 || block%minis != 0 || (block/minis)%32 != 0:
		return fmt.Errorf("%w: a DELTA_BINARY_PACKED block of %d values in %d miniblocks", ErrCorrupt, block, minis)
	case total > uint64(limit):
		return fmt.Errorf("%w: DELTA_BINARY_PACKED header claims %d values where the page has %d", ErrCorrupt, total, limit)
	case is32 && (first < math.MinInt32 || first > math.MaxInt32):
		return fmt.Errorf("%w: DELTA_BINARY_PACKED first value %d of an INT32 column", ErrCorrupt, first)
	}
	d.perMini, d.minis, d.total = int(block/minis), int(minis), int(total)
	d.first, d.last = total > 0, first
	d.mini = d.minis
	if total > 0 {
		d.remaining = int(total) - 1
	}
	return nil
}

// end returns the offset just past the stream's last block, walking the
// block headers without decoding a value; the data that follows a stream
// (the bytes of DELTA_LENGTH_BYTE_ARRAY) starts there.
func (d *deltaDecoder) end() (int, error) {
	pos, left := d.pos, d.remaining
	for left > 0 {
		_, k := binary.Varint(d.data[pos:])
		if k <= 0 {
			return 0, fmt.Errorf("%w: a DELTA_BINARY_PACKED block header does not decode", ErrCorrupt)
		}
		pos += k
		if len(d.data)-pos < d.minis {
			return 0, fmt.Errorf("%w: a DELTA_BINARY_PACKED block header is cut short", ErrCorrupt)
		}
		widths := d.data[pos : pos+d.minis]
		pos += d.minis
		for _, w := range widths {
			if left <= 0 {
				break
			}
			if err := d.checkWidth(w); err != nil {
				return 0, err
			}
			size := d.perMini * int(w) / 8
			if len(d.data)-pos < size {
				return 0, fmt.Errorf("%w: a DELTA_BINARY_PACKED miniblock is cut short", ErrCorrupt)
			}
			pos += size
			left -= d.perMini
		}
	}
	return pos, nil
}

func (d *deltaDecoder) checkWidth(w byte) error {
	if w > 64 || d.is32 && w > 32 {
		return fmt.Errorf("%w: a DELTA_BINARY_PACKED miniblock of %d-bit values", ErrCorrupt, w)
	}
	return nil
}

// next moves to the next miniblock, reading a block header when the
// block is done.
func (d *deltaDecoder) next() error {
	d.mini++
	if d.mini >= d.minis {
		v, k := binary.Varint(d.data[d.pos:])
		if k <= 0 {
			return fmt.Errorf("%w: a DELTA_BINARY_PACKED block header does not decode", ErrCorrupt)
		}
		d.pos += k
		if len(d.data)-d.pos < d.minis {
			return fmt.Errorf("%w: a DELTA_BINARY_PACKED block header is cut short", ErrCorrupt)
		}
		d.minDelta = v
		d.widths = d.data[d.pos : d.pos+d.minis]
		d.pos += d.minis
		d.mini = 0
	}
	w := d.widths[d.mini]
	if err := d.checkWidth(w); err != nil {
		return err
	}
	n := min(d.perMini, d.remaining)
	if (n*int(w)+7)/8 > len(d.data)-d.pos {
		return fmt.Errorf("%w: a DELTA_BINARY_PACKED miniblock is cut short", ErrCorrupt)
	}
	d.width, d.miniBit, d.inMini = uint(w), d.pos*8, 0
	d.pos = min(d.pos+d.perMini*int(w)/8, len(d.data))
	return nil
}

// decode64 fills dst with the next len(dst) values.
func (d *deltaDecoder) decode64(dst []int64) error {
	if len(dst) > d.total {
		return fmt.Errorf("%w: the page's DELTA_BINARY_PACKED values end %d values early", ErrCorrupt, len(dst)-d.total)
	}
	d.total -= len(dst)
	i := 0
	if d.first && len(dst) > 0 {
		dst[0] = d.last
		d.first = false
		i = 1
	}
	last := d.last
	for i < len(dst) {
		if d.inMini == d.perMini || d.mini >= d.minis {
			if err := d.next(); err != nil {
				return err
			}
		}
		k := min(len(dst)-i, d.perMini-d.inMini)
		w, bit, md := d.width, d.miniBit+d.inMini*int(d.width), d.minDelta
		for j := range dst[i : i+k] {
			last += md + int64(bitsAt(d.data, bit, w))
			dst[i+j] = last
			bit += int(w)
		}
		d.inMini += k
		d.remaining -= k
		i += k
	}
	d.last = last
	return nil
}

// decode32 fills dst with the next len(dst) values of an INT32 stream,
// whose arithmetic wraps at 32 bits.
func (d *deltaDecoder) decode32(dst []int32, scratch *[]int64) error {
	buf := grow(*scratch, len(dst))
	*scratch = buf
	if err := d.decode64(buf); err != nil {
		return err
	}
	for i, v := range buf {
		dst[i] = int32(v)
	}
	return nil
}

// lengthDecoder decodes DELTA_LENGTH_BYTE_ARRAY values: the lengths as a
// delta stream, then the bytes of every value one after the other.
type lengthDecoder struct {
	lengths deltaDecoder
	data    []byte
	pos     int // the next value's bytes
	scratch []int64
}

func (d *lengthDecoder) init(data []byte, limit int) error {
	if err := d.lengths.init(data, true, limit); err != nil {
		return err
	}
	end, err := d.lengths.end()
	if err != nil {
		return err
	}
	d.data, d.pos = data, end
	return nil
}

// decode locates the next len(dst) values in d.data.
func (d *lengthDecoder) decode(dst []Ref) error {
	lens := grow(d.scratch, len(dst))
	d.scratch = lens
	if err := d.lengths.decode64(lens); err != nil {
		return err
	}
	for i, v := range lens {
		n := int64(int32(v)) // lengths are INT32
		if n < 0 || n > int64(len(d.data)-d.pos) {
			return fmt.Errorf("%w: a byte array of %d bytes where %d remain", ErrCorrupt, n, len(d.data)-d.pos)
		}
		dst[i] = Ref{uint32(d.pos), uint32(n)}
		d.pos += int(n)
	}
	return nil
}

// prefixDecoder decodes DELTA_BYTE_ARRAY values: each value is a prefix of
// the value before followed by a suffix, the prefix lengths a delta
// stream and the suffixes DELTA_LENGTH_BYTE_ARRAY. Values are rebuilt into
// out, which the batch then references; the value before the batch is kept
// in prev.
type prefixDecoder struct {
	prefixes deltaDecoder
	suffixes lengthDecoder
	fixed    int // the length every value must have, or -1
	prev     []byte
	keep     []byte // prev's own storage between batches
	out      []byte
	// pre and suf are prefix lengths and suffixes decoded and not yet used
	// from at on.
	pre []int64
	suf []Ref
	at  int
}

func (d *prefixDecoder) init(data []byte, limit, fixed int) error {
	d.fixed, d.prev, d.pre, d.suf, d.at = fixed, nil, d.pre[:0], d.suf[:0], 0
	if err := d.prefixes.init(data, true, limit); err != nil {
		return err
	}
	end, err := d.prefixes.end()
	if err != nil {
		return err
	}
	if err := d.suffixes.init(data[end:], limit); err != nil {
		return err
	}
	if d.prefixes.total != d.suffixes.lengths.total {
		return fmt.Errorf("%w: DELTA_BYTE_ARRAY has %d prefix lengths and %d suffix lengths",
			ErrCorrupt, d.prefixes.total, d.suffixes.lengths.total)
	}
	return nil
}

// decode rebuilds values into d.out until dst is full or, once at least
// one value is, until d.out holds budget bytes; it returns how many.
func (d *prefixDecoder) decode(dst []Ref, budget int) (n int, err error) {
	d.out = d.out[:0]
	defer func() {
		// d.out is reused by the next batch: keep the last value apart.
		d.keep = append(d.keep[:0], d.prev...)
		d.prev = d.keep
	}()
	for i := range dst {
		if i > 0 && len(d.out) >= budget {
			return i, nil
		}
		if d.at == len(d.pre) {
			k := len(dst) - i
			d.pre, d.suf, d.at = grow(d.pre, k), grow(d.suf, k), 0
			if err := d.prefixes.decode64(d.pre); err != nil {
				return i, err
			}
			if err := d.suffixes.decode(d.suf); err != nil {
				return i, err
			}
		}
		p, sr := int64(int32(d.pre[d.at])), d.suf[d.at] // lengths are INT32
		d.at++
		if p < 0 || p > int64(len(d.prev)) {
			return i, fmt.Errorf("%w: a DELTA_BYTE_ARRAY prefix of %d bytes after a value of %d", ErrCorrupt, p, len(d.prev))
		}
		s := d.suffixes.data[sr.Off : sr.Off+sr.Len]
		if d.fixed >= 0 && int(p)+len(s) != d.fixed {
			return i, fmt.Errorf("%w: a DELTA_BYTE_ARRAY value of %d bytes in a column of %d-byte values", ErrCorrupt, int(p)+len(s), d.fixed)
		}
		start := len(d.out)
		d.out = append(d.out, d.prev[:p]...)
		d.out = append(d.out, s...)
		dst[i] = Ref{uint32(start), uint32(len(d.out) - start)}
		d.prev = d.out[start:]
	}
	return len(dst), nil
}
