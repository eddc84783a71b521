package parquetpage

import (
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// Values is one batch of a column chunk's entries: their levels and, in
// entry order, the values of the entries that are not null, in the slice of
// the column's physical type. A batch comes from one page; its slices are
// valid until the next call to Reader.Read, which reuses them.
type Values struct {
	// N is the number of entries.
	N int
	// Def and Rep are the definition and repetition levels of the N
	// entries; nil when the column's maximum level is 0. An entry holds a
	// value when its definition level is the column's maximum.
	Def, Rep []uint8

	// The values: only the slice of the column's physical type is set.
	Bool   []bool
	Int32  []int32
	Int64  []int64
	Int96  []deprecated.Int96
	Float  []float32
	Double []float64
	// Refs locate BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY values in Bytes.
	Refs  []Ref
	Bytes []byte
}

// Ref is where one byte-array value lies in Values.Bytes.
type Ref struct{ Off, Len uint32 }

// ByteArray returns the i-th byte-array value; it aliases Bytes.
func (v *Values) ByteArray(i int) []byte {
	r := v.Refs[i]
	return v.Bytes[r.Off : r.Off+r.Len : r.Off+r.Len]
}

// Len returns the number of values (entries that are not null).
func (v *Values) Len(t format.Type) int {
	switch t {
	case format.Boolean:
		return len(v.Bool)
	case format.Int32:
		return len(v.Int32)
	case format.Int64:
		return len(v.Int64)
	case format.Int96:
		return len(v.Int96)
	case format.Float:
		return len(v.Float)
	case format.Double:
		return len(v.Double)
	}
	return len(v.Refs)
}

// values holds the reused storage a Reader decodes values into.
type values struct {
	bools   []bool
	int32s  []int32
	int64s  []int64
	int96s  []deprecated.Int96
	floats  []float32
	doubles []float64
	refs    []Ref
}

// grow returns s with length n, reusing its storage when it is large
// enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, max(n, 2*cap(s)))
	}
	return s[:n]
}
