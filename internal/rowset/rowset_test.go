package rowset

import (
	"slices"
	"testing"
)

// TestCanonical: rows that differ only in key order and number spelling
// are one row; other values, and how often a row comes, are not.
func TestCanonical(t *testing.T) {
	a := Canonical(t, []string{`{"b":-1e+10,"a":1.50,"c":[2.0,{"y":1,"x":0.1}]}`, `{"id":9007199254740993}`})
	b := Canonical(t, []string{`{"id":9007199254740993}`, `{"a":1.5,"c":[2,{"x":1e-1,"y":1}],"b":-10000000000}`})
	if !slices.Equal(a, b) {
		t.Fatalf("%q and %q differ", a, b)
	}
	// An integer literal stays exact: 2^53 + 1 is not 2^53.
	if c := Canonical(t, []string{`{"id":9007199254740992}`}); c[0] == a[1] {
		t.Fatalf("%s and %s are one row", c[0], a[1])
	}
	missing, extra := Diff(t, []string{`{"a":1}`, `{"a":1}`, `{"a":2}`}, []string{`{"a":1.0}`, `{"a":3}`})
	if !slices.Equal(missing, []string{`{"a":3}`}) || !slices.Equal(extra, []string{`{"a":1}`, `{"a":2}`}) {
		t.Fatalf("missing %q, extra %q", missing, extra)
	}
}
