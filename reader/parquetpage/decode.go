package parquetpage

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// byteBudget ends a batch of DELTA_BYTE_ARRAY or BYTE_STREAM_SPLIT
// fixed-length values, which are rebuilt rather than referenced in the
// page, once it holds this many bytes (and at least one value).
const byteBudget = 4 << 20

// valueDecoder decodes the values section of one data page (or a
// dictionary page) in the page's encoding, a batch at a time.
type valueDecoder struct {
	enc  format.Encoding
	typ  format.Type
	size int // FIXED_LEN_BYTE_ARRAY width
	data []byte
	pos  int // PLAIN: the next value's byte (bit for BOOLEAN); BYTE_STREAM_SPLIT: its index

	count  int // BYTE_STREAM_SPLIT: the values in the page
	dict   *dictionary
	rle    rleDecoder // dictionary indexes, RLE booleans
	delta  deltaDecoder
	length lengthDecoder
	prefix prefixDecoder

	indexes []int32
	bits    []uint8
	wide    []int64
	out     []byte // BYTE_STREAM_SPLIT fixed-length values
}

// width returns the bytes of one value of a fixed-width type, 0 for
// BOOLEAN and BYTE_ARRAY.
func width(t format.Type, size int) int {
	switch t {
	case format.Int32, format.Float:
		return 4
	case format.Int64, format.Double:
		return 8
	case format.Int96:
		return 12
	case format.FixedLenByteArray:
		return size
	}
	return 0
}

// init prepares the decoding of at most limit values encoded with enc in
// data; dict is the column chunk's dictionary, nil when it has none.
func (d *valueDecoder) init(enc format.Encoding, t format.Type, size int, data []byte, limit int, dict *dictionary) error {
	d.enc, d.typ, d.size, d.data, d.pos, d.dict = enc, t, size, data, 0, dict
	switch enc {
	case format.Plain:
		return nil
	case format.PlainDictionary, format.RLEDictionary:
		if dict == nil {
			return fmt.Errorf("%w: a dictionary-encoded page without a dictionary page", ErrCorrupt)
		}
		if len(data) == 0 {
			if limit == 0 {
				return nil
			}
			return fmt.Errorf("%w: a dictionary-encoded page without its index bit width", ErrCorrupt)
		}
		if data[0] > 32 {
			return fmt.Errorf("%w: dictionary indexes of %d bits", ErrCorrupt, data[0])
		}
		d.rle.init(data[1:], uint(data[0]), limit)
		return nil
	case format.RLE:
		if t != format.Boolean {
			break
		}
		if len(data) < 4 {
			return fmt.Errorf("%w: RLE booleans without their length", ErrCorrupt)
		}
		n := binary.LittleEndian.Uint32(data)
		if uint64(n) > uint64(len(data)-4) {
			return fmt.Errorf("%w: RLE booleans of %d bytes where %d remain", ErrCorrupt, n, len(data)-4)
		}
		d.rle.init(data[4:4+n], 1, limit)
		d.rle.bools = true
		return nil
	case format.DeltaBinaryPacked:
		if t != format.Int32 && t != format.Int64 {
			break
		}
		return d.delta.init(data, t == format.Int32, limit)
	case format.DeltaLengthByteArray:
		if t != format.ByteArray {
			break
		}
		return d.length.init(data, limit)
	case format.DeltaByteArray:
		fixed := -1
		switch t {
		case format.FixedLenByteArray:
			fixed = size
		case format.ByteArray:
		default:
			return fmt.Errorf("%w: %s values encoded %s", ErrCorrupt, t, enc)
		}
		return d.prefix.init(data, limit, fixed)
	case format.ByteStreamSplit:
		w := width(t, size)
		if w == 0 || t == format.Int96 {
			break
		}
		if len(data)%w != 0 {
			return fmt.Errorf("%w: BYTE_STREAM_SPLIT values of %d bytes in %d bytes", ErrCorrupt, w, len(data))
		}
		d.count = len(data) / w
		return nil
	}
	return fmt.Errorf("%w: %s values encoded %s", ErrCorrupt, t, enc)
}

// decode decodes the next k values into s and points v at them. It
// decodes fewer only where values are rebuilt (DELTA_BYTE_ARRAY), once they
// take byteBudget bytes, and returns how many.
func (d *valueDecoder) decode(v *Values, s *values, k int) (int, error) {
	switch d.enc {
	case format.Plain:
		return k, d.plain(v, s, k)
	case format.PlainDictionary, format.RLEDictionary:
		return k, d.dictionary(v, s, k)
	case format.RLE:
		d.bits = grow(d.bits, k)
		if _, err := d.rle.decodeLevels(d.bits); err != nil {
			return 0, err
		}
		s.bools = grow(s.bools, k)
		for i, b := range d.bits {
			s.bools[i] = b != 0
		}
		v.Bool = s.bools
		return k, nil
	case format.DeltaBinaryPacked:
		if d.typ == format.Int32 {
			s.int32s = grow(s.int32s, k)
			v.Int32 = s.int32s
			return k, d.delta.decode32(s.int32s, &d.wide)
		}
		s.int64s = grow(s.int64s, k)
		v.Int64 = s.int64s
		return k, d.delta.decode64(s.int64s)
	case format.DeltaLengthByteArray:
		s.refs = grow(s.refs, k)
		v.Refs, v.Bytes = s.refs, d.length.data
		return k, d.length.decode(s.refs)
	case format.DeltaByteArray:
		s.refs = grow(s.refs, k)
		n, err := d.prefix.decode(s.refs, byteBudget)
		v.Refs, v.Bytes = s.refs[:n], d.prefix.out
		return n, err
	case format.ByteStreamSplit:
		return k, d.byteStreamSplit(v, s, k)
	}
	return 0, fmt.Errorf("%w: encoding %s", ErrCorrupt, d.enc)
}

// plain decodes k PLAIN values.
func (d *valueDecoder) plain(v *Values, s *values, k int) error {
	if d.typ == format.Boolean {
		if k > len(d.data)*8-d.pos {
			return d.short(k)
		}
		s.bools = grow(s.bools, k)
		for i := range s.bools {
			b := d.pos + i
			s.bools[i] = d.data[b/8]>>(b%8)&1 != 0
		}
		d.pos += k
		v.Bool = s.bools
		return nil
	}
	if d.typ == format.ByteArray {
		s.refs = grow(s.refs, k)
		data, pos := d.data, d.pos
		for i := range s.refs {
			if len(data)-pos < 4 {
				return d.short(k - i)
			}
			n := binary.LittleEndian.Uint32(data[pos:])
			pos += 4
			if uint64(n) > uint64(len(data)-pos) {
				return fmt.Errorf("%w: a byte array of %d bytes where %d remain", ErrCorrupt, n, len(data)-pos)
			}
			s.refs[i] = Ref{uint32(pos), n}
			pos += int(n)
		}
		d.pos = pos
		v.Refs, v.Bytes = s.refs, data
		return nil
	}
	w := width(d.typ, d.size)
	if w == 0 && d.typ != format.FixedLenByteArray {
		return fmt.Errorf("%w: values of type %s", ErrCorrupt, d.typ)
	}
	if k > 0 && (len(d.data)-d.pos)/max(w, 1) < k {
		return d.short(k)
	}
	src := d.data[d.pos : d.pos+k*w]
	d.pos += k * w
	switch d.typ {
	case format.Int32:
		s.int32s = grow(s.int32s, k)
		for i := range s.int32s {
			s.int32s[i] = int32(binary.LittleEndian.Uint32(src[4*i:]))
		}
		v.Int32 = s.int32s
	case format.Int64:
		s.int64s = grow(s.int64s, k)
		for i := range s.int64s {
			s.int64s[i] = int64(binary.LittleEndian.Uint64(src[8*i:]))
		}
		v.Int64 = s.int64s
	case format.Float:
		s.floats = grow(s.floats, k)
		for i := range s.floats {
			s.floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
		v.Float = s.floats
	case format.Double:
		s.doubles = grow(s.doubles, k)
		for i := range s.doubles {
			s.doubles[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
		}
		v.Double = s.doubles
	case format.Int96:
		s.int96s = grow(s.int96s, k)
		for i := range s.int96s {
			b := src[12*i:]
			s.int96s[i] = deprecated.Int96{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])}
		}
		v.Int96 = s.int96s
	case format.FixedLenByteArray:
		s.refs = grow(s.refs, k)
		base := d.pos - k*w
		for i := range s.refs {
			s.refs[i] = Ref{uint32(base + i*w), uint32(w)}
		}
		v.Refs, v.Bytes = s.refs, d.data
	}
	return nil
}

func (d *valueDecoder) short(k int) error {
	return fmt.Errorf("%w: the page's %s values end %d values early", ErrCorrupt, d.enc, k)
}

// dictionary decodes k dictionary indexes and resolves them.
func (d *valueDecoder) dictionary(v *Values, s *values, k int) error {
	d.indexes = grow(d.indexes, k)
	if err := d.rle.decodeIndexes(d.indexes); err != nil {
		return err
	}
	dict := d.dict
	n := uint32(dict.n)
	for _, i := range d.indexes {
		if uint32(i) >= n {
			return fmt.Errorf("%w: dictionary index %d of a dictionary of %d values", ErrCorrupt, uint32(i), n)
		}
	}
	switch d.typ {
	case format.Boolean:
		s.bools = gather(s.bools, dict.v.Bool, d.indexes)
		v.Bool = s.bools
	case format.Int32:
		s.int32s = gather(s.int32s, dict.v.Int32, d.indexes)
		v.Int32 = s.int32s
	case format.Int64:
		s.int64s = gather(s.int64s, dict.v.Int64, d.indexes)
		v.Int64 = s.int64s
	case format.Int96:
		s.int96s = gather(s.int96s, dict.v.Int96, d.indexes)
		v.Int96 = s.int96s
	case format.Float:
		s.floats = gather(s.floats, dict.v.Float, d.indexes)
		v.Float = s.floats
	case format.Double:
		s.doubles = gather(s.doubles, dict.v.Double, d.indexes)
		v.Double = s.doubles
	default:
		s.refs = gather(s.refs, dict.v.Refs, d.indexes)
		v.Refs, v.Bytes = s.refs, dict.v.Bytes
	}
	return nil
}

// gather sets dst to the dictionary values at the indexes, which the
// caller has checked.
func gather[T any](dst, dict []T, indexes []int32) []T {
	dst = grow(dst, len(indexes))
	for i, j := range indexes {
		dst[i] = dict[j]
	}
	return dst
}

// byteStreamSplit decodes k BYTE_STREAM_SPLIT values: byte j of value i
// is byte i of the j-th of the page's w streams.
func (d *valueDecoder) byteStreamSplit(v *Values, s *values, k int) error {
	if k > d.count-d.pos {
		return d.short(k - (d.count - d.pos))
	}
	w, n, at := width(d.typ, d.size), d.count, d.pos
	d.pos += k
	var buf [8]byte
	load := func(i int) []byte {
		for j := range w {
			buf[j] = d.data[j*n+at+i]
		}
		return buf[:w]
	}
	switch d.typ {
	case format.Int32:
		s.int32s = grow(s.int32s, k)
		for i := range s.int32s {
			s.int32s[i] = int32(binary.LittleEndian.Uint32(load(i)))
		}
		v.Int32 = s.int32s
	case format.Int64:
		s.int64s = grow(s.int64s, k)
		for i := range s.int64s {
			s.int64s[i] = int64(binary.LittleEndian.Uint64(load(i)))
		}
		v.Int64 = s.int64s
	case format.Float:
		s.floats = grow(s.floats, k)
		for i := range s.floats {
			s.floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(load(i)))
		}
		v.Float = s.floats
	case format.Double:
		s.doubles = grow(s.doubles, k)
		for i := range s.doubles {
			s.doubles[i] = math.Float64frombits(binary.LittleEndian.Uint64(load(i)))
		}
		v.Double = s.doubles
	case format.FixedLenByteArray:
		s.refs = grow(s.refs, k)
		d.out = grow(d.out, k*w)
		for i := range s.refs {
			for j := range w {
				d.out[i*w+j] = d.data[j*n+at+i]
			}
			s.refs[i] = Ref{uint32(i * w), uint32(w)}
		}
		v.Refs, v.Bytes = s.refs, d.out
	}
	return nil
}

// dictionary is a column chunk's dictionary page, decoded.
type dictionary struct {
	n     int
	v     Values
	store values
	data  []byte // the page's bytes, which byte-array values reference
}

// decode decodes the n PLAIN values of a dictionary page in data, first
// holding n to what data can hold.
func (dict *dictionary) decode(t format.Type, size int, data []byte, n int) error {
	least := width(t, size) // bytes a value takes at least
	switch t {
	case format.ByteArray:
		least = 4
	case format.Boolean:
		if n > 8*len(data) {
			return fmt.Errorf("%w: a dictionary page of %d booleans in %d bytes", ErrCorrupt, n, len(data))
		}
	}
	if least > 0 && n > len(data)/least {
		return fmt.Errorf("%w: a dictionary page of %d values in %d bytes", ErrCorrupt, n, len(data))
	}
	var d valueDecoder
	if err := d.init(format.Plain, t, size, data, n, nil); err != nil {
		return err
	}
	dict.n, dict.v, dict.data = n, Values{}, data
	_, err := d.decode(&dict.v, &dict.store, n)
	return err
}
