package encode

import (
	"encoding/binary"
	"math"

	"github.com/druidiceberg/sidecar/reader/parquetpage"
)

// IntKeyed reports whether the keys of a conversion are integers
// (appendKeyInt's 9 bytes): keyInt gives them.
func IntKeyed(c Conv) bool {
	switch c {
	case ConvInt32, ConvDate, ConvInt64, ConvTimeInt32, ConvTimeInt64, ConvTimestamp, ConvDateTimestamp, ConvInt96:
		return true
	}
	return false
}

// KeyInt returns the integer key of the i-th value of v, of a conversion
// that intKeyed accepts.
func KeyInt(v *parquetpage.Values, i int, t *ValueType) int64 {
	switch t.Conv {
	case ConvInt32, ConvDate:
		return int64(v.Int32[i])
	case ConvInt64:
		return v.Int64[i]
	case ConvTimeInt32:
		return TimeMicros(int64(v.Int32[i]), t.Unit)
	case ConvTimeInt64:
		return TimeMicros(v.Int64[i], t.Unit)
	case ConvTimestamp:
		return TimestampIn(v.Int64[i], t.Unit, t.Nanos)
	case ConvDateTimestamp:
		perDay := NanosPerDay / 1000
		if t.Nanos {
			perDay = NanosPerDay
		}
		return int64(v.Int32[i]) * perDay
	case ConvInt96:
		return TimestampIn(Int96Nanos(v.Int96[i]), 1, t.Nanos)
	}
	return 0
}

// AppendKey appends the canonical bytes of the i-th value of v as a value
// of its Iceberg type: 1 and a payload that is equal for equal Iceberg
// values whatever the physical type that stored them (0 is null).
func AppendKey(b []byte, v *parquetpage.Values, i int, t *ValueType) []byte {
	if IntKeyed(t.Conv) {
		return AppendKeyInt(b, KeyInt(v, i, t))
	}
	switch t.Conv {
	case ConvNull:
		return append(b, 0)
	case ConvBool:
		if v.Bool[i] {
			return append(b, 1, 1)
		}
		return append(b, 1, 0)
	case ConvFloat:
		f := v.Float[i]
		u := math.Float32bits(f)
		if f != f {
			u = 0x7fc00000 // every NaN is one key, as Java's Float.equals has it
		}
		return binary.BigEndian.AppendUint32(append(b, 1), u)
	case ConvFloatAsDouble, ConvDouble:
		var f float64
		if t.Conv == ConvFloatAsDouble {
			f = float64(v.Float[i])
		} else {
			f = v.Double[i]
		}
		u := math.Float64bits(f)
		if f != f {
			u = 0x7ff8000000000000
		}
		return binary.BigEndian.AppendUint64(append(b, 1), u)
	case ConvDecimalInt32:
		return appendKeyDecimal(b, int64(v.Int32[i]))
	case ConvDecimalInt64:
		return appendKeyDecimal(b, v.Int64[i])
	case ConvDecimalBytes:
		return appendKeyDecimalBytes(b, v.ByteArray(i))
	default: // strings, binary, fixed, uuid: the bytes
		raw := v.ByteArray(i)
		b = binary.AppendUvarint(append(b, 1), uint64(len(raw)))
		return append(b, raw...)
	}
}

// AppendKeyInt appends the key of an integer-keyed value (see IntKeyed):
// 1 and the integer's 8 bytes, big-endian.
func AppendKeyInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 1), uint64(v))
}

// TimestampIn converts a timestamp of v steps of unit nanoseconds to the
// unit of its Iceberg type: nanoseconds, or microseconds (floored).
func TimestampIn(v, unit int64, nanos bool) int64 {
	target := int64(1000)
	if nanos {
		target = 1
	}
	if unit >= target {
		return v * (unit / target)
	}
	d := target / unit
	q := v / d
	if v%d < 0 {
		q--
	}
	return q
}

// appendKeyDecimal appends an unscaled decimal as 16 bytes of two's
// complement; the scale is the field's, the same on both sides.
func appendKeyDecimal(b []byte, v int64) []byte {
	hi := uint64(0)
	if v < 0 {
		hi = math.MaxUint64
	}
	b = binary.BigEndian.AppendUint64(append(b, 1), hi)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

// appendKeyDecimalBytes appends a big-endian two's complement unscaled
// decimal in the same form as appendKeyDecimal, whatever its stored width.
func appendKeyDecimalBytes(b []byte, raw []byte) []byte {
	raw = TrimSignExtension(raw)
	if len(raw) > 16 {
		b = binary.AppendUvarint(append(b, 2), uint64(len(raw)))
		return append(b, raw...)
	}
	var buf [16]byte
	if len(raw) > 0 && raw[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(raw):], raw)
	return append(append(b, 1), buf[:]...)
}
