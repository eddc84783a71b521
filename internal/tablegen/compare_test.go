package tablegen

import (
	"slices"
	"testing"
)

// TestRowDiff: rows compare as multisets of values, key order and number
// spelling aside, and a row one side has twice is a difference.
func TestRowDiff(t *testing.T) {
	got := []string{`{"b":1,"a":-1e+10}`, `{"a":2}`, `{"a":2}`, `{"a":3.5}`}
	want := []string{`{"a":-10000000000,"b":1.0}`, `{"a":2}`, `{"a":4}`}
	missing, extra, err := RowDiff(got, want)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missing, []string{`{"a":4}`}) || !slices.Equal(extra, []string{`{"a":2}`, `{"a":3.5}`}) {
		t.Fatalf("missing %q, extra %q", missing, extra)
	}
	if _, _, err := RowDiff([]string{`{"a":`}, nil); err == nil {
		t.Fatal("a row that is no JSON compared")
	}
}
