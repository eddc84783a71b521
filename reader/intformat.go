package reader

import "math/bits"

// The integers of the row stream are written by appendInt and appendUint,
// which put the digits straight into the row's buffer: strconv formats
// into a buffer of its own and copies, and integers are most of the
// values of a typical row (ids, counts, dates, timestamps).

// twoDigits holds "00" to "99".
const twoDigits = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow10 holds 10^0 to 10^19.
var pow10 = [20]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// digitCount is the number of decimal digits of u (1 for 0).
func digitCount(u uint64) int {
	// bits.Len64 gives the digits to within one: 1233/4096 ≈ log10(2).
	n := (bits.Len64(u) * 1233) >> 12
	if n < len(pow10) && u >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10).
func appendInt(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	return appendUint(b, u)
}

// appendUint appends u in decimal, as strconv.AppendUint(b, u, 10).
func appendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	n := digitCount(u)
	start := len(b)
	if cap(b)-start < n {
		b = append(b, make([]byte, n)...)
	} else {
		b = b[:start+n]
	}
	i := start + n
	for u >= 100 {
		q := u / 100
		r := u - q*100
		i -= 2
		b[i], b[i+1] = twoDigits[2*r], twoDigits[2*r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		b[i], b[i+1] = twoDigits[2*u], twoDigits[2*u+1]
	} else {
		i--
		b[i] = byte('0' + u)
	}
	return b
}
