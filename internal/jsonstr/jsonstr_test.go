package jsonstr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// encodingJSON quotes s as encoding/json does with HTML escaping off.
func encodingJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// FuzzAppend: every string quotes exactly as encoding/json quotes it
// without HTML escaping, from bytes and from a string alike, and
// AppendCheck reports invalid UTF-8 exactly when encoding/json replaces
// some.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain ascii path/to/file.parquet", "a\"b\\c", "tab\tnew\nline\r\x00\x1f\x7f",
		"<a href='x'>&amp;</a>", "héllo wörld ✓ 😀", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "12345678\"12345678\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := encodingJSON(t, s)
		if got := string(Append([]byte("x"), []byte(s))); got != "x"+want {
			t.Fatalf("Append(%q) = %s, want %s", s, got[1:], want)
		}
		if got := string(AppendString(nil, s)); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if _, bad := AppendCheck(nil, []byte(s)); bad == utf8.ValidString(s) {
			t.Fatalf("AppendCheck(%q) reports invalid UTF-8: %v", s, bad)
		}
	})
}

// TestPlain8 holds the eight-bytes-at-a-time test to the byte-by-byte rule:
// every byte value at every position of a word, among plain bytes of every
// value.
func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }
	for fill := byte(0x20); fill < utf8.RuneSelf; fill++ {
		if !plain(fill) {
			continue
		}
		w := bytes.Repeat([]byte{fill}, 8)
		for pos := range 8 {
			for c := range 256 {
				w[pos] = byte(c)
				if got := plain8(binary.LittleEndian.Uint64(w)); got != plain(byte(c)) {
					t.Fatalf("plain8(%q) = %v", w, got)
				}
			}
			w[pos] = fill
		}
	}
}
