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
// 9 fraction digits: the first and last second of every day of the years
// 1900 to 2100 and of every 31st day over the whole range (so every day of
// the week and of the month, in every year), and random instants.
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
	days := func(from, to, step int64) {
		for day := from; day <= to; day += step {
			check(day, 0)
			check(day+86399, 999_999_999)
		}
	}
	days(first, last, 31*86400)
	days(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2100, 12, 31, 0, 0, 0, 0, time.UTC).Unix(), 86400)
	r := rand.New(rand.NewPCG(7, 8))
	for range 20_000 {
		check(first+r.Int64N(last-first+1), r.Int64N(1e9))
	}
}
