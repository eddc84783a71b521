package encode

import (
	"bytes"
	"math"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestEqualityKeysAcrossPhysicalTypes holds equality delete keys equal
// where Iceberg's values are equal whatever physical type stores them.
func TestEqualityKeysAcrossPhysicalTypes(t *testing.T) {
	cases := []struct {
		name string
		a, b parquet.Value
		ta   ValueType
		tb   ValueType
		same bool
	}{
		{"int32 vs int64", parquet.Int32Value(7), parquet.Int64Value(7), ValueType{Conv: ConvInt32}, ValueType{Conv: ConvInt64}, true},
		{"int32 vs int64 differ", parquet.Int32Value(7), parquet.Int64Value(8), ValueType{Conv: ConvInt32}, ValueType{Conv: ConvInt64}, false},
		{"null vs null", parquet.NullValue(), parquet.NullValue(), ValueType{Conv: ConvInt32}, ValueType{Conv: ConvString}, true},
		{"null vs zero", parquet.NullValue(), parquet.Int64Value(0), ValueType{Conv: ConvInt64}, ValueType{Conv: ConvInt64}, false},
		{"decimal int64 vs 16 bytes", parquet.Int64Value(-100), parquet.FixedLenByteArrayValue(bytes.Repeat([]byte{0xff}, 15)), ValueType{Conv: ConvDecimalInt64}, ValueType{Conv: ConvDecimalBytes}, false},
		{"decimal int32 vs bytes", parquet.Int32Value(-1), parquet.FixedLenByteArrayValue([]byte{0xff, 0xff, 0xff, 0xff, 0xff}), ValueType{Conv: ConvDecimalInt32}, ValueType{Conv: ConvDecimalBytes}, true},
		{"decimal padded", parquet.Int64Value(258), parquet.ByteArrayValue([]byte{0, 0, 1, 2}), ValueType{Conv: ConvDecimalInt64}, ValueType{Conv: ConvDecimalBytes}, true},
		{"timestamp millis vs micros", parquet.Int64Value(1234), parquet.Int64Value(1234000), ValueType{Conv: ConvTimestamp, Unit: NanosPerMilli}, ValueType{Conv: ConvTimestamp, Unit: 1000}, true},
		{"float NaN payloads", parquet.FloatValue(math.Float32frombits(0x7fc00001)), parquet.FloatValue(float32(math.NaN())), ValueType{Conv: ConvFloat}, ValueType{Conv: ConvFloat}, true},
		{"float vs double promoted", parquet.FloatValue(0.5), parquet.DoubleValue(0.5), ValueType{Conv: ConvFloatAsDouble}, ValueType{Conv: ConvDouble}, true},
		{"string bytes", parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("ab")), ValueType{Conv: ConvString}, ValueType{Conv: ConvString}, true},
		{"string prefix", parquet.ByteArrayValue([]byte("ab")), parquet.ByteArrayValue([]byte("abc")), ValueType{Conv: ConvString}, ValueType{Conv: ConvString}, false},
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
func keyOf(v parquet.Value, t ValueType) []byte {
	if v.IsNull() {
		return []byte{0}
	}
	return AppendKey(nil, ValuesOf(v), 0, &t)
}
