package reader

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
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
