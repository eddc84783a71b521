package handlers

import (
	"testing"
)

// FuzzParseRange: any Range header is parsed into a valid byte range or
// refused with 416, never a panic or a range that ends before it starts.
func FuzzParseRange(f *testing.F) {
	for _, seed := range []string{"", "bytes=0-", "bytes=10-20", "bytes=-5", "bytes=1-2,3-4", "bytes=9223372036854775807-", "items=0-1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		br, ok, err := parseRange(h)
		switch {
		case err != nil:
			if ae := toAPIError(err); ae.Status != 416 {
				t.Fatalf("%q: status %d, want 416", h, ae.Status)
			}
		case ok:
			if br.start < 0 || (br.end >= 0 && br.end < br.start) {
				t.Fatalf("%q parsed to %+v", h, br)
			}
		case h != "":
			t.Fatalf("%q: neither a range nor an error", h)
		}
	})
}
