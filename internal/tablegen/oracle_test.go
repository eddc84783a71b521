package tablegen

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

func TestDecimalString(t *testing.T) {
	tests := []struct {
		unscaled int64
		scale    int32
		want     string
	}{
		{1234, 2, "12.34"},
		{-1234, 2, "-12.34"},
		{5, 2, "0.05"},
		{-5, 2, "-0.05"},
		{0, 2, "0.00"},
		{-100, 2, "-1.00"},
		{12345, 4, "1.2345"},
		{7, 0, "7"},
		{12, -2, "1200"},
		{0, -2, "0"},
	}
	for _, tt := range tests {
		if got := decimalString(big.NewInt(tt.unscaled), tt.scale); got != tt.want {
			t.Errorf("decimalString(%d, %d) = %q, want %q", tt.unscaled, tt.scale, got, tt.want)
		}
	}
}

func TestToMillisTruncatesTowardZero(t *testing.T) {
	tests := []struct {
		v    int64
		unit arrow.TimeUnit
		want int64
	}{
		{1_500, arrow.Microsecond, 1},
		{-1_500, arrow.Microsecond, -1},
		{-999, arrow.Microsecond, 0},
		{-1_999_999, arrow.Nanosecond, -1},
		{3, arrow.Second, 3000},
		{-7, arrow.Millisecond, -7},
	}
	for _, tt := range tests {
		if got := toMillis(tt.v, tt.unit); got != tt.want {
			t.Errorf("toMillis(%d, %s) = %d, want %d", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range append(mixedNames, "", "\x00\x1f\x7f", "bad \xff utf8", "line\u2028sep\u2029", `<>&`, "🙂") {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatalf("encode %q: %v", s, err)
		}
		want := strings.TrimSuffix(b.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendValue(t *testing.T) {
	mem := memory.DefaultAllocator
	build := func(dt arrow.DataType, fill func(array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		fill(b)
		return b.NewArray()
	}
	u := uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7")
	tests := []struct {
		name string
		arr  arrow.Array
		want []string
	}{
		{"float32 shortest", build(arrow.PrimitiveTypes.Float32, func(b array.Builder) {
			b.(*array.Float32Builder).AppendValues([]float32{0.1, float32(math.NaN()), float32(math.Inf(-1))}, nil)
		}), []string{"0.1", "null", "null"}},
		{"float64", build(arrow.PrimitiveTypes.Float64, func(b array.Builder) {
			b.(*array.Float64Builder).AppendValues([]float64{0.1, 1e21, -2.5}, nil)
		}), []string{"0.1", "1e+21", "-2.5"}},
		{"time64 micros", build(arrow.FixedWidthTypes.Time64us, func(b array.Builder) {
			b.(*array.Time64Builder).Append(arrow.Time64(45_296_000_001))
		}), []string{"45296000001"}},
		{"timestamp nanos", build(&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, func(b array.Builder) {
			b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1_500_000, 1_999_999}, nil)
		}), []string{"-1", "1"}},
		{"uuid", build(extensions.NewUUIDType(), func(b array.Builder) {
			b.(*extensions.UUIDBuilder).Append(u)
		}), []string{`"f79c3e09-677c-4bbd-a479-3f349cb785e7"`}},
		{"fixed", build(&arrow.FixedSizeBinaryType{ByteWidth: 3}, func(b array.Builder) {
			b.(*array.FixedSizeBinaryBuilder).Append([]byte{1, 2, 3})
		}), []string{`"AQID"`}},
		{"decimal", build(&arrow.Decimal128Type{Precision: 18, Scale: 4}, func(b array.Builder) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(-12_345))
		}), []string{`"-1.2345"`}},
		{"struct", build(arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), func(b array.Builder) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(1)
			sb.FieldBuilder(1).AppendNull()
			sb.AppendNull()
		}), []string{`{"a":1,"b":null}`, "null"}},
		{"list", build(arrow.ListOf(arrow.PrimitiveTypes.Int64), func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
			lb.ValueBuilder().AppendNull()
			lb.Append(true)
		}), []string{"[1,2,null]", "[]"}},
		{"map string keys", build(arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), func(b array.Builder) {
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			mb.KeyBuilder().(*array.StringBuilder).AppendValues([]string{"z", "a"}, nil)
			mb.ItemBuilder().(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
		}), []string{`{"z":1,"a":2}`}},
		{"map other keys", build(arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), func(b array.Builder) {
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			mb.KeyBuilder().(*array.Int32Builder).AppendValues([]int32{2, 1}, nil)
			mb.ItemBuilder().(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
		}), []string{`[{"key":2,"value":"x"},{"key":1,"value":"y"}]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer tt.arr.Release()
			if tt.arr.Len() != len(tt.want) {
				t.Fatalf("array has %d values, test wants %d", tt.arr.Len(), len(tt.want))
			}
			for i, want := range tt.want {
				got, err := appendValue(nil, tt.arr, i)
				if err != nil {
					t.Fatalf("appendValue(%d): %v", i, err)
				}
				if string(got) != want {
					t.Errorf("appendValue(%d) = %s, want %s", i, got, want)
				}
			}
		})
	}
}
