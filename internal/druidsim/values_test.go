package druidsim

import (
	"math"
	"testing"
)

// TestValuesDruidReadsDifferently: values whose text Druid reads as
// another value than the one meant, which the row stream must avoid.
func TestValuesDruidReadsDifferently(t *testing.T) {
	t.Parallel()
	// Jackson reads -0 as the integer 0 (IntNode): a float column then
	// holds +0.0; -0.0 is a DoubleNode of the negative zero.
	row, err := jacksonLine(`{"a":-0,"b":-0.0}`)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := row["a"].(int64); !ok || a != 0 {
		t.Errorf("-0 read as %#v, want the long 0", row["a"])
	}
	if b, ok := row["b"].(float64); !ok || b != 0 || !math.Signbit(b) {
		t.Errorf("-0.0 read as %#v, want the double -0.0", row["b"])
	}
	if v, _ := dimensionValue(row["a"], "float"); math.Signbit(float64(v.(float32))) {
		t.Error("-0 kept its sign in a float column")
	}
	// Joda keeps the first three fraction digits of an ISO time: half a
	// millisecond before 1970 is -1 ms, where the millis form of the same
	// time, truncated toward zero, is 0.
	iso, ok := parseTimestamp("1969-12-31T23:59:59.999500Z", "iso")
	if !ok || iso != -1 {
		t.Errorf("ISO -0.5 ms read as %d, want -1", iso)
	}
	if zero, ok := parseTimestamp("1970-01-01T00:00:00.000000Z", "iso"); !ok || zero != 0 {
		t.Errorf("ISO 0 read as %d", zero)
	}
}
