package druidsim

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
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

// TestCanonicalIsEncodingJSON: canonical's own encoder spells every value
// as encoding/json does (canonicalJSON), random values of every kind the
// model holds included, so rows compare as they did through encoding/json.
func TestCanonicalIsEncodingJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(26, 21))
	value := randomValues(rng)
	for i := range 20_000 {
		v := value(0)
		if got, want := canonical(v), canonicalJSON(v); got != want {
			t.Fatalf("value %d %#v: canonical %s, encoding/json %s", i, v, got, want)
		}
		if cols, ok := v.(map[string]any); ok {
			r := Row{Time: rng.Int64() - rng.Int64(), Columns: cols}
			if got, want := r.String(), fmt.Sprintf("%d %s", r.Time, canonicalJSON(cols)); got != want {
				t.Fatalf("row %d: String %s, want %s", i, got, want)
			}
		}
	}
}

// TestQuickLineIsEncodingJSON: jacksonLine's own reader reads every line
// it takes as encoding/json does (decodeLine) and leaves every line
// encoding/json refuses: random objects of every kind, written and then
// damaged byte by byte.
func TestQuickLineIsEncodingJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 26))
	value := randomValues(rng)
	lines := []string{"", " ", "{}", " {} ", "{}x", "{} {}", "{}]", "[]", "1", `"a"`, "null", `{"a":01}`, `{"a":-}`,
		`{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1e+}`, `{"a":-0}`, `{"a":-0.0}`, `{"a":1E400}`, `{"a":-1e-400}`,
		`{"a":9223372036854775807}`, `{"a":9223372036854775808}`, `{"a":+1}`, `{"a":tru}`, `{"a":truex}`,
		`{"a":nul}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":1,"a":2}`,
		"{\"a\":\"\t\"}", "{\"a\":\"\xff\"}", `{"a":"\u00e9"}`, `{"a":"é"}`, "\t{\"a\" :\r\n[ true , false,null ] }\n",
		`{"a":{"b":{"c":[[[]]]}}}`, `{"a":[{}]}`, `{"a":"x"`, `{"a":["x"`, `{"a`}
	for range 10_000 {
		m := map[string]any{}
		for range rng.IntN(6) {
			m["k"+strconv.Itoa(rng.IntN(8))] = value(0)
		}
		line := canonicalJSON(m)
		lines = append(lines, line)
		b := []byte(line)
		for range 1 + rng.IntN(3) {
			if len(b) == 0 {
				break
			}
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i], b[i+1:]...)
			case 1:
				const alphabet = "{}[]\",:-.0eE1 \tnul\\\x01\xff"
				b[i] = alphabet[rng.IntN(len(alphabet))]
			default:
				b = append(b[:i], append([]byte{b[rng.IntN(len(b))]}, b[i:]...)...)
			}
		}
		lines = append(lines, string(b))
	}
	quick := 0
	for _, line := range lines {
		want, err := decodeLine(line)
		got, ok := quickLine(line)
		switch {
		case ok && err != nil:
			t.Fatalf("%q: read as %v, encoding/json refuses it: %v", line, got, err)
		case ok && !reflect.DeepEqual(got, want):
			t.Fatalf("%q: read as %#v, encoding/json reads %#v", line, got, want)
		case ok:
			quick++
		}
	}
	if quick < len(lines)/4 {
		t.Fatalf("only %d of %d lines read without encoding/json", quick, len(lines))
	}
}

// randomValues returns a generator of random values of every kind the
// model holds, down to a depth of 3.
func randomValues(rng *rand.Rand) func(depth int) any {
	strs := []string{"", "a", `q"uote`, `back\slash`, "tab\there", "nl\n\r\b\f", "\x00\x01\x1f\x7f", "<&>",
		"é ü 漢字", "\u2028\u2029", "bad\xffutf8\xc3", "😀", "\xed\xa0\x80"}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxFloat32, math.NaN(), math.Inf(1), math.Inf(-1), 1e-9}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(14); {
		case k == 0:
			return nil
		case k == 1:
			return rng.IntN(2) == 0
		case k == 2:
			return rng.Int64() - rng.Int64()
		case k == 3:
			if rng.IntN(2) == 0 {
				return floats[rng.IntN(len(floats))]
			}
			return math.Float64frombits(rng.Uint64())
		case k == 4:
			if rng.IntN(2) == 0 {
				return float32(floats[rng.IntN(len(floats))])
			}
			return math.Float32frombits(rng.Uint32())
		case k == 5:
			return strs[rng.IntN(len(strs))]
		case k == 6:
			b := make([]byte, rng.IntN(8))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return string(b)
		case k == 7 && rng.IntN(20) == 0:
			return Decimal{Unscaled: big.NewInt(rng.Int64N(1e6) - 5e5), Scale: rng.IntN(4)}
		case k == 8 && rng.IntN(20) == 0:
			return []byte("raw")
		case k == 9 && depth < 3:
			if rng.IntN(8) == 0 {
				return []any(nil)
			}
			l := make([]any, rng.IntN(4))
			for i := range l {
				l[i] = value(depth + 1)
			}
			return l
		case k >= 10 && depth < 3:
			if rng.IntN(8) == 0 {
				return map[string]any(nil)
			}
			m := map[string]any{}
			for range rng.IntN(5) {
				m[strs[rng.IntN(len(strs))]+strconv.Itoa(rng.IntN(3))] = value(depth + 1)
			}
			return m
		}
		return int64(rng.IntN(100))
	}
	return value
}
