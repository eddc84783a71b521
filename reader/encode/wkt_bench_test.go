package encode

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAppendCoordinate writes 1024 coordinates of each kind as JTS
// does: short decimals, full-precision longitudes, full-precision values
// below 1 (17 fraction digits, rounded to 16), and magnitudes past the
// reach of a JSON number's plain notation.
//
//	go test ./reader/encode -run '^$' -bench AppendCoordinate -benchmem
func BenchmarkAppendCoordinate(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []struct {
		name string
		gen  func() float64
	}{
		{"short", func() float64 { return float64(rng.IntN(3600000)-1800000) / 10000 }},
		{"full", func() float64 { return rng.Float64()*360 - 180 }},
		{"below1", func() float64 { return rng.Float64() - 0.5 }},
		{"extreme", func() float64 {
			if rng.IntN(2) == 0 {
				return rng.Float64() * 1e-9
			}
			return rng.Float64() * 1e25
		}},
	}
	for _, k := range kinds {
		fs := make([]float64, 1024)
		for i := range fs {
			fs[i] = k.gen()
		}
		b.Run(k.name, func(b *testing.B) {
			out := make([]byte, 0, 64*len(fs))
			b.ReportAllocs()
			for b.Loop() {
				out = out[:0]
				for _, f := range fs {
					out = appendCoordinate(out, f)
				}
			}
		})
	}
}
