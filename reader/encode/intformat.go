package encode

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

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10).
func appendInt(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	return appendUint(b, u)
}

// appendUint appends u in decimal, as strconv.AppendUint(b, u, 10). It cuts
// u into runs of 8 digits with one 64-bit division each and writes a run
// from 32-bit halves, so that the divisions of a run's digit pairs do not
// wait on each other as they do in a loop that peels two digits at a time.
func appendUint(b []byte, u uint64) []byte {
	if u < 1e8 {
		return appendUpTo8(b, uint32(u))
	}
	if u < 1e16 {
		return append8(appendUpTo8(b, uint32(u/1e8)), uint32(u%1e8))
	}
	mid := u % 1e16
	b = appendUpTo8(b, uint32(u/1e16))
	return append8(append8(b, uint32(mid/1e8)), uint32(mid%1e8))
}

// appendUpTo8 appends v < 1e8 in decimal, without leading zeros.
func appendUpTo8(b []byte, v uint32) []byte {
	if v < 1e4 {
		return appendUpTo4(b, v)
	}
	return append4(appendUpTo4(b, v/1e4), v%1e4)
}

// appendUpTo4 appends v < 1e4 in decimal, without leading zeros.
func appendUpTo4(b []byte, v uint32) []byte {
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, twoDigits[2*v], twoDigits[2*v+1])
	case v < 1000:
		h, l := v/100, v%100
		return append(b, byte('0'+h), twoDigits[2*l], twoDigits[2*l+1])
	}
	return append4(b, v)
}

// append4 appends v < 1e4 as exactly 4 digits.
func append4(b []byte, v uint32) []byte {
	h, l := v/100, v%100
	return append(b, twoDigits[2*h], twoDigits[2*h+1], twoDigits[2*l], twoDigits[2*l+1])
}

// append8 appends v < 1e8 as exactly 8 digits.
func append8(b []byte, v uint32) []byte {
	hi, lo := v/1e4, v%1e4
	h1, h2, l1, l2 := hi/100, hi%100, lo/100, lo%100
	return append(b,
		twoDigits[2*h1], twoDigits[2*h1+1], twoDigits[2*h2], twoDigits[2*h2+1],
		twoDigits[2*l1], twoDigits[2*l1+1], twoDigits[2*l2], twoDigits[2*l2+1])
}

// append2 appends v < 100 as exactly 2 digits.
func append2(b []byte, v uint32) []byte {
	return append(b, twoDigits[2*v], twoDigits[2*v+1])
}

// append6 appends v < 1e6 as exactly 6 digits.
func append6(b []byte, v uint32) []byte {
	return append4(append2(b, v/1e4), v%1e4)
}

// appendPaddedUint appends v with at least width digits.
func appendPaddedUint(b []byte, v uint64, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for v >= 10 || width > 1 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	i--
	buf[i] = byte('0' + v)
	return append(b, buf[i:]...)
}
