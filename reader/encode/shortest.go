package encode

import (
	"math"
	"math/bits"
)

// shortestDouble returns the shortest decimal s·10^k that reads back as the
// finite f > 0, the one nearest f if several are that short, the even one on
// a tie: the digits strconv.FormatFloat(f, 'e', -1, 64) writes, which it
// finds with Ryū. This is Schubfach (Raffaello Giulietti, "The Schubfach
// way to render doubles", 2020; the algorithm of OpenJDK's
// jdk.internal.math.DoubleToDecimal, which Java's Double.toString uses), in
// the form with 128-bit powers of ten and no minimum of two digits: it
// scales f and the ends of its rounding interval by one power of ten,
// rounded to odd, and picks among the at most two candidates of the first
// length that fits, without a loop over digits. s may end in zeros.
func shortestDouble(f float64) (s uint64, k int) {
	const (
		mantBits = 52
		bias     = 1075 // 1023 + mantBits
	)
	u := math.Float64bits(f)
	mant := u & (1<<mantBits - 1)
	exp := int(u >> mantBits & 0x7ff)
	c := mant
	q := 1 - bias
	if exp != 0 {
		c |= 1 << mantBits
		q = exp - bias
		// An integer below 2^53: its own digits.
		if q <= 0 && q > -mantBits-1 && c&(1<<-q-1) == 0 {
			return c >> -q, 0
		}
	}
	even := c&1 == 0
	// The float below is nearer than the one above at a power of two.
	closer := mant == 0 && exp > 1
	cbl := 4*c - 2
	if closer {
		cbl++
	}
	cb, cbr := 4*c, 4*c+2
	// k = floor(log10(2^q)), or floor(log10(3/4·2^q)) when closer.
	kk := q * 1262611
	if closer {
		kk -= 524031
	}
	k = kk >> 22
	h := q + (-k*1741647)>>19 + 1 // q + floor(log2(10^-k)) + 1, 1 to 4
	g := &pow10Table[-k-pow10Min]
	vbl := roundToOdd(g, cbl<<h)
	vb := roundToOdd(g, cb<<h)
	vbr := roundToOdd(g, cbr<<h)
	lower, upper := vbl, vbr
	if !even {
		lower++
		upper--
	}
	s = vb / 4
	if s >= 10 {
		// One digit fewer, if a decimal of that length is in the interval.
		sp := s / 10
		upIn := lower <= 40*sp
		wpIn := 40*sp+40 <= upper
		if upIn != wpIn {
			if wpIn {
				sp++
			}
			return sp, k + 1
		}
	}
	uIn := lower <= 4*s
	wIn := 4*s+4 <= upper
	if uIn != wIn {
		if wIn {
			s++
		}
		return s, k
	}
	mid := 4*s + 2
	if vb > mid || vb == mid && s&1 != 0 {
		s++
	}
	return s, k
}

// roundToOdd returns the top 64 bits of the 192-bit g·cp, their lowest bit
// set if any bit below them is (rounded to odd); g exceeds its power of
// ten by at most one, which adds at most one to the bits below.
func roundToOdd(g *[2]uint64, cp uint64) uint64 {
	xHi, _ := bits.Mul64(g[1], cp)
	yHi, yLo := bits.Mul64(g[0], cp)
	y0, carry := bits.Add64(yLo, xHi, 0)
	y1 := yHi + carry
	if y0 > 1 {
		y1 |= 1
	}
	return y1
}

// appendShortestDouble appends the finite f ≠ 0 as appendFloatGeneral does
// for a double: the digits of shortestDouble laid out as strconv's 'f' form
// from 1e-6 to 1e21, its 'e' form with the exponent's leading zero dropped
// (as encoding/json writes it) beyond.
func appendShortestDouble(b []byte, f float64) []byte {
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	s, k := shortestDouble(f)
	for s%10 == 0 {
		s /= 10
		k++
	}
	start := len(b)
	b = appendUint(b, s)
	n := len(b) - start
	e := k + n - 1 // the exponent of the first digit
	if f < 1e-6 || f >= 1e21 {
		if n > 1 {
			b = append(b, 0)
			copy(b[start+2:], b[start+1:start+n])
			b[start+1] = '.'
		}
		if e < 0 {
			return appendUint(append(b, 'e', '-'), uint64(-e))
		}
		return appendUint(append(b, 'e', '+'), uint64(e))
	}
	switch {
	case k >= 0:
		// An integer: zeros follow the digits.
		return append(b, zeros[:k]...)
	case e >= 0:
		// The point goes after the first e+1 digits.
		b = append(b, 0)
		p := start + e + 1
		copy(b[p+1:], b[p:start+n])
		b[p] = '.'
		return b
	}
	// "0.", -e-1 zeros, the digits.
	shift := 1 - e
	b = append(b, zeros[:shift]...)
	copy(b[start+shift:], b[start:start+n])
	copy(b[start:start+shift], zeros[:shift])
	b[start+1] = '.'
	return b
}
