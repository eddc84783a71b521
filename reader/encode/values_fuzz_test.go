package encode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// FuzzValues encodes arbitrary values through every conversion and holds
// every output to valid JSON that reads back as the same value: integers
// as the same int64, strings as the same text after U+FFFD replacement,
// binary as the same bytes, decimals as the same unscaled integer and
// scale (and to math/big's digits), floats as the same 32- or 64-bit value,
// timestamps as the same instant.
//
// Run it with a bounded minimization, which otherwise spends up to a
// minute per new input without counting execs (the "0 execs/s" stall):
//
//	go test ./reader/encode -run '^$' -fuzz FuzzValues -fuzzminimizetime 100x
func FuzzValues(f *testing.F) {
	f.Add([]byte("plain"), int64(0), 0.1, int32(0))
	f.Add([]byte("a\"b\\\n\x00\xff<>&\u2028"), int64(math.MinInt64), math.NaN(), int32(-1))
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, int64(math.MaxInt64), math.Inf(1), int32(math.MaxInt32))
	f.Add([]byte{0xff, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11}, int64(-1500), 1e-7, int32(12345))
	// A decimal padded with sign extension far past 16 bytes.
	f.Add(append(bytes.Repeat([]byte{0xff}, 300), 0x85), int64(-1), math.Copysign(0, -1), int32(math.MinInt32))
	f.Fuzz(checkValue)
}

// maxFuzzBytes bounds the byte input: every encoder is linear in it, so
// longer inputs find nothing new, while each costs the engine's input
// minimization thousands of slow runs (seen as a stall at 0 execs/s).
const maxFuzzBytes = 1 << 10

// checkValue is the body of FuzzValues.
func checkValue(t *testing.T, raw []byte, i int64, d float64, i32 int32) {
	if len(raw) > maxFuzzBytes {
		raw = raw[:maxFuzzBytes]
	}
	var s Scratch
	for _, iso := range []bool{false, true} {
		enc := &Options{ISOTimestamps: iso, BinaryAsString: iso}
		out := func(v parquet.Value, vt ValueType) any {
			t.Helper()
			s.Err = nil
			b := AppendValue(nil, ValuesOf(v), 0, &vt, enc, &s)
			if !json.Valid(b) {
				t.Fatalf("conv %d of %q/%d/%v/%d: invalid JSON %q", vt.Conv, raw, i, d, i32, b)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var x any
			if err := dec.Decode(&x); err != nil {
				t.Fatalf("conv %d: decode %q: %v", vt.Conv, b, err)
			}
			return x
		}
		str := func(x any) string {
			t.Helper()
			v, ok := x.(string)
			if !ok {
				t.Fatalf("got %v (%T), want a string", x, x)
			}
			return v
		}
		integer := func(x any) int64 {
			t.Helper()
			n, ok := x.(json.Number)
			if !ok {
				t.Fatalf("got %v (%T), want a number", x, x)
			}
			v, err := n.Int64()
			if err != nil {
				t.Fatalf("%s is not an int64: %v", n, err)
			}
			return v
		}
		number := func(x any, bitSize int) float64 {
			t.Helper()
			n, ok := x.(json.Number)
			if !ok {
				t.Fatalf("got %v (%T), want a number", x, x)
			}
			v, err := strconv.ParseFloat(n.String(), bitSize)
			if err != nil {
				t.Fatalf("%s is not a float%d: %v", n, bitSize, err)
			}
			return v
		}
		instant := func(x any, wantNanos int64, digits int) {
			t.Helper()
			ts := str(x)
			want := time.Unix(0, 0).Add(time.Duration(wantNanos))
			if y := want.Year(); y < 1 || y > 9999 {
				return // outside RFC 3339; the JSON was checked
			}
			if frac := ts[strings.LastIndexByte(ts, '.')+1 : len(ts)-1]; len(frac) != digits {
				t.Fatalf("%s: %d fraction digits, want %d", ts, len(frac), digits)
			}
			got, err := time.Parse(time.RFC3339Nano, ts)
			if err != nil || !got.Equal(want) {
				t.Fatalf("%s reads back as %v (%v), want %v", ts, got, err, want.UTC())
			}
		}

		// Strings: the same text, invalid bytes replaced one by one, as
		// encoding/json does; and counted.
		before := s.Invalid
		if got, want := str(out(parquet.ByteArrayValue(raw), ValueType{Conv: ConvString})), replaceInvalid(raw); got != want {
			t.Fatalf("string %q: reads back as %q, want %q", raw, got, want)
		}
		if counted := s.Invalid - before; counted != map[bool]int64{true: 0, false: 1}[utf8.Valid(raw)] {
			t.Fatalf("string %q: counted %d invalid values", raw, counted)
		}

		// Binary and fixed: base64 of the same bytes, or text.
		bin := str(out(parquet.ByteArrayValue(raw), ValueType{Conv: ConvBinary}))
		if iso {
			if bin != replaceInvalid(raw) {
				t.Fatalf("binary as string %q: %q", raw, bin)
			}
		} else if back, err := base64.StdEncoding.DecodeString(bin); err != nil || !bytes.Equal(back, raw) {
			t.Fatalf("binary %x: %q reads back as %x (%v)", raw, bin, back, err)
		}

		// UUIDs: the canonical form of the same 16 bytes.
		if u := str(out(parquet.FixedLenByteArrayValue(raw), ValueType{Conv: ConvUUID})); len(raw) == 16 {
			back, err := uuid.Parse(u)
			if err != nil || !bytes.Equal(back[:], raw) || u != strings.ToLower(back.String()) {
				t.Fatalf("uuid %x: %q reads back as %x (%v)", raw, u, back, err)
			}
		}

		// Decimals: the same unscaled value at the same scale, or, past
		// decimal(38), null and a stream error.
		if len(raw) > 0 {
			scale := int(i32 & 0x3f)
			x := out(parquet.ByteArrayValue(raw), ValueType{Conv: ConvDecimalBytes, Scale: scale})
			if len(TrimSignExtension(raw)) > 16 {
				if x != nil || !errors.Is(s.Err, readerr.ErrCorruptFile) {
					t.Fatalf("decimal %x: got %v and error %v, want null and readerr.ErrCorruptFile", raw, x, s.Err)
				}
			} else {
				got := str(x)
				if w := bigDecimal(raw, scale); `"`+got+`"` != w {
					t.Fatalf("decimal %x scale %d: got %s want %s", raw, scale, got, w)
				}
				checkDecimal(t, got, unscaled(raw), scale)
			}
		}
		checkDecimal(t, str(out(parquet.Int64Value(i), ValueType{Conv: ConvDecimalInt64, Scale: int(i32 & 0x1f)})), big.NewInt(i), int(i32&0x1f))
		checkDecimal(t, str(out(parquet.Int32Value(i32), ValueType{Conv: ConvDecimalInt32, Scale: 3})), big.NewInt(int64(i32)), 3)

		// Integers, dates and times.
		if got := integer(out(parquet.Int64Value(i), ValueType{Conv: ConvInt64})); got != i {
			t.Fatalf("long %d reads back as %d", i, got)
		}
		if got := integer(out(parquet.Int32Value(i32), ValueType{Conv: ConvInt32})); got != int64(i32) {
			t.Fatalf("int %d reads back as %d", i32, got)
		}
		if got := integer(out(parquet.Int32Value(i32), ValueType{Conv: ConvDate})); got != int64(i32)*86_400_000 {
			t.Fatalf("date %d reads back as %d", i32, got)
		}
		if got := integer(out(parquet.Int64Value(i), ValueType{Conv: ConvTimeInt64, Unit: 1000})); got != i {
			t.Fatalf("time %d reads back as %d", i, got)
		}

		// Timestamps: millis truncated toward zero, or the same instant;
		// before 1970 the instant of those millis (what Druid reads).
		micros := out(parquet.Int64Value(i), ValueType{Conv: ConvTimestamp, Unit: 1000})
		nanos := out(parquet.Int64Value(i), ValueType{Conv: ConvTimestamp, Unit: 1, Nanos: true})
		day := out(parquet.Int32Value(i32), ValueType{Conv: ConvDateTimestamp})
		if iso {
			if i > math.MinInt64/1000 && i < math.MaxInt64/1000 {
				want := i * 1000
				if i < 0 {
					want = i / 1000 * 1_000_000
				}
				instant(micros, want, 6)
			}
			want := i
			if i < 0 {
				want = i / 1_000_000 * 1_000_000
			}
			instant(nanos, want, 9)
			if d := int64(i32); d > -106_000 && d < 106_000 {
				instant(day, d*86_400*1e9, 6)
			}
		} else {
			if got := integer(micros); got != i/1000 {
				t.Fatalf("timestamp %d µs reads back as %d ms", i, got)
			}
			if got := integer(nanos); got != i/1_000_000 {
				t.Fatalf("timestamp_ns %d reads back as %d ms", i, got)
			}
			if got := integer(day); got != int64(i32)*86_400_000 {
				t.Fatalf("date %d as timestamp reads back as %d ms", i32, got)
			}
		}
		out(parquet.Int96Value(deprecated.Int96{uint32(i), uint32(i >> 32), uint32(i32)}), ValueType{Conv: ConvInt96, Unit: 1})

		// Floats: the same value, NaN and infinities null.
		dbl := out(parquet.DoubleValue(d), ValueType{Conv: ConvDouble})
		f32 := float32(d)
		flt := out(parquet.FloatValue(f32), ValueType{Conv: ConvFloat})
		promoted := out(parquet.FloatValue(f32), ValueType{Conv: ConvFloatAsDouble})
		if math.IsNaN(d) || math.IsInf(d, 0) {
			if dbl != nil {
				t.Fatalf("double %v: %v, want null", d, dbl)
			}
		} else if got := number(dbl, 64); got != d || math.Signbit(got) != math.Signbit(d) {
			t.Fatalf("double %v reads back as %v", d, got)
		}
		if math.IsNaN(float64(f32)) || math.IsInf(float64(f32), 0) {
			if flt != nil || promoted != nil {
				t.Fatalf("float %v: %v and %v, want null", f32, flt, promoted)
			}
		} else {
			if got := number(flt, 32); float32(got) != f32 {
				t.Fatalf("float %v reads back as %v", f32, got)
			}
			if got := number(promoted, 64); got != float64(f32) {
				t.Fatalf("float %v as double reads back as %v", f32, got)
			}
		}
		checkShortest(t, d, f32)
		for _, b := range []bool{false, true} {
			if got := out(parquet.BooleanValue(b), ValueType{Conv: ConvBool}); got != b {
				t.Fatalf("boolean %v reads back as %v", b, got)
			}
		}
	}

	// Strings escape exactly as encoding/json does without HTML escaping.
	var want bytes.Buffer
	je := json.NewEncoder(&want)
	je.SetEscapeHTML(false)
	if err := je.Encode(string(raw)); err != nil {
		t.Fatal(err)
	}
	if got := jsonstr.Append(nil, raw); string(got)+"\n" != want.String() {
		t.Fatalf("string %q: got %s want %s", raw, got, want.String())
	}
}

// replaceInvalid replaces each invalid byte of b by U+FFFD.
func replaceInvalid(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// unscaled returns a big-endian two's complement integer.
func unscaled(raw []byte) *big.Int {
	v := new(big.Int).SetBytes(raw)
	if raw[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	return v
}

// checkDecimal holds a decimal string to its unscaled value and scale.
func checkDecimal(t *testing.T, got string, want *big.Int, scale int) {
	t.Helper()
	digits := got
	if dot := strings.IndexByte(got, '.'); scale > 0 {
		if dot < 0 || len(got)-dot-1 != scale {
			t.Fatalf("decimal %s: want %d fraction digits", got, scale)
		}
		digits = got[:dot] + got[dot+1:]
	} else if dot >= 0 {
		t.Fatalf("decimal %s: want no fraction", got)
	}
	back, ok := new(big.Int).SetString(digits, 10)
	if !ok || back.Cmp(want) != 0 {
		t.Fatalf("decimal %s reads back as unscaled %v, want %v", got, back, want)
	}
}

// bigDecimal formats a two's complement unscaled decimal with math/big.
func bigDecimal(raw []byte, scale int) string {
	v := new(big.Int).SetBytes(raw)
	if raw[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
	}
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	for len(digits) <= scale {
		digits = "0" + digits
	}
	s := digits
	if scale > 0 {
		s = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return `"` + s + `"`
}

func TestAppendDecimalDigits(t *testing.T) {
	cases := []struct {
		unscaled int64
		scale    int
		want     string
	}{
		{1230, 2, `"12.30"`},
		{-5, 3, `"-0.005"`},
		{0, 2, `"0.00"`},
		{0, 0, `"0"`},
		{-7, 0, `"-7"`},
		{12, -2, `"1200"`},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			var s Scratch
			if got := string(appendDecimalInt64(nil, tc.unscaled, tc.scale, &s)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// checkShortest holds the floats' fast paths to strconv's shortest forms,
// byte for byte.
func checkShortest(t *testing.T, d float64, f float32) {
	t.Helper()
	if got, want := appendDouble(nil, d, &shortTries{}), strconvFloat(d, 64); !bytes.Equal(got, want) {
		t.Fatalf("double %v (%#x): %s, strconv %s", d, math.Float64bits(d), got, want)
	}
	if got, want := appendFloat32(nil, f, &shortTries{}), strconvFloat(float64(f), 32); !bytes.Equal(got, want) {
		t.Fatalf("float %v (%#x): %s, strconv %s", f, math.Float32bits(f), got, want)
	}
}

// strconvFloat is appendFloat without its fast paths.
func strconvFloat(f float64, bitSize int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null")
	}
	if f == 0 && math.Signbit(f) {
		return []byte("-0.0") // Jackson reads -0 as the integer 0
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bitSize == 64 && (abs < 1e-6 || abs >= 1e21) || bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, bitSize)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// TestShortFloats holds the fast paths to strconv on decimals of up to 9
// fraction digits, their neighbours, halfway cases, and random bits, and
// checks that they take the decimals they are for. The decimals m/10^k are
// drawn for every k (0 to 9) and every bit length of m (1 to 53), the same
// number for each, so that every magnitude the fast paths decide on is
// drawn from (a uniform draw over k and the bit length gave each pair about
// 380 on average; 40 each holds the same ground). Before them come the
// edges: the bounds the fast paths test (1e-6, 2^23, 2^40/10^8, 2^50,
// 2^52/10^k) and their neighbours. -short draws 4 of each pair.
func TestShortFloats(t *testing.T) {
	for _, f := range []float32{0.1, 1.25, 3.14159, 100.5, 0.001, -7} {
		if _, ok := appendShortFloat32(nil, f); !ok {
			t.Errorf("float %v is left to strconv", f)
		}
	}
	for _, f := range []float64{0.1, 1.25, 3.14159, 100.5, 0.001, 123456.78, -7} {
		if _, ok := appendShortDouble(nil, f); !ok {
			t.Errorf("double %v is left to strconv", f)
		}
	}
	check := func(d float64) {
		for _, x := range []float64{d, math.Nextafter(d, math.Inf(1)), math.Nextafter(d, math.Inf(-1))} {
			for _, x := range []float64{x, -x} {
				checkShortest(t, x, float32(x))
				checkShortest(t, x, math.Nextafter32(float32(x), float32(math.Inf(1))))
				checkShortest(t, x, math.Nextafter32(float32(x), float32(math.Inf(-1))))
			}
		}
	}
	edges := []float64{0, 1e-6, 1e-7, 1 << 23, 1 << 24, 1 << 40, 1 << 40 / 1e8, 1 << 50, 1 << 52, 1 << 53, 1e21}
	for _, p := range pow10f {
		edges = append(edges, 1<<52/p, 1<<23/p, 1<<40/p)
	}
	for _, e := range edges {
		check(e)
		check(e + 0.5)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	perPair := 40
	if testing.Short() {
		perPair = 4
	}
	for k := range 10 {
		for bits := 1; bits <= 53; bits++ {
			for range perPair {
				m := rng.Int64N(1 << uint(bits))
				d := float64(m) / math.Pow10(k)
				if rng.IntN(2) == 0 {
					d = -d
				}
				for _, x := range []float64{d, math.Nextafter(d, math.Inf(1)), math.Nextafter(d, math.Inf(-1)),
					math.Float64frombits(rng.Uint64()), float64(m) + 0.5} {
					checkShortest(t, x, float32(x))
					checkShortest(t, x, math.Nextafter32(float32(x), float32(math.Inf(1))))
				}
				f := math.Float32frombits(rng.Uint32())
				checkShortest(t, float64(f), f)
			}
		}
	}
}

// TestShortTries: a column that keeps missing the fast path skips it for a
// while and then offers it values again.
func TestShortTries(t *testing.T) {
	var s shortTries
	for range 16 {
		if !s.try() {
			t.Fatal("skipped before 16 misses")
		}
		s.took(false)
	}
	skipped := 0
	for s.skip > 0 {
		if s.try() {
			t.Fatal("offered a value while skipping")
		}
		skipped++
	}
	if skipped != 1024 || !s.try() || !s.took(true) || s.misses != 0 {
		t.Errorf("skipped %d values, then: %+v", skipped, s)
	}
}
