package encode

import (
	"strings"
	"testing"
)

// TestFieldKeyBytes holds the keys written whole to the plain copy of
// `,"name":`, first or not, for names of every length around the 16 bytes
// written whole (with escapes, which lengthen a key), into buffers with
// every spare capacity around them, and checks that the bytes past the
// key are not part of the row.
func TestFieldKeyBytes(t *testing.T) {
	for n := range 20 {
		for _, name := range []string{strings.Repeat("a", n), strings.Repeat("\"", n/2) + strings.Repeat("é", n/4)} {
			k := NewFieldKeyBytes(name)
			want := string(FieldKey(name))
			for _, first := range []bool{true, false} {
				for spare := range 20 {
					b := make([]byte, 3, 3+spare)
					copy(b, "xyz")
					got := k.Append(b, first)
					w := "xyz," + want
					if first {
						w = "xyz" + want
					}
					if string(got) != w {
						t.Fatalf("name %q first %v spare %d: %q, want %q", name, first, spare, got, w)
					}
					if got = append(got, '!'); string(got) != w+"!" {
						t.Fatalf("name %q: the next byte lands wrong: %q", name, got)
					}
				}
			}
		}
	}
}
