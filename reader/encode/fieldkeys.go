package encode

import (
	"encoding/binary"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
)

// FieldKey returns the JSON object key `"name":` for a field name.
func FieldKey(name string) []byte {
	return append(jsonstr.AppendString(nil, name), ':')
}

// FieldKeyBytes is a field's `,"name":`, and for the keys of up to 16
// bytes (most names) the same bytes as two little-endian words, which
// append stores whole instead of copying byte by byte: a copy of a length
// known only at run time is a call to memmove, and the row's keys were a
// tenth of its encoding.
type FieldKeyBytes struct {
	b     []byte
	words [2]uint64
}

func NewFieldKeyBytes(name string) FieldKeyBytes {
	k := FieldKeyBytes{b: append([]byte{','}, FieldKey(name)...)}
	var pad [16]byte
	copy(pad[:], k.b)
	k.words[0] = binary.LittleEndian.Uint64(pad[:8])
	k.words[1] = binary.LittleEndian.Uint64(pad[8:])
	return k
}

// Append appends the key, without its comma when first.
func (k *FieldKeyBytes) Append(b []byte, first bool) []byte {
	n := len(k.b)
	if n > 16 || cap(b)-len(b) < 16 {
		if first {
			return append(b, k.b[1:]...)
		}
		return append(b, k.b...)
	}
	at := len(b)
	if first {
		// The words shifted down a byte, past the comma.
		d := b[at : at+16]
		binary.LittleEndian.PutUint64(d, k.words[0]>>8|k.words[1]<<56)
		binary.LittleEndian.PutUint64(d[8:], k.words[1]>>8)
		return b[:at+n-1]
	}
	d := b[at : at+16]
	binary.LittleEndian.PutUint64(d, k.words[0])
	binary.LittleEndian.PutUint64(d[8:], k.words[1])
	return b[:at+n]
}
