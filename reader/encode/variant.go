package encode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
)

// The variant binary encoding (Parquet's VariantEncoding.md) to JSON. A
// variant value is two byte strings: the metadata, a dictionary of the
// object keys the value uses, and the value, a tree of objects, arrays
// and primitives. It is served as the JSON it encodes, primitives by the
// value contract of columns: decimals as exact strings, dates as epoch
// milliseconds, timestamps as epoch milliseconds or, with ISO timestamps,
// RFC 3339 strings, times as microseconds, binary as base64, uuids in
// their canonical form, strings with invalid UTF-8 replaced; object keys
// come in stored order (sorted, as the spec requires).
//
// The decoder is its own validator, and holds a value to what arrow-go's
// parquet/variant package (which iceberg-go reads variants with) accepts:
// the metadata's offsets in range and monotonic, every object field's id
// in the dictionary, the keys of an object strictly ascending, the
// children of an object tiling its data exactly and those of an array
// following each other exactly (so no byte is read twice and the JSON
// stays linear in the value), every size inside the bytes, and nothing
// after the value. Beyond what arrow-go checks, nesting is bounded by
// maxVariantDepth (arrow-go allows 1024; Druid's JSON parser stops at
// 1000 levels in all), and so are the object keys one value writes
// (keyBudget), since a short value can name a long key of its metadata
// many times; everything else a value writes is at most a few dozen
// bytes for each of its own. Nothing is allocated per value but a scratch
// list of an object's fields that a stream reuses.

// ErrVariant marks a value that is not well-formed variant binary.
var ErrVariant = errors.New("malformed variant")

const (
	// MaxVariantDepth bounds the nesting of objects and arrays in a value.
	MaxVariantDepth = 256
	// variantKeysFloor and variantKeysPerByte bound the object keys one
	// value writes: 1 MiB, plus 64 bytes for each byte of its metadata and
	// value.
	variantKeysFloor   = 1 << 20
	variantKeysPerByte = 64
)

// The basic types of a value's header byte (its low 2 bits).
const (
	variantPrimitive   = 0
	variantShortString = 1
	variantObject      = 2
	variantArray       = 3
)

// The primitive types (the header's high 6 bits of a primitive).
const (
	variantNull           = 0
	variantTrue           = 1
	variantFalse          = 2
	variantInt8           = 3
	variantInt16          = 4
	variantInt32          = 5
	variantInt64          = 6
	variantDouble         = 7
	variantDecimal4       = 8
	variantDecimal8       = 9
	variantDecimal16      = 10
	variantDate           = 11
	variantTimestamp      = 12 // microseconds, UTC
	variantTimestampNTZ   = 13 // microseconds, no time zone
	variantFloat          = 14
	variantBinary         = 15
	variantString         = 16
	variantTimeNTZ        = 17 // microseconds since midnight
	variantTimestampNs    = 18
	variantTimestampNsNTZ = 19
	variantUUID           = 20
)

// variantMeta is the parsed metadata of a value: the key dictionary.
type variantMeta struct {
	raw     []byte
	offSize int
	n       int // keys in the dictionary
	offsets int // where the n+1 offsets start
	keys    int // where the key bytes start
}

// parse reads the metadata raw, checking every offset of its dictionary
// as arrow-go does (which does not look at the offset of an empty one).
func (m *variantMeta) parse(raw []byte) error {
	*m = variantMeta{raw: raw}
	if len(raw) < 3 {
		return fmt.Errorf("%w: metadata of %d bytes", ErrVariant, len(raw))
	}
	if v := raw[0] & 0x0f; v != 1 {
		return fmt.Errorf("%w: metadata version %d", ErrVariant, v)
	}
	m.offSize = int(raw[0]>>6) + 1
	if len(raw) < 1+m.offSize {
		return fmt.Errorf("%w: metadata of %d bytes with %d-byte offsets", ErrVariant, len(raw), m.offSize)
	}
	n := readUintLE(raw[1:], m.offSize)
	if n == 0 {
		return nil
	}
	m.offsets = 1 + m.offSize
	if uint64(m.offsets)+(n+1)*uint64(m.offSize) > uint64(len(raw)) {
		return fmt.Errorf("%w: metadata of %d keys in %d bytes", ErrVariant, n, len(raw))
	}
	m.n = int(n)
	m.keys = m.offsets + (m.n+1)*m.offSize
	prev := uint64(0)
	for i := 0; i <= m.n; i++ {
		off := readUintLE(raw[m.offsets+i*m.offSize:], m.offSize)
		switch {
		case i == 0 && off != 0:
			return fmt.Errorf("%w: metadata's first key offset is %d", ErrVariant, off)
		case off < prev:
			return fmt.Errorf("%w: metadata's key offsets go back at key %d", ErrVariant, i)
		case uint64(m.keys)+off > uint64(len(raw)):
			return fmt.Errorf("%w: metadata's key %d ends past its bytes", ErrVariant, i)
		}
		prev = off
	}
	return nil
}

// key returns the dictionary's key id.
func (m *variantMeta) key(id uint64) ([]byte, error) {
	if id >= uint64(m.n) {
		return nil, fmt.Errorf("%w: field id %d of a dictionary of %d keys", ErrVariant, id, m.n)
	}
	p := m.offsets + int(id)*m.offSize
	from := readUintLE(m.raw[p:], m.offSize)
	to := readUintLE(m.raw[p+m.offSize:], m.offSize)
	return m.raw[m.keys+int(from) : m.keys+int(to)], nil
}

// readUintLE reads an unsigned little-endian integer of n (1 to 4) bytes.
func readUintLE(b []byte, n int) uint64 {
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// VariantEncoder encodes the variant values of one column of a stream.
type VariantEncoder struct {
	meta variantMeta
	// metaCopy holds the metadata meta was parsed from, so that the next
	// row's, usually the same bytes, is not parsed again.
	metaCopy []byte
	metaErr  error
	// spans is the scratch of object fields, a region per open object.
	spans []variantSpan
	// keyBudget is what is left of the object keys the value being
	// encoded may write (see begin and appendVariant).
	keyBudget int
}

// variantSpan is where one object field's value lies in the object's data.
type variantSpan struct{ from, to uint64 }

// SetMeta makes raw the metadata of the next values.
func (e *VariantEncoder) SetMeta(raw []byte) error {
	if e.metaCopy != nil && bytes.Equal(raw, e.metaCopy) {
		return e.metaErr
	}
	e.metaCopy = append(e.metaCopy[:0], raw...)
	if e.metaCopy == nil {
		e.metaCopy = []byte{}
	}
	e.metaErr = e.meta.parse(e.metaCopy)
	return e.metaErr
}

// Begin starts a value whose metadata is the current one: its keys may
// take 1 MiB and 64 bytes for each byte of metadata, and each byte of
// value encoded (appendVariant) adds 64 more.
func (e *VariantEncoder) Begin() {
	e.keyBudget = variantKeysFloor + variantKeysPerByte*len(e.metaCopy)
}

// AppendVariant appends the JSON of v, which must hold exactly one
// value, under the current metadata, depth levels into the variant.
func (e *VariantEncoder) AppendVariant(b, v []byte, depth int, enc *Options, s *Scratch) ([]byte, error) {
	e.keyBudget += variantKeysPerByte * len(v)
	b, n, err := e.value(b, v, depth, enc, s)
	if err == nil && n != len(v) {
		err = fmt.Errorf("%w: %d bytes after the value", ErrVariant, len(v)-n)
	}
	return b, err
}

// value appends the JSON of the value that starts v and returns how many
// bytes it takes.
func (e *VariantEncoder) value(b, v []byte, depth int, enc *Options, s *Scratch) ([]byte, int, error) {
	if len(v) == 0 {
		return b, 0, fmt.Errorf("%w: an empty value", ErrVariant)
	}
	h := v[0]
	switch h & 0x3 {
	case variantShortString:
		n := 1 + int(h>>2)
		if len(v) < n {
			return b, 0, fmt.Errorf("%w: a short string of %d bytes in %d", ErrVariant, n-1, len(v)-1)
		}
		var bad bool
		if b, bad = jsonstr.AppendCheck(b, v[1:n]); bad {
			s.Invalid++
		}
		return b, n, nil
	case variantObject:
		return e.Object(b, v, depth, enc, s, nil)
	case variantArray:
		return e.array(b, v, depth, enc, s)
	}
	return e.primitive(b, v, enc, s)
}

// primitiveSizes are the sizes of the fixed-size primitives, header
// included; 0 for the others.
var primitiveSizes = [...]int{
	variantNull: 1, variantTrue: 1, variantFalse: 1, variantInt8: 2, variantInt16: 3, variantInt32: 5,
	variantInt64: 9, variantDouble: 9, variantDecimal4: 6, variantDecimal8: 10, variantDecimal16: 18,
	variantDate: 5, variantTimestamp: 9, variantTimestampNTZ: 9, variantFloat: 5, variantTimeNTZ: 9,
	variantTimestampNs: 9, variantTimestampNsNTZ: 9, variantUUID: 17,
}

// primitive appends a primitive value.
func (e *VariantEncoder) primitive(b, v []byte, enc *Options, s *Scratch) ([]byte, int, error) {
	t := int(v[0] >> 2)
	if t == variantBinary || t == variantString {
		if len(v) < 5 {
			return b, 0, fmt.Errorf("%w: a truncated string or binary length", ErrVariant)
		}
		n := uint64(binary.LittleEndian.Uint32(v[1:5]))
		if n > uint64(len(v)-5) {
			return b, 0, fmt.Errorf("%w: a string or binary of %d bytes in %d", ErrVariant, n, len(v)-5)
		}
		data := v[5 : 5+n]
		if t == variantString {
			var bad bool
			if b, bad = jsonstr.AppendCheck(b, data); bad {
				s.Invalid++
			}
		} else {
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, data)
			b = append(b, '"')
		}
		return b, 5 + int(n), nil
	}
	if t >= len(primitiveSizes) || primitiveSizes[t] == 0 {
		return b, 0, fmt.Errorf("%w: primitive type %d", ErrVariant, t)
	}
	n := primitiveSizes[t]
	if len(v) < n {
		return b, 0, fmt.Errorf("%w: a primitive of type %d needs %d bytes, has %d", ErrVariant, t, n, len(v))
	}
	p := v[1:n]
	i64 := func() int64 { return int64(binary.LittleEndian.Uint64(p)) }
	switch t {
	case variantNull:
		b = append(b, "null"...)
	case variantTrue:
		b = append(b, "true"...)
	case variantFalse:
		b = append(b, "false"...)
	case variantInt8:
		b = appendInt(b, int64(int8(p[0])))
	case variantInt16:
		b = appendInt(b, int64(int16(binary.LittleEndian.Uint16(p))))
	case variantInt32:
		b = appendInt(b, int64(int32(binary.LittleEndian.Uint32(p))))
	case variantInt64:
		b = appendInt(b, i64())
	case variantDouble:
		b = appendFloat(b, math.Float64frombits(binary.LittleEndian.Uint64(p)), 64)
	case variantFloat:
		b = appendFloat(b, float64(math.Float32frombits(binary.LittleEndian.Uint32(p))), 32)
	case variantDecimal4:
		b = appendDecimalInt64(b, int64(int32(binary.LittleEndian.Uint32(p[1:]))), int(p[0]), s)
	case variantDecimal8:
		b = appendDecimalInt64(b, int64(binary.LittleEndian.Uint64(p[1:])), int(p[0]), s)
	case variantDecimal16:
		// Little-endian in the value; appendDecimalBytes reads big-endian.
		var be [16]byte
		for i := range be {
			be[i] = p[16-i]
		}
		b = appendDecimalBytes(b, be[:], int(p[0]), s)
	case variantDate:
		b = appendInt(b, int64(int32(binary.LittleEndian.Uint32(p)))*millisPerDay)
	case variantTimestamp, variantTimestampNTZ:
		b = appendTimestamp(b, i64(), 1000, false, enc.ISOTimestamps)
	case variantTimestampNs, variantTimestampNsNTZ:
		b = appendTimestamp(b, i64(), 1, true, enc.ISOTimestamps)
	case variantTimeNTZ:
		b = appendInt(b, i64())
	case variantUUID:
		b = appendUUID(b, p)
	}
	return b, n, nil
}

// ShreddedFields are the fields of a shredded object's typed_value, in
// ascending order of their names, which object merges with the fields of
// its value (a partially shredded object keeps the fields it does not
// shred there).
type ShreddedFields interface {
	Fields() int
	Name(i int) []byte
	// AppendField appends field i as `"key":value`, or nothing when the
	// object lacks it, and reports which.
	AppendField(b []byte, i, depth int) ([]byte, bool, error)
}

// Object appends an object: its fields in stored order, which the spec
// sorts by key. With typed (a shredded object), v may be nil (the object
// is all in typed), and typed's fields are merged in by key.
func (e *VariantEncoder) Object(b, v []byte, depth int, enc *Options, s *Scratch, typed ShreddedFields) ([]byte, int, error) {
	if depth >= MaxVariantDepth {
		return b, 0, fmt.Errorf("%w: nested deeper than %d", ErrVariant, MaxVariantDepth)
	}
	var num, ids, offs, data, size uint64
	var offSize, idSize int
	if v != nil {
		if v[0]&0x3 != variantObject {
			return b, 0, fmt.Errorf("%w: a shredded object's value is not an object", ErrVariant)
		}
		h := v[0] >> 2
		offSize, idSize = int(h&0x3)+1, int(h>>2&0x3)+1
		numSize := 1
		if h>>4&1 != 0 {
			numSize = 4
		}
		if len(v) < 1+numSize {
			return b, 0, fmt.Errorf("%w: a truncated object header", ErrVariant)
		}
		num = readUintLE(v[1:], numSize)
		ids = uint64(1 + numSize)
		offs = ids + num*uint64(idSize)
		data = offs + (num+1)*uint64(offSize)
		if data > uint64(len(v)) {
			return b, 0, fmt.Errorf("%w: an object of %d fields in %d bytes", ErrVariant, num, len(v))
		}
		size = readUintLE(v[offs+num*uint64(offSize):], offSize)
		if data+size > uint64(len(v)) {
			return b, 0, fmt.Errorf("%w: an object's data ends past its bytes", ErrVariant)
		}
	}
	body := v[data : data+size]
	base := len(e.spans)
	defer func() { e.spans = e.spans[:base] }()
	b = append(b, '{')
	first := true
	next := 0 // typed's next field
	// shredded appends typed's fields whose names come before upto (all
	// that are left with a nil upto).
	shredded := func(upto []byte) error {
		for ; typed != nil && next < typed.Fields(); next++ {
			name := typed.Name(next)
			if upto != nil {
				if c := bytes.Compare(name, upto); c == 0 {
					return fmt.Errorf("%w: a shredded object's field %q is in its value too", ErrVariant, name)
				} else if c > 0 {
					return nil
				}
			}
			mark := len(b)
			if !first {
				b = append(b, ',')
			}
			var ok bool
			var err error
			if b, ok, err = typed.AppendField(b, next, depth+1); err != nil {
				return err
			}
			if !ok {
				b = b[:mark]
				continue
			}
			first = false
		}
		return nil
	}
	var prev []byte
	for i := range num {
		key, err := e.meta.key(readUintLE(v[ids+i*uint64(idSize):], idSize))
		if err != nil {
			return b, 0, err
		}
		if i > 0 && bytes.Compare(prev, key) >= 0 {
			return b, 0, fmt.Errorf("%w: an object's keys are not in strictly ascending order at field %d", ErrVariant, i)
		}
		prev = key
		off := readUintLE(v[offs+i*uint64(offSize):], offSize)
		if off >= size {
			return b, 0, fmt.Errorf("%w: an object field's offset %d is past its %d bytes of data", ErrVariant, off, size)
		}
		if err := shredded(key); err != nil {
			return b, 0, err
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		if e.keyBudget -= len(key); e.keyBudget < 0 {
			return b, 0, fmt.Errorf("%w: its object keys pass the %d bytes its size allows", ErrVariant,
				variantKeysFloor+variantKeysPerByte*len(e.metaCopy))
		}
		var bad bool
		if b, bad = jsonstr.AppendCheck(b, key); bad {
			s.Invalid++
		}
		b = append(b, ':')
		var n int
		if b, n, err = e.value(b, body[off:], depth+1, enc, s); err != nil {
			return b, 0, err
		}
		e.spans = append(e.spans, variantSpan{off, off + uint64(n)})
	}
	if err := shredded(nil); err != nil {
		return b, 0, err
	}
	// The fields' values must tile the data: no gap, no byte read twice.
	spans := e.spans[base:]
	slices.SortFunc(spans, func(a, b variantSpan) int {
		switch {
		case a.from < b.from:
			return -1
		case a.from > b.from:
			return 1
		}
		return 0
	})
	end := uint64(0)
	for _, sp := range spans {
		if sp.from != end {
			return b, 0, fmt.Errorf("%w: an object's field values overlap or leave a gap at byte %d", ErrVariant, sp.from)
		}
		end = sp.to
	}
	if end != size {
		return b, 0, fmt.Errorf("%w: an object's data has %d bytes after its fields", ErrVariant, size-end)
	}
	return append(b, '}'), int(data + size), nil
}

// array appends an array.
func (e *VariantEncoder) array(b, v []byte, depth int, enc *Options, s *Scratch) ([]byte, int, error) {
	if depth >= MaxVariantDepth {
		return b, 0, fmt.Errorf("%w: nested deeper than %d", ErrVariant, MaxVariantDepth)
	}
	h := v[0] >> 2
	offSize := int(h&0x3) + 1
	numSize := 1
	if h>>2&1 != 0 {
		numSize = 4
	}
	if len(v) < 1+numSize {
		return b, 0, fmt.Errorf("%w: a truncated array header", ErrVariant)
	}
	num := readUintLE(v[1:], numSize)
	offs := uint64(1 + numSize)
	data := offs + (num+1)*uint64(offSize)
	if data > uint64(len(v)) {
		return b, 0, fmt.Errorf("%w: an array of %d elements in %d bytes", ErrVariant, num, len(v))
	}
	b = append(b, '[')
	prev := uint64(0)
	for i := uint64(0); i <= num; i++ {
		off := readUintLE(v[offs+i*uint64(offSize):], offSize)
		switch {
		case i == 0 && off != 0:
			return b, 0, fmt.Errorf("%w: an array's first offset is %d", ErrVariant, off)
		case off < prev:
			return b, 0, fmt.Errorf("%w: an array's offsets go back at element %d", ErrVariant, i)
		case data+off > uint64(len(v)):
			return b, 0, fmt.Errorf("%w: an array's element %d ends past its bytes", ErrVariant, i)
		}
		if i > 0 {
			if i > 1 {
				b = append(b, ',')
			}
			// Element i-1 is exactly the bytes [prev, off).
			var n int
			var err error
			if b, n, err = e.value(b, v[data+prev:data+off], depth+1, enc, s); err != nil {
				return b, 0, err
			}
			if uint64(n) != off-prev {
				return b, 0, fmt.Errorf("%w: an array's element %d takes %d of its %d bytes", ErrVariant, i-1, n, off-prev)
			}
		}
		prev = off
	}
	return append(b, ']'), int(data + prev), nil
}
