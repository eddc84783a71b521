package encode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestVariantDamaged: each kind of damage is ErrVariant, saying what.
func TestVariantDamaged(t *testing.T) {
	meta := []byte{1, 1, 0, 1, 'a'} // one key, "a"
	// Arrays nested one level deeper than the bound, each with 4-byte
	// offsets around the one below.
	deep := []byte{0}
	for range MaxVariantDepth + 1 {
		deep = append(binary.LittleEndian.AppendUint32([]byte{3 | 3<<2, 1, 0, 0, 0, 0}, uint32(len(deep))), deep...)
	}
	tests := []struct {
		name        string
		meta, value []byte
		want        string
	}{
		{"metadata too short", []byte{1, 0}, []byte{0}, "metadata of 2 bytes"},
		{"metadata version", []byte{2, 0, 0}, []byte{0}, "metadata version 2"},
		{"metadata offsets past its bytes", []byte{1, 1, 0, 9, 'a'}, []byte{0}, "key 1 ends past its bytes"},
		{"metadata offsets going back", []byte{1, 2, 0, 1, 0, 'a'}, []byte{0}, "go back"},
		{"key id out of range", meta, []byte{2, 1, 5, 0, 1, 0}, "field id 5 of a dictionary of 1 keys"},
		{"primitive type", meta, []byte{21 << 2}, "primitive type 21"},
		{"truncated int64", meta, []byte{6 << 2, 1, 2}, "needs 9 bytes"},
		{"string past the value", meta, []byte{16 << 2, 9, 0, 0, 0, 'x'}, "a string or binary of 9 bytes in 1"},
		{"array element with a byte after it", meta, []byte{3, 1, 0, 2, 0, 0}, "element 0 takes 1 of its 2 bytes"},
		{"object data past its fields", meta, []byte{2, 1, 0, 0, 2, 0, 0}, "1 bytes after its fields"},
		{"trailing bytes", meta, []byte{0, 0}, "1 bytes after the value"},
		{"nested too deep", meta, deep, "nested deeper than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e VariantEncoder
			var s Scratch
			err := e.SetMeta(tt.meta)
			if err == nil {
				e.Begin()
				_, err = e.AppendVariant(nil, tt.value, 0, &Options{}, &s)
			}
			if !errors.Is(err, ErrVariant) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want errVariant saying %q", err, tt.want)
			}
		})
	}
}

// TestVariantKeyBudget: a short value that names a long key many times is
// refused once its keys pass its budget (1 MiB, and 64 bytes a stored
// byte), and one within it is not.
func TestVariantKeyBudget(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 1000)
	// Metadata with 2-byte offsets: one key.
	meta := append([]byte{1 | 1<<6, 1, 0, 0, 0, byte(len(key)), byte(len(key) >> 8)}, key...)
	// An array (2-byte offsets) of n objects {key: null} of 6 bytes each.
	n := 10
	v := []byte{3 | 1<<2, byte(n)}
	for i := range n + 1 {
		v = binary.LittleEndian.AppendUint16(v, uint16(6*i))
	}
	for range n {
		v = append(v, 2, 1, 0, 0, 1, 0)
	}
	var e VariantEncoder
	var s Scratch
	if err := e.SetMeta(meta); err != nil {
		t.Fatal(err)
	}
	e.Begin()
	out, err := e.AppendVariant(nil, v, 0, &Options{}, &s)
	if err != nil || bytes.Count(out, key) != n {
		t.Fatalf("within the budget: error %v, %d keys written", err, bytes.Count(out, key))
	}
	// Without the 1 MiB floor, the 64 bytes a stored byte of this value
	// give are less than the 1,000 bytes each object's key takes.
	e.Begin()
	e.keyBudget = 0
	if _, err := e.AppendVariant(nil, v, 0, &Options{}, &s); !errors.Is(err, ErrVariant) || !strings.Contains(err.Error(), "keys pass") {
		t.Errorf("past the budget: error %v, want the key budget", err)
	}
}
