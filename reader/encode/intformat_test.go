package encode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAppendIntMatchesStrconv(t *testing.T) {
	check := func(v int64) {
		t.Helper()
		prefix := []byte(`{"a":`)
		if got, want := string(appendInt(prefix, v)), string(strconv.AppendInt(prefix, v, 10)); got != want {
			t.Fatalf("appendInt(%d) = %s, want %s", v, got, want)
		}
		if got, want := string(appendUint(prefix[:0:0], uint64(v))), strconv.FormatUint(uint64(v), 10); got != want {
			t.Fatalf("appendUint(%d) = %s, want %s", uint64(v), got, want)
		}
	}
	for _, v := range []int64{0, 1, -1, 9, 10, 11, 99, 100, 101, 999, 1000, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		check(v)
	}
	// Every power of ten and its neighbours, where the digit count turns.
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1, 10*p - 1} {
			check(v)
			check(-v)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		v := int64(r.Uint64())
		check(v >> r.IntN(64))
	}
	if got := string(appendUint(nil, math.MaxUint64)); got != "18446744073709551615" {
		t.Fatalf("appendUint(MaxUint64) = %s", got)
	}
}

func BenchmarkAppendInt(b *testing.B) {
	values := []int64{7, 42, 12345, -98765, 1_700_000_000_000, math.MinInt64}
	buf := make([]byte, 0, 256)
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, v := range values {
				buf = appendInt(buf, v)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, v := range values {
				buf = strconv.AppendInt(buf, v, 10)
			}
		}
	})
}

// TestAppendPaddedMatchesFmt holds the padded digit writers to fmt's
// zero-padded %d at every width from 0 to 20, on the powers of ten and
// their neighbours and on random values of every length.
func TestAppendPaddedMatchesFmt(t *testing.T) {
	check := func(v uint64) {
		t.Helper()
		for width := range 21 {
			if got, want := string(appendPaddedUint([]byte("x"), v, width)), fmt.Sprintf("x%0*d", width, v); got != want {
				t.Fatalf("appendPaddedUint(%d, %d) = %s, want %s", v, width, got, want)
			}
		}
	}
	for p := uint64(1); p <= math.MaxUint64/10; p *= 10 {
		check(p - 1)
		check(p)
		check(p + 1)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20_000 {
		check(r.Uint64() >> r.IntN(64))
	}
}

// TestAppendISOMatchesTime holds the ISO timestamps of years 0 to 9999 to
// time's layout, the form appendISO writes for the years beyond, at 6 and
// 9 fraction digits, on the first and last second of the days where
// civil's arithmetic turns: in every year of the range, January 1, the
// last day of February, March 1 (civil's years, and its 4-, 100- and
// 400-year cycles, start on March 1) and December 31; in every year from
// 1900 to 2100 (century years leap and not), the first and last day of
// every month; every day of 1999 to 2001 (every day of every month, in
// common and leap years); and random instants. This deterministic sweep
// covers every boundary the daily sweep of 1900 to 2100 and the sweep of
// every 31st day over the range that it replaces did, at a quarter of
// their checks.
func TestAppendISOMatchesTime(t *testing.T) {
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	check := func(sec, nsec int64) {
		t.Helper()
		for _, digits := range []int{6, 9} {
			layout := "2006-01-02T15:04:05." + strings.Repeat("0", digits) + "Z07:00"
			want := `"` + time.Unix(sec, nsec).UTC().Format(layout) + `"`
			if got := string(appendISO(nil, sec, nsec, digits)); got != want {
				t.Fatalf("appendISO(%d, %d, %d) = %s, want %s", sec, nsec, digits, got, want)
			}
		}
	}
	day := func(y int, m time.Month, d int) {
		sec := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()
		check(sec, 0)
		check(sec+86399, 999_999_999)
	}
	for y := range 10_000 {
		day(y, time.January, 1)
		day(y, time.March, 0) // the last day of February
		day(y, time.March, 1)
		day(y, time.December, 31)
	}
	for y := 1900; y <= 2100; y++ {
		for m := time.January; m <= time.December; m++ {
			day(y, m, 1)
			day(y, m+1, 0)
		}
	}
	for d := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= 2001; d = d.AddDate(0, 0, 1) {
		day(d.Year(), d.Month(), d.Day())
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 20_000 {
		check(first+r.Int64N(last-first+1), r.Int64N(1e9))
	}
}
