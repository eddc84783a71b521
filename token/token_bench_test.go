package token

import (
	"fmt"
	"testing"
)

// BenchmarkSign and BenchmarkVerify measure one token of a realistic split
// (see realisticSplit) with 0 and with 10 delete files:
//
//	go test -run '^$' -bench 'Sign|Verify' -benchmem ./token/
func BenchmarkSign(b *testing.B) {
	s, _ := NewSigner(key(1))
	for _, n := range []int{0, 10} {
		sp := realisticSplit(n)
		b.Run(fmt.Sprintf("deletes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var tok string
			for b.Loop() {
				var err error
				if tok, err = s.Sign(KindRows, sp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tok)), "token-bytes")
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	s, _ := NewSigner(key(1))
	for _, n := range []int{0, 10} {
		tok, err := s.Sign(KindRows, realisticSplit(n))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("deletes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Verify(KindRows, tok); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tok)), "token-bytes")
		})
	}
}
