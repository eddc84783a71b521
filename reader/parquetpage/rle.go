package parquetpage

import (
	"encoding/binary"
	"fmt"
)

// rleDecoder decodes the RLE/bit-packed hybrid encoding (levels,
// dictionary indexes, booleans) a batch at a time, without allocating. A
// stream yields at most limit values: every run header is held to the
// values the page has left before a value of the run is decoded, so a
// damaged header fails as such instead of asking for a run of billions.
type rleDecoder struct {
	data  []byte
	pos   int  // the next run header
	width uint // bits per value, at most 32
	limit int  // values the stream may still yield, after the current run
	// bools is set for a stream of booleans, whose RLE run value is
	// true when it is not 0: parquet-go writes true as 0xff, and
	// parquet-java (readInteger() != 0) and Arrow read any such byte
	// as true.
	bools bool

	// The current run: n values left in it. An RLE run repeats value; a
	// bit-packed run's next value starts at bit.
	n      int
	packed bool
	value  uint32
	bit    int
}

func (d *rleDecoder) init(data []byte, width uint, limit int) {
	*d = rleDecoder{data: data, width: width, limit: limit}
}

// run reads the next run header.
func (d *rleDecoder) run() error {
	h, k := binary.Uvarint(d.data[d.pos:])
	if k <= 0 {
		if d.pos >= len(d.data) {
			return fmt.Errorf("%w: the RLE/bit-packed values end %d values early", ErrCorrupt, d.limit)
		}
		return fmt.Errorf("%w: an RLE/bit-packed run header does not decode", ErrCorrupt)
	}
	d.pos += k
	if h&1 == 0 {
		// Writers may round a run up to 8 values as they do a bit-packed
		// one (parquet-go does for booleans): the values past the stream's
		// end are never decoded.
		count := h >> 1
		if count > uint64(d.limit+7) {
			return fmt.Errorf("%w: an RLE run of %d values where %d remain", ErrCorrupt, count, d.limit)
		}
		n := min(int(count), d.limit)
		size := int(d.width+7) / 8
		if len(d.data)-d.pos < size {
			return fmt.Errorf("%w: an RLE run's value is cut short", ErrCorrupt)
		}
		var v uint32
		for i := range size {
			v |= uint32(d.data[d.pos+i]) << (8 * i)
		}
		if d.bools && v != 0 {
			v = 1
		}
		if d.width < 32 && v>>d.width != 0 {
			// The value takes whole bytes, but no more bits than the
			// stream's width: callers rely on no value exceeding it.
			return fmt.Errorf("%w: an RLE run's value %d does not fit in %d bits", ErrCorrupt, v, d.width)
		}
		d.pos += size
		d.n, d.packed, d.value = n, false, v
		d.limit -= n
		return nil
	}
	groups := h >> 1
	// The last group of a stream may be padded up to 8 values.
	if groups > uint64(d.limit+7)/8 {
		return fmt.Errorf("%w: a bit-packed run of %d values where %d remain", ErrCorrupt, groups*8, d.limit)
	}
	n := min(int(groups)*8, d.limit)
	size := int(groups) * int(d.width)
	if need := (n*int(d.width) + 7) / 8; len(d.data)-d.pos < need {
		return fmt.Errorf("%w: a bit-packed run of %d values is cut short", ErrCorrupt, n)
	}
	d.n, d.packed, d.bit = n, true, d.pos*8
	d.pos = min(d.pos+size, len(d.data))
	d.limit -= n
	return nil
}

// decodeLevels fills dst with the next len(dst) values (width <= 8) and
// returns the largest of them.
func (d *rleDecoder) decodeLevels(dst []uint8) (uint8, error) {
	var most uint8
	for len(dst) > 0 {
		if d.n == 0 {
			if err := d.run(); err != nil {
				return 0, err
			}
			continue
		}
		k := min(d.n, len(dst))
		if !d.packed {
			v := uint8(d.value)
			if d.value > 0xff {
				return 0, fmt.Errorf("%w: level %d", ErrCorrupt, d.value)
			}
			for i := range dst[:k] {
				dst[i] = v
			}
			most = max(most, v)
		} else {
			most = max(most, unpackBytes(dst[:k], d.data, d.bit, d.width))
			d.bit += k * int(d.width)
		}
		d.n -= k
		dst = dst[k:]
	}
	return most, nil
}

// decodeIndexes fills dst with the next len(dst) values (width <= 32).
func (d *rleDecoder) decodeIndexes(dst []int32) error {
	for len(dst) > 0 {
		if d.n == 0 {
			if err := d.run(); err != nil {
				return err
			}
			continue
		}
		k := min(d.n, len(dst))
		if !d.packed {
			v := int32(d.value)
			for i := range dst[:k] {
				dst[i] = v
			}
		} else {
			unpackInt32s(dst[:k], d.data, d.bit, d.width)
			d.bit += k * int(d.width)
		}
		d.n -= k
		dst = dst[k:]
	}
	return nil
}

// unpackBytes unpacks len(dst) values of width bits (<= 8) starting at bit
// of src, least significant bit first, and returns the largest. The caller
// has checked that src holds them.
func unpackBytes(dst []uint8, src []byte, bit int, width uint) uint8 {
	if width == 0 {
		clear(dst)
		return 0
	}
	mask := uint64(1)<<width - 1
	var most uint8
	i := 0
	for ; i < len(dst) && bit%8 != 0; i++ {
		v := uint8(bitsAt(src, bit, width))
		dst[i] = v
		most = max(most, v)
		bit += int(width)
	}
	// Then 8 values at a time: width bytes from a byte boundary, one load.
	{
		for ; i+8 <= len(dst); i += 8 {
			at := bit / 8
			var w uint64
			if at+8 <= len(src) {
				w = binary.LittleEndian.Uint64(src[at:])
			} else {
				w = loadShort(src[at:])
			}
			g := dst[i : i+8 : i+8]
			for j := range g {
				v := uint8(w >> (uint(j) * width) & mask)
				g[j] = v
				most = max(most, v)
			}
			bit += 8 * int(width)
		}
	}
	for ; i < len(dst); i++ {
		v := uint8(bitsAt(src, bit, width))
		dst[i] = v
		most = max(most, v)
		bit += int(width)
	}
	return most
}

// unpackInt32s unpacks len(dst) values of width bits (<= 32) starting at
// bit of src.
func unpackInt32s(dst []int32, src []byte, bit int, width uint) {
	if width == 0 {
		clear(dst)
		return
	}
	for i := range dst {
		dst[i] = int32(bitsAt(src, bit, width))
		bit += int(width)
	}
}

// bitsAt returns the width bits (<= 64) at bit of src, least significant
// first; bits past the end of src read as zeros.
func bitsAt(src []byte, bit int, width uint) uint64 {
	at, shift := bit/8, uint(bit%8)
	var w uint64
	if at+8 <= len(src) {
		w = binary.LittleEndian.Uint64(src[at:])
	} else if at < len(src) {
		w = loadShort(src[at:])
	}
	v := w >> shift
	if shift+width > 64 && at+8 < len(src) {
		v |= uint64(src[at+8]) << (64 - shift)
	}
	if width < 64 {
		v &= uint64(1)<<width - 1
	}
	return v
}

// loadShort loads up to 8 bytes little-endian, zero-filled.
func loadShort(b []byte) uint64 {
	var buf [8]byte
	copy(buf[:], b)
	return binary.LittleEndian.Uint64(buf[:])
}
