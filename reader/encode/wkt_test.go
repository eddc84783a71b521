package encode

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/readerr"
)

// wkbBuilder builds WKB values for the tests: each method appends to the value in
// the builder's byte order.
type wkbBuilder struct {
	b  []byte
	be bool
}

func (w *wkbBuilder) order() *wkbBuilder {
	if w.be {
		w.b = append(w.b, 0)
	} else {
		w.b = append(w.b, 1)
	}
	return w
}

func (w *wkbBuilder) u32(v uint32) *wkbBuilder {
	if w.be {
		w.b = binary.BigEndian.AppendUint32(w.b, v)
	} else {
		w.b = binary.LittleEndian.AppendUint32(w.b, v)
	}
	return w
}

func (w *wkbBuilder) f64(vs ...float64) *wkbBuilder {
	for _, v := range vs {
		if w.be {
			w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(v))
		} else {
			w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
		}
	}
	return w
}

// geom appends a geometry header: byte order and type code.
func (w *wkbBuilder) geom(code uint32) *wkbBuilder { return w.order().u32(code) }

func le() *wkbBuilder { return &wkbBuilder{} }
func be() *wkbBuilder { return &wkbBuilder{be: true} }

func TestAppendWKT(t *testing.T) {
	nan := math.NaN()
	square := func(w *wkbBuilder) *wkbBuilder { return w.u32(5).f64(0, 0, 1, 0, 1, 1, 0, 1, 0, 0) }
	// A multipoint whose second point is big-endian.
	mp := le().geom(4).u32(2).geom(1).f64(1, 2)
	mp.b = append(mp.b, be().geom(1).f64(3, 4).b...)
	tests := []struct {
		name string
		wkb  []byte
		want string
	}{
		{"point", le().geom(1).f64(1, 2).b, "POINT (1 2)"},
		{"point, big-endian", be().geom(1).f64(-1.5, 0.1).b, "POINT (-1.5 0.1)"},
		{"point Z", le().geom(1001).f64(1, 2, 3).b, "POINT Z (1 2 3)"},
		{"point M", le().geom(2001).f64(1, 2, 4).b, "POINT M (1 2 4)"},
		{"point ZM", le().geom(3001).f64(1, 2, 3, 4).b, "POINT ZM (1 2 3 4)"},
		{"point, extended WKB Z with an SRID", le().geom(0xa0000001).u32(4326).f64(1, 2, 3).b, "POINT Z (1 2 3)"},
		{"empty point", le().geom(1).f64(nan, nan).b, "POINT EMPTY"},
		{"extreme coordinates, as JTS writes them", le().geom(1).f64(1e21, 5e-324).b, "POINT (1000000000000000000000 0)"},
		{"a NaN and an infinity", le().geom(1).f64(nan, math.Inf(-1)).b, "POINT (NaN -Inf)"},
		{"line string", le().geom(2).u32(2).f64(0, 0, 1, 1).b, "LINESTRING (0 0, 1 1)"},
		{"empty line string", le().geom(2).u32(0).b, "LINESTRING EMPTY"},
		{"polygon with a hole", square(square(le().geom(3).u32(2))).b,
			"POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0), (0 0, 1 0, 1 1, 0 1, 0 0))"},
		{"empty polygon", le().geom(3).u32(0).b, "POLYGON EMPTY"},
		{"polygon of empty rings", le().geom(3).u32(2).u32(0).u32(0).b, "POLYGON EMPTY"},
		{"polygon with an empty hole", square(le().geom(3).u32(2)).u32(0).b, "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0), EMPTY)"},
		{"multipoint, elements of either byte order", mp.b, "MULTIPOINT ((1 2), (3 4))"},
		{"multilinestring", le().geom(5).u32(2).geom(2).u32(1).f64(1, 2).geom(2).u32(0).b,
			"MULTILINESTRING ((1 2), EMPTY)"},
		{"multipolygon", square(le().geom(6).u32(1).geom(3).u32(1)).b,
			"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)))"},
		{"empty multipolygon", le().geom(6).u32(0).b, "MULTIPOLYGON EMPTY"},
		{"geometry collection", le().geom(1007).u32(2).geom(1001).f64(1, 2, 3).geom(7).u32(0).b,
			"GEOMETRYCOLLECTION Z (POINT Z (1 2 3), GEOMETRYCOLLECTION EMPTY)"},
		{"triangle", le().geom(17).u32(1).u32(4).f64(0, 0, 1, 0, 0, 1, 0, 0).b, "TRIANGLE ((0 0, 1 0, 0 1, 0 0))"},
		{"TIN", le().geom(16).u32(1).geom(17).u32(1).u32(4).f64(0, 0, 1, 0, 0, 1, 0, 0).b, "TIN (((0 0, 1 0, 0 1, 0 0)))"},
		{"polyhedral surface", square(le().geom(15).u32(1).geom(3).u32(1)).b,
			"POLYHEDRALSURFACE (((0 0, 1 0, 1 1, 0 1, 0 0)))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendWKT([]byte("x"), tt.wkb)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			want := `x"` + tt.want + `"`
			if string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if !json.Valid(got[1:]) {
				t.Errorf("not a JSON string: %s", got[1:])
			}
		})
	}
}

// TestAppendWKTDamaged: each damage is an error that leaves the output as
// it came.
func TestAppendWKTDamaged(t *testing.T) {
	deep := le()
	for range maxWKBDepth + 2 {
		deep.geom(7).u32(1)
	}
	deep.geom(1).f64(0, 0)
	tests := []struct {
		name string
		wkb  []byte
		want string
	}{
		{"empty", nil, "truncated geometry header"},
		{"byte order", []byte{2, 1, 0, 0, 0}, "byte order 2"},
		{"unknown type", le().geom(99).b, "geometry type 99"},
		{"unknown dimensions", le().geom(4001).b, "geometry type 4001"},
		{"truncated point", le().geom(1).f64(1).b, "truncated point"},
		{"count past the bytes", le().geom(2).u32(math.MaxUint32).f64(0, 0).b, "4294967295 elements"},
		{"ring count past the bytes", le().geom(3).u32(1 << 30).b, "1073741824 elements"},
		{"collection count past the bytes", le().geom(7).u32(3).geom(1).f64(0, 0).b, "3 elements"},
		{"collection shorter than its count", le().geom(7).u32(2).geom(1).f64(0, 0).b, "truncated geometry header"},
		{"trailing bytes", append(le().geom(1).f64(1, 2).b, 0), "1 bytes after the geometry"},
		{"wrong element type", le().geom(4).u32(1).geom(2).u32(0).b, "a LINESTRING of 2 dimensions among POINTs of 2"},
		{"wrong element dimensions", le().geom(4).u32(1).geom(1001).f64(1, 2, 3).b, "a POINT of 3 dimensions among POINTs of 2"},
		{"nested too deep", deep.b, "nested deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendWKT([]byte("x"), tt.wkb)
			if !errors.Is(err, errWKB) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want errWKB saying %q", err, tt.want)
			}
			if string(got) != "x" {
				t.Errorf("output %q after an error, want it as it came", got)
			}
		})
	}
}

// TestWKTValueIsCorruptFile: a damaged WKB value in a column is the
// reader's corrupt-file error, and the line stays valid JSON.
func TestWKTValueIsCorruptFile(t *testing.T) {
	var s Scratch
	vt := ValueType{Conv: ConvWKT}
	v := ValuesOf(parquet.ByteArrayValue([]byte{1, 1}))
	out := AppendValue(nil, v, 0, &vt, &Options{}, &s)
	if !errors.Is(s.Err, readerr.ErrCorruptFile) || string(out) != "null" {
		t.Errorf("got %q, err %v; want null and readerr.ErrCorruptFile", out, s.Err)
	}
	vt = ValueType{Conv: ConvBase64}
	if out := AppendValue(nil, v, 0, &vt, &Options{BinaryAsString: true}, &s); string(out) != `"AQE="` {
		t.Errorf("WKB as base64: got %s, want \"AQE=\" whatever binaryAsString says", out)
	}
}

// TestAppendCoordinate holds coordinates to what JTS's WKTWriter writes
// for a geometry of the default GeometryFactory (OrdinateFormat with 16
// fraction digits, java.text.DecimalFormat underneath). The expected
// strings are worked out by hand from that algorithm: take the shortest
// decimal that reads back as the double (Double.toString's digits, which
// DecimalFormat takes since JDK-8362612), lay it out without an exponent,
// and if it has more than 16 fraction digits round it there half-even, a
// final 5 rounding the way the double lies from it (the exact expansions
// are in the comments); jtsOrdinate, a model of DecimalFormat, must agree.
func TestAppendCoordinate(t *testing.T) {
	x, y := 0.1, 0.2 // variables: 0.1+0.2 as constants is exactly 0.3
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{1, "1"},
		{-1.5, "-1.5"},
		{math.Pi, "3.141592653589793"},
		{1e-7, "0.0000001"},
		{-1e-7, "-0.0000001"},
		{1e-6, "0.000001"},
		{1e21, "1000000000000000000000"},
		{1e22, "10000000000000000000000"},
		{123456789012345678, "123456789012345680"},          // the double is 123456789012345680; JTS's WKTWriterTest
		{12345678901234567890, "12345678901234567000"},      // shortest digits 12345678901234567, then zeros; JTS's OrdinateFormatTest
		{1e23, "100000000000000000000000"},                  // the double is 99999999999999991611392, its shortest decimal 1e23 (before JDK-8362612, 99999999999999990000000)
		{12345.678, "12345.678"},                            // the digits are rounded, not the double (12345.67799999999988…)
		{x + y, "0.3"},                                      // 0.30000000000000004 at 16 places
		{0.12345678901234568, "0.1234567890123457"},         // 17 fraction digits, the 17th an 8
		{0.00012345678901234567, "0.0001234567890123"},      // 20, cut at a 4
		{1.123456789012345, "1.123456789012345"},            // 15: as it is
		{0.0000000000123456789012345, "0.0000000000123457"}, // OrdinateFormat(16) rounds what DEFAULT (325 places) writes in full
		{1e-16, "0.0000000000000001"},                       // 16 fraction digits: as it is
		{6e-17, "0.0000000000000001"},                       // its first digit is the 17th: 6 rounds up
		{1.5e-16, "0.0000000000000001"},                     // 0.000000000000000149999…: the final 5 is above the double
		{2.5e-16, "0.0000000000000003"},                     // 0.000000000000000250000…019: below the double, so up (not half-even to 2)
		{5e-17, "0"},                                        // 0.0000000000000000499999…
		{0x1p-17, "0.0000076293945312"},                     // 0.00000762939453125 exactly: a tie, half-even keeps the 2
		{1e-17, "0"},
		{-1e-17, "-0"}, // DecimalFormat keeps the sign of a value that rounds to zero
		{5e-324, "0"},
		{math.MaxFloat64, "17976931348623157" + strings.Repeat("0", 292)},
		{-math.MaxFloat64, "-17976931348623157" + strings.Repeat("0", 292)},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Inf"},
		{math.Inf(-1), "-Inf"},
	}
	for _, tt := range tests {
		if got := string(appendCoordinate([]byte("x"), tt.f)); got != "x"+tt.want {
			t.Errorf("%v (%x): got %s, want x%s", tt.f, math.Float64bits(tt.f), got, tt.want)
		}
		if got := jtsOrdinate(tt.f); got != tt.want {
			t.Errorf("%v: the reference writes %s, the table says %s", tt.f, got, tt.want)
		}
	}
}

// TestAppendCoordinateAgainstDecimalFormat holds appendCoordinate to
// jtsOrdinate, a line-by-line model of DecimalFormat, over doubles of every
// magnitude, random digits, and decimals of few digits near 16 places.
func TestAppendCoordinateAgainstDecimalFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 5))
	var fs []float64
	for range 20000 {
		fs = append(fs, math.Float64frombits(rng.Uint64()))
	}
	for range 20000 {
		// Magnitudes from 1e-20 to 1e3, where the rounding happens.
		fs = append(fs, (rng.Float64()-0.5)*math.Pow(10, float64(rng.IntN(24)-20)))
	}
	for range 20000 {
		// Short decimals ending on a 5 at the 17th place and about it.
		m := float64(rng.IntN(2000)*10 + 5)
		fs = append(fs, m*math.Pow(10, float64(-17-rng.IntN(4))), math.Nextafter(m*1e-17, 1), math.Nextafter(m*1e-17, 0))
	}
	for i := range 60 {
		fs = append(fs, math.Ldexp(1, -i), math.Ldexp(3, -i), math.Ldexp(5, -i))
	}
	var b []byte
	for _, f := range fs {
		b = appendCoordinate(b[:0], f)
		if want := jtsOrdinate(f); string(b) != want {
			t.Fatalf("%v (%x): got %s, want %s", f, math.Float64bits(f), b, want)
		}
	}
}

// jtsOrdinate models OrdinateFormat.create(16).format(f) as the JDK's
// DecimalFormat("0") with 16 maximum fraction digits and HALF_EVEN
// rounding computes it (DigitList.set, shouldRoundUp, round; subformat),
// slowly: the digits are the shortest decimal, and whether they were
// rounded up from the double or are exact (FloatingDecimal's
// digitsRoundedUp and decimalDigitsExact) is decided with math/big.
func jtsOrdinate(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	const maxFrac = 16
	neg := math.Signbit(f)
	a := math.Abs(f)
	var digits []byte
	decimalAt := 0 // the value is 0.digits × 10^decimalAt
	roundedUp, exact := false, true
	if a != 0 {
		s := strconv.FormatFloat(a, 'e', -1, 64) // d.ddde±x
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		digits = []byte(strings.Replace(mant, ".", "", 1))
		decimalAt = e + 1
		dec, _ := new(big.Rat).SetString(s)
		switch dec.Cmp(new(big.Rat).SetFloat64(a)) {
		case 1:
			roundedUp, exact = true, false
		case -1:
			exact = false
		}
	}
	shouldRoundUp := func(at int) bool {
		switch {
		case digits[at] > '5':
			return true
		case digits[at] < '5':
			return false
		case at == len(digits)-1:
			if roundedUp {
				return false
			}
			if !exact {
				return true
			}
			return at > 0 && (digits[at-1]-'0')%2 == 1
		}
		for _, d := range digits[at+1:] {
			if d != '0' {
				return true
			}
		}
		return false
	}
	switch {
	case len(digits) == 0:
	case -decimalAt > maxFrac:
		digits = nil
	case -decimalAt == maxFrac:
		if shouldRoundUp(0) {
			digits, decimalAt = []byte{'1'}, decimalAt+1
		} else {
			digits = nil
		}
	default:
		for len(digits) > 1 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
		}
		if keep := maxFrac + decimalAt; keep >= 0 && keep < len(digits) {
			if shouldRoundUp(keep) {
				for {
					keep--
					if keep < 0 {
						digits[0], keep = '1', 0
						decimalAt++
						break
					}
					if digits[keep]++; digits[keep] <= '9' {
						break
					}
				}
				keep++
			}
			digits = digits[:keep]
			for len(digits) > 1 && digits[len(digits)-1] == '0' {
				digits = digits[:len(digits)-1]
			}
		}
	}
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	if decimalAt <= 0 || len(digits) == 0 {
		out.WriteByte('0')
	}
	for i := 0; i < decimalAt && len(digits) > 0; i++ {
		if i < len(digits) {
			out.WriteByte(digits[i])
		} else {
			out.WriteByte('0')
		}
	}
	if len(digits) > max(decimalAt, 0) {
		out.WriteByte('.')
		for i := decimalAt; i < 0; i++ {
			out.WriteByte('0')
		}
		out.Write(digits[max(decimalAt, 0):])
	}
	return out.String()
}

// TestAppendWKTLongestText: the longest WKT for its bytes is a line string
// of the largest doubles, 310 characters for each 8-byte coordinate, a
// space or ", " between them: under 39 bytes for each byte of WKB (the
// bound docs/security.md states), where an exponent took at most 4.
func TestAppendWKTLongestText(t *testing.T) {
	for _, n := range []int{1, 2, 63} {
		w := le().geom(2).u32(uint32(n))
		for range 2 * n {
			w.f64(-math.MaxFloat64)
		}
		out, err := appendWKT(nil, w.b)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 + len("LINESTRING ()") + 2*n*310 + n + 2*(n-1); len(out) != want {
			t.Errorf("%d points: %d bytes of WKT, want %d", n, len(out), want)
		}
		if len(out) > 39*len(w.b) {
			t.Errorf("%d points: %d bytes of WKT for %d bytes of WKB, more than 39 a byte", n, len(out), len(w.b))
		}
	}
}
