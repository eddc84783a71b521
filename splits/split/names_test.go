package split

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseIdentifier(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // nil: refused with ErrBadRequest
	}{
		{"demo.orders", []string{"demo", "orders"}},
		{"a.b.c", []string{"a", "b", "c"}},
		{"démo.ördérs", []string{"démo", "ördérs"}},
		{"demo.my table", []string{"demo", "my table"}},
		{"demo." + strings.Repeat("x", MaxNameBytes), []string{"demo", strings.Repeat("x", MaxNameBytes)}},
		{"demo." + strings.Repeat("x", MaxNameBytes+1), nil},
		{strings.Repeat("a.", MaxNameParts-1) + "t", strings.Split(strings.Repeat("a.", MaxNameParts-1)+"t", ".")},
		{strings.Repeat("a.", MaxNameParts) + "t", nil},
		{"orders", nil}, {"demo.", nil}, {".orders", nil}, {"demo..orders", nil},
		{"demo.ord\x00ers", nil}, {"demo.a/b", nil}, {`demo.a\b`, nil}, {"demo.a\tb", nil},
		{"demo.\u0085", nil}, {"demo.\xff", nil}, {strings.Repeat("x", 1<<20), nil},
	} {
		got, err := ParseIdentifier(tc.name)
		switch {
		case tc.want == nil && !errors.Is(err, ErrBadRequest):
			t.Errorf("%.40q: %v, %v; want ErrBadRequest", tc.name, got, err)
		case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%.40q: %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%.40q: a %d-byte error", tc.name, len(err.Error()))
		}
	}
}

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
