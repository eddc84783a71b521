package reader

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// FuzzValues encodes arbitrary values through every conversion and holds
// the output to valid JSON, strings to encoding/json's own escaping,
// decimals to math/big, and floats to an exact round trip.
func FuzzValues(f *testing.F) {
	f.Add([]byte("plain"), int64(0), 0.1, int32(0))
	f.Add([]byte("a\"b\\\n\x00\xff<>&\u2028"), int64(math.MinInt64), math.NaN(), int32(-1))
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, int64(math.MaxInt64), math.Inf(1), int32(math.MaxInt32))
	f.Add([]byte{0xff, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11}, int64(-1500), 1e-7, int32(12345))
	f.Fuzz(checkValue)
}

// checkValue is the body of FuzzValues.
func checkValue(t *testing.T, raw []byte, i int64, d float64, i32 int32) {
	{
		enc := &encoding{}
		var s scratch
		values := []struct {
			v  parquet.Value
			vt valueType
		}{
			{parquet.ByteArrayValue(raw), valueType{conv: convString}},
			{parquet.ByteArrayValue(raw), valueType{conv: convBinary}},
			{parquet.ByteArrayValue(raw), valueType{conv: convDecimalBytes, scale: int(i32 & 0x3f)}},
			{parquet.ByteArrayValue(raw), valueType{conv: convUUID}},
			{parquet.Int64Value(i), valueType{conv: convInt64}},
			{parquet.Int64Value(i), valueType{conv: convDecimalInt64, scale: int(i32 & 0x1f)}},
			{parquet.Int64Value(i), valueType{conv: convTimestamp, unit: 1000}},
			{parquet.Int64Value(i), valueType{conv: convTimestamp, unit: 1, nanos: true}},
			{parquet.Int64Value(i), valueType{conv: convTimeInt64, unit: 1000}},
			{parquet.Int32Value(i32), valueType{conv: convDate}},
			{parquet.Int32Value(i32), valueType{conv: convDecimalInt32, scale: 3}},
			{parquet.DoubleValue(d), valueType{conv: convDouble}},
			{parquet.FloatValue(float32(d)), valueType{conv: convFloat}},
			{parquet.FloatValue(float32(d)), valueType{conv: convFloatAsDouble}},
			{parquet.Int96Value(deprecated.Int96{uint32(i), uint32(i >> 32), uint32(i32)}), valueType{conv: convInt96, unit: 1}},
		}
		for _, iso := range []bool{false, true} {
			enc.isoTimestamps = iso
			enc.binaryAsString = iso
			for _, c := range values {
				out := appendValue(nil, &c.v, &c.vt, enc, &s)
				if !json.Valid(out) {
					t.Fatalf("conv %d of %q/%d/%v: invalid JSON %q", c.vt.conv, raw, i, d, out)
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
		if got := appendString(nil, raw); string(got)+"\n" != want.String() {
			t.Fatalf("string %q: got %s want %s", raw, got, want.String())
		}

		// Decimals agree with math/big.
		if len(raw) > 0 {
			scale := int(i32 & 0x3f)
			got := appendDecimalBytes(nil, raw, scale, &s)
			if w := bigDecimal(raw, scale); string(got) != w {
				t.Fatalf("decimal %x scale %d: got %s want %s", raw, scale, got, w)
			}
		}

		// Floats read back as the same value.
		if !math.IsNaN(d) && !math.IsInf(d, 0) {
			got := appendFloat(nil, d, 64)
			back, err := strconv.ParseFloat(string(got), 64)
			if err != nil || back != d {
				t.Fatalf("double %v: %s reads back as %v (%v)", d, got, back, err)
			}
			f32 := float32(d)
			if !math.IsInf(float64(f32), 0) {
				got = appendFloat(nil, float64(f32), 32)
				back, err = strconv.ParseFloat(string(got), 32)
				if err != nil || float32(back) != f32 {
					t.Fatalf("float %v: %s reads back as %v (%v)", f32, got, back, err)
				}
			}
		}
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
			var s scratch
			if got := string(appendDecimalInt64(nil, tc.unscaled, tc.scale, &s)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestEqualityKeysAcrossPhysicalTypes(t *testing.T) {
	cases := []struct {
		name string
		a, b parquet.Value
		ta   valueType
		tb   valueType
		same bool
	}{
		{"int32 vs int64", parquet.Int32Value(7), parquet.Int64Value(7), valueType{conv: convInt32}, valueType{conv: convInt64}, true},
		{"int32 vs int64 differ", parquet.Int32Value(7), parquet.Int64Value(8), valueType{conv: convInt32}, valueType{conv: convInt64}, false},
		{"null vs null", parquet.NullValue(), parquet.NullValue(), valueType{conv: convInt32}, valueType{conv: convString}, true},
		{"null vs zero", parquet.NullValue(), parquet.Int64Value(0), valueType{conv: convInt64}, valueType{conv: convInt64}, false},
		{"decimal int64 vs 16 bytes", parquet.Int64Value(-100), parquet.FixedLenByteArrayValue(bytes.Repeat([]byte{0xff}, 15)), valueType{conv: convDecimalInt64}, valueType{conv: convDecimalBytes}, false},
		{"decimal int32 vs bytes", parquet.Int32Value(-1), parquet.FixedLenByteArrayValue([]byte{0xff, 0xff, 0xff, 0xff, 0xff}), valueType{conv: convDecimalInt32}, valueType{conv: convDecimalBytes}, true},
		{"decimal padded", parquet.Int64Value(258), parquet.ByteArrayValue([]byte{0, 0, 1, 2}), valueType{conv: convDecimalInt64}, valueType{conv: convDecimalBytes}, true},
		{"timestamp millis vs micros", parquet.Int64Value(1234), parquet.Int64Value(1234000), valueType{conv: convTimestamp, unit: nanosPerMilli}, valueType{conv: convTimestamp, unit: 1000}, true},
		{"float NaN payloads", parquet.FloatValue(math.Float32frombits(0x7fc00001)), parquet.FloatValue(float32(math.NaN())), valueType{conv: convFloat}, valueType{conv: convFloat}, true},
		{"float vs double promoted", parquet.FloatValue(0.5), parquet.DoubleValue(0.5), valueType{conv: convFloatAsDouble}, valueType{conv: convDouble}, true},
		{"string bytes", parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("ab")), valueType{conv: convString}, valueType{conv: convString}, true},
		{"string prefix", parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("abc")), valueType{conv: convString}, valueType{conv: convString}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ka := appendKey(nil, &tc.a, &tc.ta)
			kb := appendKey(nil, &tc.b, &tc.tb)
			if bytes.Equal(ka, kb) != tc.same {
				t.Errorf("keys %x and %x: equal=%v, want %v", ka, kb, !tc.same, tc.same)
			}
		})
	}
}
