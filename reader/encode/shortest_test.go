package encode

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// pow10Significand is floor(10^e · 2^(127−floor(log2 10^e))): the 128
// leading bits of 10^e, rounded down. pow10Table holds it plus one.
func pow10Significand(e int) *big.Int {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil)
	if e >= 0 {
		if fl := p.BitLen() - 1; fl <= 127 {
			return p.Lsh(p, uint(127-fl))
		} else {
			return p.Rsh(p, uint(fl-127))
		}
	}
	// 10^e = 1/p, p not a power of two: floor(log2 10^e) = −bitlen(p).
	num := new(big.Int).Lsh(big.NewInt(1), uint(127+p.BitLen()))
	return num.Quo(num, p)
}

func abs(e int) int {
	if e < 0 {
		return -e
	}
	return e
}

// TestPow10Table holds every entry of pow10Table to math/big, and the
// shortcut shortestDouble takes for floor(log2 10^e) to the entry's scale.
func TestPow10Table(t *testing.T) {
	for i, g := range pow10Table {
		e := i + pow10Min
		want := pow10Significand(e)
		if want.BitLen() != 128 {
			t.Fatalf("1e%d: %d bits", e, want.BitLen())
		}
		want.Add(want, big.NewInt(1))
		got := new(big.Int).Lsh(new(big.Int).SetUint64(g[0]), 64)
		got.Or(got, new(big.Int).SetUint64(g[1]))
		if got.Cmp(want) != 0 {
			t.Fatalf("1e%d: %#x, want %#x", e, got, want)
		}
		p := new(big.Float).SetPrec(2000).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil))
		if e < 0 {
			p.Quo(new(big.Float).SetPrec(2000).SetInt64(1), p)
		}
		if fl := p.MantExp(nil) - 1; (e*1741647)>>19 != fl {
			t.Fatalf("1e%d: floor(log2) %d, the shortcut %d", e, fl, (e*1741647)>>19)
		}
	}
	if last := len(pow10Table) - 1 + pow10Min; last != 326 {
		t.Fatalf("the table ends at 1e%d", last)
	}
}

// checkDouble holds appendFloat's form of the double with the given bits
// (fast path and Schubfach) to strconv's, byte for byte.
func checkDouble(t *testing.T, u uint64) {
	t.Helper()
	f := math.Float64frombits(u)
	want := strconvFloat(f, 64)
	if got := appendFloatGeneral(nil, f, 64); !bytes.Equal(got, want) {
		t.Fatalf("double %v (%#x): %s, strconv %s", f, u, got, want)
	}
	if got := appendDouble([]byte("x"), f, &shortTries{}); !bytes.Equal(got[1:], want) {
		t.Fatalf("double %v (%#x) after a byte: %s, strconv %s", f, u, got[1:], want)
	}
}

// TestShortestDouble holds the doubles' formatter to strconv on every
// exponent with the least, greatest and random significands (subnormals,
// the powers of two whose lower neighbour is nearer, the largest finite),
// on ±0, NaN and ±Inf, on the integers and the decimals of few digits and
// their neighbours, and on random bits. -short draws fewer; .ci/run's
// FuzzShortestDouble draws many more.
func TestShortestDouble(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := 50
	if testing.Short() {
		random = 10
	}
	for exp := range uint64(0x7ff) {
		for _, mant := range []uint64{0, 1, 2, 3, 1<<52 - 1, 1<<52 - 2, 1 << 51} {
			for _, sign := range []uint64{0, 1 << 63} {
				checkDouble(t, sign|exp<<52|mant)
			}
		}
		for range random {
			checkDouble(t, exp<<52|rng.Uint64()&(1<<52-1))
		}
	}
	for _, u := range []uint64{0x7ff << 52, 0xfff << 52, 0x7ff8000000000001, 1 << 63} {
		checkDouble(t, u)
	}
	for e := -325; e <= 310; e++ {
		p := math.Pow10(e)
		for _, x := range []float64{p, 2 * p, 5 * p, 9.999999999999999 * p, 1.2345 * p} {
			u := math.Float64bits(x)
			checkDouble(t, u)
			checkDouble(t, u+1)
			checkDouble(t, u-1)
		}
	}
	for m := range int64(1 << 14) {
		for k := range 9 {
			d := float64(m) / math.Pow10(k)
			checkDouble(t, math.Float64bits(d))
			checkDouble(t, math.Float64bits(d)+1)
		}
		checkDouble(t, math.Float64bits(float64(m<<39+m)))
	}
	for range 100 * random * 10 {
		checkDouble(t, rng.Uint64())
	}
}

// FuzzShortestDouble holds appendFloat's form of any 64 bits as a double
// to strconv's, byte for byte.
func FuzzShortestDouble(f *testing.F) {
	for _, u := range []uint64{0, 1, 1 << 52, 0x7fefffffffffffff, 0x7ff0000000000000, 0x7ff8000000000001,
		1 << 63, math.Float64bits(0.1), math.Float64bits(1e21), math.Float64bits(1e-6), math.Float64bits(123456.789)} {
		f.Add(u)
	}
	f.Fuzz(checkDouble)
}
