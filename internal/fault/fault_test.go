package fault

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"ok":                          `"ok"`,
		"a\x00b":                      `"a\x00b"`,
		strings.Repeat("x", 64):       `"` + strings.Repeat("x", 64) + `"`,
		strings.Repeat("x", 65):       `"` + strings.Repeat("x", 64) + `"… (65 bytes)`,
		strings.Repeat("é", 40):       `"` + strings.Repeat("é", 32) + `"… (80 bytes)`,
		"x" + strings.Repeat("é", 40): `"x` + strings.Repeat("é", 31) + `"… (81 bytes)`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%.20q) = %s, want %s", in, got, want)
		}
	}
}
