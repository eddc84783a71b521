package encode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// WKB to WKT. Iceberg's geometry and geography values are stored as
// Well-Known Binary (ISO WKB, as the Parquet GEOMETRY and GEOGRAPHY logical
// types define it), and served as Well-Known Text in the layout of JTS and
// go-geom: "POINT (1 2)", "LINESTRING Z (0 0 1, 1 1 2)", "POINT EMPTY",
// "MULTIPOINT ((1 2), (3 4))", "GEOMETRYCOLLECTION (POINT (1 2), …)".
// Coordinates are written as JTS's WKTWriter writes them (see
// appendCoordinate): plain decimals, never an exponent, at most 16
// fraction digits; so a coordinate takes at most 310 characters for its 8
// bytes (the largest double has 309 digits).
//
// The encoder is its own validator: nothing is allocated, every count is
// held to the bytes left before it is looped over, nesting is bounded, and
// a value must end where its geometry does. So a damaged value costs time
// and output linear in its bytes, and is an error rather than text.

// errWKB marks a value that is not well-formed WKB.
var errWKB = errors.New("malformed WKB")

// maxWKBDepth bounds the nesting of geometry collections.
const maxWKBDepth = 64

// The WKB geometry codes (ISO 13249-3, OGC 06-103r4).
const (
	wkbPoint              = 1
	wkbLineString         = 2
	wkbPolygon            = 3
	wkbMultiPoint         = 4
	wkbMultiLineString    = 5
	wkbMultiPolygon       = 6
	wkbGeometryCollection = 7
	wkbPolyhedralSurface  = 15
	wkbTIN                = 16
	wkbTriangle           = 17
)

var wkbNames = map[uint32]string{
	wkbPoint: "POINT", wkbLineString: "LINESTRING", wkbPolygon: "POLYGON", wkbMultiPoint: "MULTIPOINT",
	wkbMultiLineString: "MULTILINESTRING", wkbMultiPolygon: "MULTIPOLYGON", wkbGeometryCollection: "GEOMETRYCOLLECTION",
	wkbPolyhedralSurface: "POLYHEDRALSURFACE", wkbTIN: "TIN", wkbTriangle: "TRIANGLE",
}

// appendWKT appends the WKT of the WKB value raw as a JSON string. On an
// error b is returned as it came.
func appendWKT(b, raw []byte) ([]byte, error) {
	start := len(b)
	w := wkbReader{raw: raw}
	b = append(b, '"')
	b, err := w.geometry(b, 0)
	if err == nil && w.pos != len(raw) {
		err = fmt.Errorf("%w: %d bytes after the geometry", errWKB, len(raw)-w.pos)
	}
	if err != nil {
		return b[:start], err
	}
	return append(b, '"'), nil
}

// wkbReader reads one WKB value.
type wkbReader struct {
	raw []byte
	pos int
	be  bool // the byte order of the geometry being read
}

// left is the number of bytes not read yet.
func (w *wkbReader) left() int { return len(w.raw) - w.pos }

func (w *wkbReader) uint32() (uint32, error) {
	if w.left() < 4 {
		return 0, fmt.Errorf("%w: truncated at byte %d", errWKB, w.pos)
	}
	p := w.raw[w.pos : w.pos+4]
	w.pos += 4
	if w.be {
		return binary.BigEndian.Uint32(p), nil
	}
	return binary.LittleEndian.Uint32(p), nil
}

// count reads a count of elements of at least min bytes each, held to the
// bytes left.
func (w *wkbReader) count(min int) (int, error) {
	n, err := w.uint32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(min) > uint64(w.left()) {
		return 0, fmt.Errorf("%w: %d elements of at least %d bytes in the %d bytes left at byte %d", errWKB, n, min, w.left(), w.pos)
	}
	return int(n), nil
}

func (w *wkbReader) float64At(i int) float64 {
	p := w.raw[i : i+8]
	if w.be {
		return math.Float64frombits(binary.BigEndian.Uint64(p))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p))
}

// header reads a geometry's byte order and type: its base code (1-17) and
// the number of its dimensions (2 to 4, with m telling whether the last is
// M). ISO codes carry Z and M as +1000, +2000 and +3000; the extended WKB
// of PostGIS as the high bits, with an SRID after the type, which is
// skipped.
func (w *wkbReader) header() (code uint32, dims int, m bool, err error) {
	if w.left() < 5 {
		return 0, 0, false, fmt.Errorf("%w: truncated geometry header at byte %d", errWKB, w.pos)
	}
	switch w.raw[w.pos] {
	case 0:
		w.be = true
	case 1:
		w.be = false
	default:
		return 0, 0, false, fmt.Errorf("%w: byte order %d at byte %d", errWKB, w.raw[w.pos], w.pos)
	}
	w.pos++
	t, _ := w.uint32()
	z, m := t&0x80000000 != 0, t&0x40000000 != 0
	if t&0x20000000 != 0 {
		if _, err := w.uint32(); err != nil {
			return 0, 0, false, err
		}
	}
	t &^= 0xe0000000
	switch t / 1000 {
	case 1:
		z = true
	case 2:
		m = true
	case 3:
		z, m = true, true
	case 0:
	default:
		return 0, 0, false, fmt.Errorf("%w: geometry type %d", errWKB, t)
	}
	code = t % 1000
	if _, ok := wkbNames[code]; !ok {
		return 0, 0, false, fmt.Errorf("%w: geometry type %d", errWKB, t)
	}
	dims = 2
	if z {
		dims++
	}
	if m {
		dims++
	}
	return code, dims, m, nil
}

// geometry appends the WKT of the geometry at pos, nested depth deep in
// geometry collections.
func (w *wkbReader) geometry(b []byte, depth int) ([]byte, error) {
	if depth > maxWKBDepth {
		return b, fmt.Errorf("%w: geometries nested deeper than %d", errWKB, maxWKBDepth)
	}
	code, dims, m, err := w.header()
	if err != nil {
		return b, err
	}
	b = append(b, wkbNames[code]...)
	b = append(b, ' ')
	switch {
	case dims == 4:
		b = append(b, "ZM "...)
	case dims == 3 && m:
		b = append(b, "M "...)
	case dims == 3:
		b = append(b, "Z "...)
	}
	switch code {
	case wkbPoint, wkbLineString, wkbPolygon, wkbTriangle:
		return w.body(b, code, dims)
	}
	// The collections: each element a whole WKB geometry of its own, of at
	// least 9 bytes (an empty line string's).
	n, err := w.count(9)
	if err != nil {
		return b, err
	}
	if n == 0 {
		return append(b, "EMPTY"...), nil
	}
	var elem uint32
	switch code {
	case wkbMultiPoint:
		elem = wkbPoint
	case wkbMultiLineString:
		elem = wkbLineString
	case wkbMultiPolygon, wkbPolyhedralSurface:
		elem = wkbPolygon
	case wkbTIN:
		elem = wkbTriangle
	default:
		elem = wkbGeometryCollection
	}
	b = append(b, '(')
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		if elem == wkbGeometryCollection {
			b, err = w.geometry(b, depth+1)
		} else {
			b, err = w.element(b, elem, dims)
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, ')'), nil
}

// element appends one element of a multi-geometry, which WKT spells
// without its type: "(1 2)" for a point, "((0 0, …))" for a polygon. It
// must be of the collection's element type and dimensions.
func (w *wkbReader) element(b []byte, want uint32, wantDims int) ([]byte, error) {
	code, dims, _, err := w.header()
	if err != nil {
		return b, err
	}
	if code != want || dims != wantDims {
		return b, fmt.Errorf("%w: a %s of %d dimensions among %ss of %d", errWKB, wkbNames[code], dims, wkbNames[want], wantDims)
	}
	return w.body(b, code, dims)
}

// body appends the coordinates of a point, line string, polygon or
// triangle, after its header.
func (w *wkbReader) body(b []byte, code uint32, dims int) ([]byte, error) {
	switch code {
	case wkbPoint:
		if w.left() < 8*dims {
			return b, fmt.Errorf("%w: truncated point at byte %d", errWKB, w.pos)
		}
		// An empty point is all NaN (WKB has no count for a point).
		empty := true
		for i := range dims {
			if !math.IsNaN(w.float64At(w.pos + 8*i)) {
				empty = false
			}
		}
		if empty {
			w.pos += 8 * dims
			return append(b, "EMPTY"...), nil
		}
		b = append(b, '(')
		b = w.coords(b, dims)
		return append(b, ')'), nil
	case wkbLineString:
		return w.points(b, dims)
	default:
		return w.rings(b, dims)
	}
}

// coords appends one position of dims coordinates, which the caller held
// to the bytes left.
func (w *wkbReader) coords(b []byte, dims int) []byte {
	for i := range dims {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendCoordinate(b, w.float64At(w.pos))
		w.pos += 8
	}
	return b
}

// points appends a counted list of positions: "(0 0, 1 1)", or EMPTY.
func (w *wkbReader) points(b []byte, dims int) ([]byte, error) {
	n, err := w.count(8 * dims)
	if err != nil {
		return b, err
	}
	if n == 0 {
		return append(b, "EMPTY"...), nil
	}
	b = append(b, '(')
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = w.coords(b, dims)
	}
	return append(b, ')'), nil
}

// rings appends a polygon's counted list of rings, each a list of
// positions of at least 4 bytes (its count). A polygon whose rings are all
// empty is empty, as JTS and go-geom have it.
func (w *wkbReader) rings(b []byte, dims int) ([]byte, error) {
	n, err := w.count(4)
	if err != nil {
		return b, err
	}
	empty := 0
	for empty < n && w.countAt(w.pos+4*empty) == 0 {
		empty++
	}
	if empty == n {
		w.pos += 4 * n
		return append(b, "EMPTY"...), nil
	}
	b = append(b, '(')
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		if b, err = w.points(b, dims); err != nil {
			return b, err
		}
	}
	return append(b, ')'), nil
}

// countAt reads the count at byte i, which the caller held to the bytes.
func (w *wkbReader) countAt(i int) uint32 {
	if w.be {
		return binary.BigEndian.Uint32(w.raw[i:])
	}
	return binary.LittleEndian.Uint32(w.raw[i:])
}

// wktFractionDigits is the most fraction digits JTS writes: WKTWriter's
// OrdinateFormat.create(PrecisionModel.getMaximumSignificantDigits()),
// which is 16 for the FLOATING precision model of a default
// GeometryFactory (Sedona's, for one).
const wktFractionDigits = 16

// appendCoordinate appends one coordinate as JTS's WKTWriter writes it
// (org.locationtech.jts.io.OrdinateFormat, which formats with
// java.text.DecimalFormat("0") and at most 16 fraction digits): the
// shortest decimal that reads back as the same double, laid out in plain
// notation however large or small (1e21 as
// "1000000000000000000000", 1e-7 as "0.0000001"); rounded half-even to 16
// fraction digits where it has more (0.1+0.2 as "0.3", 1e-17 as "0");
// a negative value that rounds to zero, and -0, as "-0"; NaN and the
// infinities as "NaN", "Inf" and "-Inf".
//
// DecimalFormat rounds the shortest digits, not the binary value, so
// 12345.678 stays "12345.678" where rounding its exact value to 16
// places would not. Only a magnitude below 1 can have more than 16
// fraction digits (a double's shortest decimal has at most 17 significant
// ones); those are rounded on the digits, but for a 5 that is their last
// digit, where DecimalFormat asks which side of it the double lies
// (digitsRoundedUp, decimalDigitsExact): rounding the exact value with
// strconv answers the same.
//
// The shortest decimal is what DecimalFormat starts from since
// JDK-8362612 gave it Double.toString's digits; before it, the JDK's
// older FloatingDecimal gives a longer decimal of the same double for
// rare doubles (7.3879e20 as "738790000000000100000", 1e23 as
// "99999999999999990000000"), which this does not reproduce.
func appendCoordinate(b []byte, f float64) []byte {
	a := math.Abs(f)
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	case a < 4e-17:
		// Rounds to zero at 16 places (anything below 5e-17 does), with
		// the sign DecimalFormat keeps.
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	case a >= 1e21 || a < 1e-6:
		// Where appendFloat would write an exponent.
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	default:
		b = appendFloat(b, f, 64)
	}
	if a >= 1 {
		return b
	}
	// Written as "0.ddd" or "-0.ddd": find the point.
	dot := len(b) - 1
	for b[dot] != '.' {
		dot--
	}
	cut := dot + 1 + wktFractionDigits // the first digit dropped
	if cut >= len(b) {
		return b
	}
	switch {
	case b[cut] == '5' && cut == len(b)-1:
		start := dot - 1 // the integer digit, 0
		if f < 0 {
			start--
		}
		b = strconv.AppendFloat(b[:start], f, 'f', wktFractionDigits, 64)
	case b[cut] >= '5':
		// Round up: carry through the nines; the integer digit is 0, so
		// the carry stops there at the latest.
		b = b[:cut]
		for i := cut - 1; ; i-- {
			if b[i] == '.' {
				continue
			}
			if b[i] < '9' {
				b[i]++
				break
			}
			b[i] = '0'
		}
	default:
		b = b[:cut]
	}
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	return b
}
