package encode

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/druidiceberg/sidecar/internal/cost"
)

// FuzzVariantClaims builds variant values around what the fuzzer claims:
// depth arrays or objects of one element each (objects where a bit of
// shape is set), around a header byte inner followed by a count of num
// elements (4 bytes wide), offSize-byte offsets all giving off, and the
// fuzzer's bytes; the metadata's dictionary claims keys keys (one real
// key, "a"). Seeds nest past maxVariantDepth and to 10,000 levels, claim
// 2^32-1 elements and dictionary keys, and give offsets past the data,
// backwards and at 2^32-1. However much a value claims, the decoder must
// end in errVariant (the reader's ErrCorruptFile) whenever the value
// nests deeper than maxVariantDepth, claims more elements than it has
// bytes, or its dictionary more keys than its bytes, and allocate no more
// than variantAllocBound for the bytes: nothing is sized by a count or an
// offset.
//
//	go test ./reader/encode -run '^$' -fuzz '^FuzzVariantClaims$' -fuzztime 60s
func FuzzVariantClaims(f *testing.F) {
	for _, depth := range []uint16{0, 1, MaxVariantDepth - 1, MaxVariantDepth, 10_000} {
		for _, inner := range []byte{0x0f, 0x1f, 0x3e, 0x7e, 0x0c} {
			for _, num := range []uint32{1<<32 - 1, 1 << 31, 2, 1} {
				f.Add(depth, uint64(depth%3), inner, num, uint8(4), uint32(1<<32-1), uint32(1), []byte{0x0c, 1})
			}
		}
	}
	// Values that decode: a long string of 65 bytes (its offsets) nested
	// at and past the bound.
	for _, depth := range []uint16{MaxVariantDepth - 1, MaxVariantDepth, MaxVariantDepth + 1} {
		f.Add(depth, uint64(0b110), byte(variantString<<2), uint32(65), uint8(0), uint32('A'), uint32(1), []byte{})
	}
	f.Add(uint16(3), uint64(0b101), byte(0x0f), uint32(2), uint8(1), uint32(200), uint32(1), []byte{0x0c, 1, 0x0c, 2})
	f.Add(uint16(0), uint64(0), byte(0x0c), uint32(0), uint8(1), uint32(0), uint32(1<<32-1), []byte{})
	f.Add(uint16(2), uint64(3), byte(0x3e), uint32(3), uint8(2), uint32(0), uint32(1<<31), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, depth uint16, shape uint64, inner byte, num uint32, offSize uint8, off, keys uint32, tail []byte) {
		if len(tail) > maxFuzzBytes {
			tail = tail[:maxFuzzBytes]
		}
		depth %= 12_000
		meta := variantMetaClaiming(keys)
		value := variantClaiming(int(depth), shape, inner, num, int(offSize%4)+1, off, tail)
		checkVariantBound(t, meta, value, int(depth), inner, num, keys)
	})
}

// variantMetaClaiming is metadata of one key, "a", whose dictionary size
// says keys (1 for 0).
func variantMetaClaiming(keys uint32) []byte {
	if keys == 0 {
		keys = 1
	}
	m := []byte{0x01 | 3<<6} // version 1, 4-byte offsets
	m = binary.LittleEndian.AppendUint32(m, keys)
	m = binary.LittleEndian.AppendUint32(m, 0)
	m = binary.LittleEndian.AppendUint32(m, 1)
	return append(m, 'a')
}

// variantClaiming builds FuzzVariantClaims' value, from the inside out.
func variantClaiming(depth int, shape uint64, inner byte, num uint32, offSize int, off uint32, tail []byte) []byte {
	v := []byte{inner}
	v = binary.LittleEndian.AppendUint32(v, num)
	for range min(num, 64) + 1 {
		v = binary.LittleEndian.AppendUint32(v, off)[:len(v)+offSize]
	}
	v = append(v, tail...)
	// The wrappers, innermost first; each one's element is all that is
	// inside it.
	wrappers := make([][]byte, depth)
	n := len(v)
	for i := range wrappers {
		size := binary.LittleEndian.AppendUint32(nil, uint32(n))
		if shape>>(i%64)&1 != 0 {
			// An object of one field, key 0, 1-byte ids, 4-byte offsets.
			wrappers[i] = append([]byte{variantObject | 3<<2, 1, 0, 0, 0, 0, 0}, size...)
		} else {
			// An array of one element, 4-byte offsets.
			wrappers[i] = append([]byte{variantArray | 3<<2, 1, 0, 0, 0, 0}, size...)
		}
		n += len(wrappers[i])
	}
	out := make([]byte, 0, n)
	for i := depth - 1; i >= 0; i-- {
		out = append(out, wrappers[i]...)
	}
	return append(out, v...)
}

// variantAllocBound is the most the decoder may allocate for a value and
// its metadata of n bytes: the copy of the metadata, the scratch of
// object fields (16 bytes a field, a field 2 bytes at least), its output
// (see FuzzVariant) grown by append, and room for what the fuzzing
// machinery allocates meanwhile.
func variantAllocBound(n int) uint64 {
	return 64<<10 + 3*(variantKeysFloor+uint64(variantKeysPerByte+48)*uint64(n)) + 8*uint64(n)
}

// checkVariantBound is the body of FuzzVariantClaims.
func checkVariantBound(t *testing.T, meta, value []byte, depth int, inner byte, num, keys uint32) {
	var e VariantEncoder
	var s Scratch
	var out []byte
	var err error
	allocated := cost.AllocatedBy(func() {
		if err = e.SetMeta(meta); err == nil {
			e.Begin()
			out, err = e.AppendVariant([]byte("x"), value, 0, &Options{}, &s)
		}
	})
	if bound := variantAllocBound(len(meta) + len(value)); allocated > bound {
		t.Fatalf("%d bytes allocated for %d bytes of metadata and value (depth %d, %d elements, %d keys claimed), more than %d",
			allocated, len(meta)+len(value), depth, num, keys, bound)
	}
	if err != nil {
		if !errors.Is(err, ErrVariant) {
			t.Fatalf("error %v without errVariant", err)
		}
		return
	}
	switch {
	case depth > MaxVariantDepth:
		t.Fatalf("a value %d levels deep decoded: %.200s", depth, out)
	case keys > uint32(len(meta)):
		t.Fatalf("metadata of %d bytes claiming %d keys decoded", len(meta), keys)
	}
	// The innermost header's count is num when it is an array or an
	// object whose count is 4 bytes wide (is_large set); every element
	// takes a byte at least.
	large := (inner&3 == variantArray && inner&0x10 != 0) || (inner&3 == variantObject && inner&0x40 != 0)
	if large && uint64(num) > uint64(len(value)) {
		t.Fatalf("a value of %d bytes claiming %d elements decoded: %.200s", len(value), num, out)
	}
}
