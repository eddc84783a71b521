package reader

import (
	"bytes"
	"math"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/encode"
)

// TestEqualityKeysAcrossPhysicalTypes holds equality delete keys equal
// where Iceberg's values are equal whatever physical type stores them.
func TestEqualityKeysAcrossPhysicalTypes(t *testing.T) {
	cases := []struct {
		name string
		a, b parquet.Value
		ta   encode.ValueType
		tb   encode.ValueType
		same bool
	}{
		{"int32 vs int64", parquet.Int32Value(7), parquet.Int64Value(7), encode.ValueType{Conv: encode.ConvInt32}, encode.ValueType{Conv: encode.ConvInt64}, true},
		{"int32 vs int64 differ", parquet.Int32Value(7), parquet.Int64Value(8), encode.ValueType{Conv: encode.ConvInt32}, encode.ValueType{Conv: encode.ConvInt64}, false},
		{"null vs null", parquet.NullValue(), parquet.NullValue(), encode.ValueType{Conv: encode.ConvInt32}, encode.ValueType{Conv: encode.ConvString}, true},
		{"null vs zero", parquet.NullValue(), parquet.Int64Value(0), encode.ValueType{Conv: encode.ConvInt64}, encode.ValueType{Conv: encode.ConvInt64}, false},
		{"decimal int64 vs 16 bytes", parquet.Int64Value(-100), parquet.FixedLenByteArrayValue(bytes.Repeat([]byte{0xff}, 15)), encode.ValueType{Conv: encode.ConvDecimalInt64}, encode.ValueType{Conv: encode.ConvDecimalBytes}, false},
		{"decimal int32 vs bytes", parquet.Int32Value(-1), parquet.FixedLenByteArrayValue([]byte{0xff, 0xff, 0xff, 0xff, 0xff}), encode.ValueType{Conv: encode.ConvDecimalInt32}, encode.ValueType{Conv: encode.ConvDecimalBytes}, true},
		{"decimal padded", parquet.Int64Value(258), parquet.ByteArrayValue([]byte{0, 0, 1, 2}), encode.ValueType{Conv: encode.ConvDecimalInt64}, encode.ValueType{Conv: encode.ConvDecimalBytes}, true},
		{"timestamp millis vs micros", parquet.Int64Value(1234), parquet.Int64Value(1234000), encode.ValueType{Conv: encode.ConvTimestamp, Unit: encode.NanosPerMilli}, encode.ValueType{Conv: encode.ConvTimestamp, Unit: 1000}, true},
		{"float NaN payloads", parquet.FloatValue(math.Float32frombits(0x7fc00001)), parquet.FloatValue(float32(math.NaN())), encode.ValueType{Conv: encode.ConvFloat}, encode.ValueType{Conv: encode.ConvFloat}, true},
		{"float vs double promoted", parquet.FloatValue(0.5), parquet.DoubleValue(0.5), encode.ValueType{Conv: encode.ConvFloatAsDouble}, encode.ValueType{Conv: encode.ConvDouble}, true},
		{"string bytes", parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("ab")), encode.ValueType{Conv: encode.ConvString}, encode.ValueType{Conv: encode.ConvString}, true},
		{"string prefix", parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("abc")), encode.ValueType{Conv: encode.ConvString}, encode.ValueType{Conv: encode.ConvString}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := keyOf(tc.a, tc.ta), keyOf(tc.b, tc.tb)
			if bytes.Equal(ka, kb) != tc.same {
				t.Errorf("keys %x and %x: equal=%v, want %v", ka, kb, !tc.same, tc.same)
			}
		})
	}
}

// keyOf is the equality key of a value, null or not.
func keyOf(v parquet.Value, t encode.ValueType) []byte {
	if v.IsNull() {
		return []byte{0}
	}
	return appendKey(nil, encode.ValuesOf(v), 0, &t)
}
