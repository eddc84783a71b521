package token

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/fault"
)

func TestParseIdentifier(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // nil: refused with fault.ErrBadRequest
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
		case tc.want == nil && !errors.Is(err, fault.ErrBadRequest):
			t.Errorf("%.40q: %v, %v; want fault.ErrBadRequest", tc.name, got, err)
		case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%.40q: %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%.40q: a %d-byte error", tc.name, len(err.Error()))
		}
	}
}
