// Package jsonstr writes JSON strings: the one escaper of the sidecar's
// row stream, plan answers and tokens. It quotes as encoding/json does with
// HTML escaping off: control characters escaped, invalid UTF-8 replaced by
// U+FFFD, U+2028 and U+2029 escaped, and <, > and & as they are. Plain
// ASCII, what almost every value, path and URI is, goes eight bytes at a
// time.
package jsonstr

import (
	"encoding/binary"
	"unicode/utf8"
	"unsafe"
)

// Append appends s quoted as a JSON string.
func Append(b, s []byte) []byte {
	b, _ = AppendCheck(b, s)
	return b
}

// AppendString appends s quoted as a JSON string.
func AppendString(b []byte, s string) []byte {
	// s is only read.
	b, _ = AppendCheck(b, unsafe.Slice(unsafe.StringData(s), len(s)))
	return b
}

// AppendCheck is Append that also reports whether s held invalid UTF-8.
func AppendCheck(b, s []byte) (_ []byte, bad bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			bad = true
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), bad
}

const hexDigits = "0123456789abcdef"

// safeASCII marks the ASCII bytes that need no escaping in a JSON string.
// Unlike encoding/json's default, <, > and & are not HTML-escaped.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plain8 reports whether the 8 bytes of x are ASCII that a JSON string
// holds as they are: none below 0x20, none of 0x80 or above, no quote, no
// backslash (the "has less" and "has zero byte" word tricks, exact as a
// yes or no once no byte has its high bit set).
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - ones*0x20) &^ x
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	quote = (quote - ones) &^ quote
	backslash = (backslash - ones) &^ backslash
	return (x|below|quote|backslash)&highs == 0
}
