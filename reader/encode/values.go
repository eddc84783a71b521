// Package encode writes single values as the JSON a row stream carries,
// the way Druid's Parquet reader presents them: integers and dates,
// timestamps as epoch milliseconds or RFC 3339, decimals as exact strings,
// floats and doubles as the shortest decimal that reads back as the same
// value, binary as base64 or text, UUIDs, variants (VariantEncoder) and WKB
// geometries as WKT. It also writes the canonical bytes by which equality
// deletes compare values (AppendKey), equal for equal Iceberg values
// whatever physical type stored them. ValueType is how one column's stored
// values become values of its Iceberg type, picked once per column so that
// encoding a value is a single switch; Options are a stream's output
// choices. Nothing here allocates per value.
//
// It owns the value and the bytes of a field's key (FieldKeyBytes), not the
// row: which columns a row has, and how nested values, nulls and shredded
// variants are walked, belong to package reader and its schema resolution. A value that cannot be encoded
// (a decimal wider than 38 digits, damaged WKB) is written as null and
// recorded in Scratch.Err, wrapping readerr.ErrCorruptFile, for the caller
// to fail the stream.
package encode

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// Conv says how the values of one Parquet leaf become values of the Iceberg
// type of the field with the same id. The physical type and the Iceberg type
// together pick one conv at Open, so the per-value work is a single switch.
type Conv uint8

const (
	ConvNull          Conv = iota // Iceberg unknown: always null
	ConvBool                      // BOOLEAN
	ConvInt32                     // INT32 as int, or promoted to long
	ConvInt64                     // INT64 as long
	ConvFloat                     // FLOAT as float
	ConvFloatAsDouble             // FLOAT promoted to double
	ConvDouble                    // DOUBLE
	ConvDate                      // INT32 days since the epoch
	ConvTimeInt32                 // INT32 TIME in unit (millis)
	ConvTimeInt64                 // INT64 TIME in unit
	ConvTimestamp                 // INT64 TIMESTAMP in unit
	ConvDateTimestamp             // INT32 DATE promoted to timestamp (nanos says which)
	ConvInt96                     // INT96 Julian day + nanos of day
	ConvDecimalInt32              // INT32 unscaled
	ConvDecimalInt64              // INT64 unscaled
	ConvDecimalBytes              // (FIXED_LEN_)BYTE_ARRAY unscaled two's complement big-endian
	ConvString                    // BYTE_ARRAY UTF-8
	ConvBinary                    // BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY: binary and fixed
	ConvUUID                      // FIXED_LEN_BYTE_ARRAY(16)
	ConvBase64                    // BYTE_ARRAY as base64 whatever binaryAsString says: WKB, a variant's binary
	ConvWKT                       // BYTE_ARRAY WKB as WKT: geometry, geography
)

// ValueType is the resolved conversion of one leaf.
type ValueType struct {
	Conv Conv
	// Unit is the length of one stored step in nanoseconds, for time and
	// timestamp columns (1e6 millis, 1e3 micros, 1 nanos).
	Unit int64
	// Nanos is true when the Iceberg type holds nanoseconds (timestamp_ns,
	// timestamptz_ns); Iceberg timestamps and times hold microseconds
	// otherwise.
	Nanos bool
	// Scale is the Iceberg decimal scale.
	Scale int
	// short steers floats past the fast path where it keeps missing.
	short shortTries
	// NullOnly is set for a column the file annotates NULL (a column of
	// nothing but nulls): a value in it is damage, not data.
	NullOnly bool
}

// Options holds the output choices of a Reader: how timestamps, binary
// values and geospatial values are written.
type Options struct {
	ISOTimestamps  bool
	BinaryAsString bool
	// GeoWKB serves geometry and geography as base64 WKB instead of WKT.
	GeoWKB bool
}

// Scratch is per-stream working memory for value encoding, so that no value
// allocates, and what encoding found along the way.
type Scratch struct {
	digits [48]byte
	// Invalid counts the values whose invalid UTF-8 was replaced.
	Invalid int64
	// Err is the first value that could not be encoded; the value itself
	// was written as null to keep the line valid, and the caller must fail.
	Err error
}

const (
	NanosPerMilli = int64(time.Millisecond)
	nanosPerSec   = int64(time.Second)
	millisPerDay  = int64(24 * time.Hour / time.Millisecond)
	// julianEpochDay is the Julian day number of 1970-01-01, the base of
	// INT96 timestamps.
	julianEpochDay = 2440588
	NanosPerDay    = int64(24 * time.Hour)
)

// AppendValue appends the JSON form of the non-null i-th value of v.
func AppendValue(b []byte, v *parquetpage.Values, i int, t *ValueType, enc *Options, s *Scratch) []byte {
	switch t.Conv {
	case ConvNull:
		return append(b, "null"...)
	case ConvBool:
		if v.Bool[i] {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case ConvInt32:
		return appendInt(b, int64(v.Int32[i]))
	case ConvInt64:
		return appendInt(b, v.Int64[i])
	case ConvFloat:
		return appendFloat32(b, v.Float[i], &t.short)
	case ConvFloatAsDouble:
		return appendFloat(b, float64(v.Float[i]), 64)
	case ConvDouble:
		return appendDouble(b, v.Double[i], &t.short)
	case ConvDate:
		return appendInt(b, int64(v.Int32[i])*millisPerDay)
	case ConvTimeInt32:
		return appendInt(b, TimeMicros(int64(v.Int32[i]), t.Unit))
	case ConvTimeInt64:
		return appendInt(b, TimeMicros(v.Int64[i], t.Unit))
	case ConvTimestamp:
		return appendTimestamp(b, v.Int64[i], t.Unit, t.Nanos, enc.ISOTimestamps)
	case ConvDateTimestamp:
		days := int64(v.Int32[i])
		if !enc.ISOTimestamps {
			return appendInt(b, days*millisPerDay)
		}
		digits := 6
		if t.Nanos {
			digits = 9
		}
		return appendISO(b, days*86400, 0, digits)
	case ConvInt96:
		return appendTimestamp(b, Int96Nanos(v.Int96[i]), 1, t.Nanos, enc.ISOTimestamps)
	case ConvDecimalInt32:
		return appendDecimalInt64(b, int64(v.Int32[i]), t.Scale, s)
	case ConvDecimalInt64:
		return appendDecimalInt64(b, v.Int64[i], t.Scale, s)
	case ConvDecimalBytes:
		return appendDecimalBytes(b, v.ByteArray(i), t.Scale, s)
	case ConvString, ConvBinary:
		if t.Conv == ConvString || enc.BinaryAsString {
			var bad bool
			if b, bad = jsonstr.AppendCheck(b, v.ByteArray(i)); bad {
				s.Invalid++
			}
			return b
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.ByteArray(i))
		return append(b, '"')
	case ConvUUID:
		return appendUUID(b, v.ByteArray(i))
	case ConvBase64:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.ByteArray(i))
		return append(b, '"')
	case ConvWKT:
		out, err := appendWKT(b, v.ByteArray(i))
		if err != nil {
			if s.Err == nil {
				s.Err = fmt.Errorf("%w: geospatial value: %w", readerr.ErrCorruptFile, err)
			}
			return append(b, "null"...)
		}
		return out
	}
	return append(b, "null"...)
}

// ValuesOf holds the one value v, for the encoders of constants.
func ValuesOf(v parquet.Value) *parquetpage.Values {
	out := &parquetpage.Values{N: 1}
	switch v.Kind() {
	case parquet.Boolean:
		out.Bool = []bool{v.Boolean()}
	case parquet.Int32:
		out.Int32 = []int32{v.Int32()}
	case parquet.Int64:
		out.Int64 = []int64{v.Int64()}
	case parquet.Int96:
		out.Int96 = []deprecated.Int96{v.Int96()}
	case parquet.Float:
		out.Float = []float32{v.Float()}
	case parquet.Double:
		out.Double = []float64{v.Double()}
	case parquet.ByteArray, parquet.FixedLenByteArray:
		out.Bytes = v.ByteArray()
		out.Refs = []parquetpage.Ref{{Off: 0, Len: uint32(len(out.Bytes))}}
	}
	return out
}

// TimeMicros converts a time of day stored in unit to microseconds.
func TimeMicros(v, unit int64) int64 {
	switch unit {
	case NanosPerMilli:
		return v * 1000
	case 1:
		return v / 1000
	}
	return v
}

// Int96Nanos returns an INT96 timestamp (Impala, Hive, old Spark) as
// nanoseconds since the epoch: the first 8 bytes are the nanoseconds of the
// day, the last 4 the Julian day, both little-endian.
func Int96Nanos(i deprecated.Int96) int64 {
	nod := int64(uint64(i[1])<<32 | uint64(i[0]))
	return (int64(i[2])-julianEpochDay)*NanosPerDay + nod
}

// appendTimestamp appends a timestamp stored as v steps of unit nanoseconds:
// integer epoch milliseconds truncated toward zero, or with iso an RFC 3339
// UTC string with 6 (micros) or 9 (nanos) fraction digits, of the same
// millisecond: Druid parses the string with Joda, which keeps the first
// three fraction digits (the millisecond below), so a time before 1970
// with sub-millisecond digits is written at its millisecond toward zero,
// the digits below it zero (-0.5 ms as 1970-01-01T00:00:00.000000Z, not
// 1969-12-31T23:59:59.999500Z, which Druid reads as -1 ms).
func appendTimestamp(b []byte, v, unit int64, nanos, iso bool) []byte {
	if !iso {
		switch unit {
		case NanosPerMilli:
			return appendInt(b, v)
		case 1000:
			return appendInt(b, v/1000)
		default:
			return appendInt(b, v/NanosPerMilli)
		}
	}
	if perMilli := NanosPerMilli / unit; v < 0 && perMilli > 1 {
		v = v / perMilli * perMilli
	}
	perSec := nanosPerSec / unit
	sec := v / perSec
	frac := v % perSec
	if frac < 0 {
		sec--
		frac += perSec
	}
	digits := 6
	if nanos {
		digits = 9
	}
	return appendISO(b, sec, frac*unit, digits)
}

// appendISO appends "YYYY-MM-DDTHH:MM:SS.fff…Z" for sec seconds and nsec
// nanoseconds (0 <= nsec < 1e9) after the epoch, with digits fraction digits.
func appendISO(b []byte, sec, nsec int64, digits int) []byte {
	days := sec / 86400
	sod := sec % 86400
	if sod < 0 {
		days--
		sod += 86400
	}
	y, m, d := civil(days)
	if y < 0 || y > 9999 {
		layout := "2006-01-02T15:04:05.000000Z07:00"
		if digits == 9 {
			layout = "2006-01-02T15:04:05.000000000Z07:00"
		}
		b = append(b, '"')
		b = time.Unix(sec, nsec).UTC().AppendFormat(b, layout)
		return append(b, '"')
	}
	b = append(b, '"')
	b = append4(b, uint32(y))
	b = append(b, '-')
	b = append2(b, uint32(m))
	b = append(b, '-')
	b = append2(b, uint32(d))
	b = append(b, 'T')
	b = append2(b, uint32(sod/3600))
	b = append(b, ':')
	b = append2(b, uint32(sod/60%60))
	b = append(b, ':')
	b = append2(b, uint32(sod%60))
	b = append(b, '.')
	if digits == 6 {
		b = append6(b, uint32(nsec/1000))
	} else {
		b = append8(append(b, byte('0'+nsec/1e8)), uint32(nsec%1e8))
	}
	return append(b, 'Z', '"')
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's civil_from_days).
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendFloat32 appends a float as appendFloat does, offering it to the
// fast path as tries says.
func appendFloat32(b []byte, f float32, tries *shortTries) []byte {
	if tries.try() {
		out, ok := appendShortFloat32(b, f)
		if tries.took(ok) {
			return out
		}
	}
	return appendFloatGeneral(b, float64(f), 32)
}

// appendDouble appends a double as appendFloat does, offering it to the
// fast path as tries says.
func appendDouble(b []byte, f float64, tries *shortTries) []byte {
	if tries.try() {
		out, ok := appendShortDouble(b, f)
		if tries.took(ok) {
			return out
		}
	}
	return appendFloatGeneral(b, f, 64)
}

// appendFloat appends f as the shortest decimal that reads back as the same
// float of bitSize bits, in the format encoding/json uses (no exponent for
// ordinary magnitudes); NaN and ±Inf, which JSON cannot carry, become null.
func appendFloat(b []byte, f float64, bitSize int) []byte {
	if bitSize == 64 {
		if out, ok := appendShortDouble(b, f); ok {
			return out
		}
	}
	return appendFloatGeneral(b, f, bitSize)
}

// shortTries decides, for one column, whether a float is first offered to
// the fast paths of appendShortDouble and appendShortFloat32: a column of
// measurements with all their digits misses them every time, so after 16
// misses in a row it skips them for the next 1024 values. The output is
// the same either way.
type shortTries struct {
	misses uint8
	skip   uint16
}

// try reports whether to offer the next value to the fast path.
func (s *shortTries) try() bool {
	if s.skip > 0 {
		s.skip--
		return false
	}
	return true
}

// took records whether the fast path took the value, and returns ok.
func (s *shortTries) took(ok bool) bool {
	if ok {
		s.misses = 0
		return true
	}
	if s.misses++; s.misses >= 16 {
		s.misses, s.skip = 0, 1024
	}
	return false
}

// appendFloatGeneral is appendFloat without the fast path.
func appendFloatGeneral(b []byte, f float64, bitSize int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 && math.Signbit(f) {
		// Jackson reads -0 as the integer 0 (IntNode), so Druid would get
		// +0.0; -0.0 is a DoubleNode of the same 64-bit value, and a float
		// column reads it back as the float -0.0.
		return append(b, "-0.0"...)
	}
	if bitSize == 64 {
		if f == 0 {
			return append(b, '0')
		}
		return appendShortestDouble(b, f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	// strconv writes the shortest digits in the 'e' form with whole copies,
	// and the 'f' form a digit at a time: ask for the first and lay it out.
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, bitSize)
	if format == 'f' {
		if n := len(b); n-start < 5 || b[n-4] != 'e' {
			// Not the two-digit exponent of these magnitudes: never.
			return strconv.AppendFloat(b[:start], f, 'f', -1, bitSize)
		}
		return fixedFromExponent(b, start)
	}
	// Clean up e-09 to e-9, as encoding/json does.
	n := len(b)
	if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// fixedFromExponent rewrites the "-d.ddde±XX" strconv wrote at b[start:]
// as strconv's 'f' form of the same digits, in place. It is for
// magnitudes from 1e-6 to 1e21, whose exponent has two digits; the point
// moves over at most 20 digits, with small loops rather than copies.
func fixedFromExponent(b []byte, start int) []byte {
	n := len(b)
	exp := int(b[n-2]-'0')*10 + int(b[n-1]-'0')
	if b[n-3] == '-' {
		exp = -exp
	}
	s := b[start : n-4] // "d" or "d.ddd", after any sign
	if s[0] == '-' {
		start++
		s = s[1:]
	}
	nd := 1 // the digits: s[0], then s[2:]
	if len(s) > 1 {
		nd = len(s) - 1
	}
	switch {
	case exp >= 0 && exp < nd-1:
		// The point moves exp digits to the right.
		for j := 1; j <= exp; j++ {
			s[j] = s[j+1]
		}
		s[exp+1] = '.'
		return b[:start+len(s)]
	case exp >= 0:
		// An integer: the point goes, zeros follow.
		for j := 1; j < nd; j++ {
			s[j] = s[j+1]
		}
		return append(b[:start+nd], zeros[:exp+1-nd]...)
	default:
		// "0.", -exp-1 zeros, the digits.
		for j := 1; j < nd; j++ {
			s[j] = s[j+1]
		}
		shift := 1 - exp
		b = append(b[:start+nd], zeros[:shift]...)
		s = b[start:]
		copy(s[shift:], s[:nd])
		copy(s[:shift], zeros[:shift])
		s[1] = '.'
		return b
	}
}

// pow10 holds 10^0 to 10^8, exact as float64 and as integers.
var (
	pow10f = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}
	pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}
)

// appendShortDouble is appendFloat's fast path for a double that some
// decimal m/10^k with k <= 8 reads back as (prices, scores, measures):
// it finds the least such k without strconv's general search. The decimal
// reads back as f exactly when float64(m)/10^k == f, both operands being
// exact (m < 2^52) and the division correctly rounded, as parsing is. Below
// 2^52 the decimals of k digits lie further apart than f's neighbours, so
// at most one of them reads back as f and it is strconv's choice; should
// the product f·10^k round m off by one and miss it at the least k, it is
// found at a larger k with trailing zeros, which are cut. false leaves the
// value to strconv: zero, NaN, ±Inf, the magnitudes written with an
// exponent, and everything needing more digits.
func appendShortDouble(b []byte, f float64) ([]byte, bool) {
	a := math.Abs(f)
	if !(a >= 1e-6 && a < 1<<50) {
		return b, false
	}
	// Most doubles need all their digits: a·10^8 is then far from an
	// integer, which a decimal of up to 8 fraction digits times 10^8 is not
	// (to within its rounding, under 2^-12 below 2^40).
	if t := a * 1e8; t < 1<<40 && math.Abs(t-math.Round(t)) > 1e-3 {
		return b, false
	}
	for k := range len(pow10f) {
		t := a * pow10f[k]
		if t >= 1<<52 {
			return b, false
		}
		m := math.Round(t)
		if m/pow10f[k] == a {
			return appendDecimalFraction(b, f < 0, uint64(m), k), true
		}
	}
	return b, false
}

// appendShortFloat32 is the same fast path for a float: the decimal
// m/10^k reads back as f when it lies strictly between the midpoints to
// f's neighbours, which float64 holds exactly, and so does their product
// with 10^k (at most 25 + 19 significant bits). A decimal on a midpoint
// (rounded to even) is left to strconv.
func appendShortFloat32(b []byte, f float32) ([]byte, bool) {
	a32 := float32(math.Abs(float64(f)))
	if !(a32 >= 1e-6 && a32 < 1<<23) {
		return b, false
	}
	a := float64(a32)
	// As for doubles, within a float's rounding: 2^-24 of it.
	if t := a * 1e8; t < 1<<40 && math.Abs(t-math.Round(t)) > 1e-3+t*0x1p-23 {
		return b, false
	}
	lo := (float64(math.Nextafter32(a32, 0)) + a) / 2
	hi := (float64(math.Nextafter32(a32, math.MaxFloat32)) + a) / 2
	for k := range len(pow10f) {
		t := a * pow10f[k]
		if t >= 1<<23 {
			return b, false
		}
		m := math.Round(t)
		if lo*pow10f[k] < m && m < hi*pow10f[k] {
			return appendDecimalFraction(b, f < 0, uint64(m), k), true
		}
	}
	return b, false
}

// appendDecimalFraction appends m/10^k with k fraction digits, less those
// that are trailing zeros.
func appendDecimalFraction(b []byte, neg bool, m uint64, k int) []byte {
	for k > 0 && m%10 == 0 {
		m /= 10
		k--
	}
	if neg {
		b = append(b, '-')
	}
	b = appendUint(b, m/pow10u[k])
	if k == 0 {
		return b
	}
	b = append(b, '.')
	return appendPaddedUint(b, m%pow10u[k], k)
}

// appendDecimalInt64 appends the decimal unscaled×10^-scale as a JSON string.
func appendDecimalInt64(b []byte, unscaled int64, scale int, s *Scratch) []byte {
	neg := unscaled < 0
	mag := uint64(unscaled)
	if neg {
		mag = -mag
	}
	if scale < 0 || scale > 38 {
		return appendDecimalDigits(b, neg, appendUint(s.digits[:0], mag), scale)
	}
	// The digits go straight into b; the point then moves in among them.
	b = append(b, '"')
	if neg {
		b = append(b, '-')
	}
	start := len(b)
	b = appendUint(b, mag)
	n := len(b) - start
	switch {
	case scale == 0:
	case n > scale:
		b = append(b, 0)
		p := len(b) - 1 - scale
		copy(b[p+1:], b[p:len(b)-1])
		b[p] = '.'
	default:
		// "0.", scale-n zeros, the digits.
		shift := 2 + scale - n
		b = append(b, zeros[:shift]...)
		copy(b[start+shift:], b[start:start+n])
		copy(b[start:start+shift], zeros[:shift])
		b[start+1] = '.'
	}
	return append(b, '"')
}

// zeros is more '0's than a decimal's scale (at most 38) needs.
const zeros = "0000000000000000000000000000000000000000"

// appendDecimalBytes appends the decimal whose unscaled value is the
// big-endian two's complement integer raw, as a JSON string. A value that
// needs more than 16 bytes is wider than any decimal(38): it is written as
// null and recorded in s.err, which fails the stream.
func appendDecimalBytes(b []byte, raw []byte, scale int, s *Scratch) []byte {
	if len(raw) <= 8 {
		// Sign-extended into an int64 (the usual FIXED_LEN_BYTE_ARRAY
		// widths for precisions up to 18).
		var x int64
		if len(raw) > 0 && raw[0]&0x80 != 0 {
			x = -1
		}
		for _, c := range raw {
			x = x<<8 | int64(c)
		}
		return appendDecimalInt64(b, x, scale, s)
	}
	raw = TrimSignExtension(raw)
	if len(raw) > 16 {
		if s.Err == nil {
			s.Err = fmt.Errorf("%w: decimal value of %d significant bytes is wider than decimal(38)", readerr.ErrCorruptFile, len(raw))
		}
		return append(b, "null"...)
	}
	neg, hi, lo := int128(raw)
	return appendDecimalDigits(b, neg, appendUint128(s.digits[:0], hi, lo), scale)
}

// int128 sign-extends a big-endian two's complement integer of up to 16
// bytes and returns its sign and magnitude.
func int128(raw []byte) (neg bool, hi, lo uint64) {
	var buf [16]byte
	neg = raw[0]&0x80 != 0
	if neg {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(raw):], raw)
	hi = binary.BigEndian.Uint64(buf[:8])
	lo = binary.BigEndian.Uint64(buf[8:])
	if neg {
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
	}
	return neg, hi, lo
}

// appendUint128 appends the decimal digits of hi·2^64+lo.
func appendUint128(b []byte, hi, lo uint64) []byte {
	if hi == 0 {
		return appendUint(b, lo)
	}
	const e19 = 10_000_000_000_000_000_000
	// Collect base-1e19 limbs, least significant first; 3 limbs hold any
	// 128-bit value.
	var limbs [3]uint64
	n := 0
	for hi != 0 {
		qhi := hi / e19
		var r uint64
		lo, r = bits.Div64(hi%e19, lo, e19)
		hi = qhi
		limbs[n] = r
		n++
	}
	b = appendUint(b, lo)
	for n > 0 {
		n--
		b = appendPaddedUint(b, limbs[n], 19)
	}
	return b
}

// appendDecimalDigits appends a JSON string of the magnitude digits with
// the decimal point scale digits from the right, keeping the scale: 1230
// at scale 2 is "12.30", 5 at scale 3 is "0.005".
func appendDecimalDigits(b []byte, neg bool, digits []byte, scale int) []byte {
	b = append(b, '"')
	if neg && !(len(digits) == 1 && digits[0] == '0') {
		b = append(b, '-')
	}
	switch {
	case scale <= 0:
		b = append(b, digits...)
		for range -scale {
			b = append(b, '0')
		}
	case len(digits) > scale:
		b = append(b, digits[:len(digits)-scale]...)
		b = append(b, '.')
		b = append(b, digits[len(digits)-scale:]...)
	default:
		b = append(b, '0', '.')
		for range scale - len(digits) {
			b = append(b, '0')
		}
		b = append(b, digits...)
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendUUID appends the canonical 8-4-4-4-12 lowercase form of a 16-byte
// UUID; other lengths fall back to base64, which cannot happen for a valid
// file.
func appendUUID(b []byte, u []byte) []byte {
	if len(u) != 16 {
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, u)
		return append(b, '"')
	}
	b = append(b, '"')
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(b, '"')
}

// TrimSignExtension drops the leading bytes of a big-endian two's
// complement integer that only repeat its sign.
func TrimSignExtension(raw []byte) []byte {
	for len(raw) > 1 && (raw[0] == 0 && raw[1]&0x80 == 0 || raw[0] == 0xff && raw[1]&0x80 != 0) {
		raw = raw[1:]
	}
	return raw
}
