package token

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestUnsplitToken: a split that reads a whole file has no range in its
// token; a range is one short optional field. A token of an earlier
// payload (one without its table) is refused as malformed, whatever its
// version byte says.
func TestUnsplitToken(t *testing.T) {
	s, _ := NewSigner(key(1))
	// Signed with testSplit() and key(1) by an earlier release.
	const before = "AXsidCI6InJvd3MiLCJzIjp7Im0iOiJzMzovL2xha2UvZGIvdC9tZXRhZGF0YS92My5tZXRhZGF0YS5qc29uIiwicyI6NDIsInNjIjoxLCJkIjp7InAiOiJzMzovL2xha2UvZGIvdC9kYXRhL2EucGFycXVldCIsImYiOiJQQVJRVUVUIiwieiI6MTIzNCwibiI6MTB9LCJ4IjpbeyJrIjoicG9zaXRpb24iLCJwIjoiczM6Ly9sYWtlL2RiL3QvZGF0YS9kLnBhcnF1ZXQiLCJmIjoiUEFSUVVFVCIsInoiOjk5LCJuIjoyfSx7ImsiOiJlcXVhbGl0eSIsInAiOiJzMzovL2xha2UvZGIvdC9kYXRhL2UucGFycXVldCIsImYiOiJQQVJRVUVUIiwieiI6OTgsIm4iOjEsImUiOlsxLDJdfSx7ImsiOiJkZWxldGlvbl92ZWN0b3IiLCJwIjoiczM6Ly9sYWtlL2RiL3QvZGF0YS92LnB1ZmZpbiIsImYiOiJQVUZGSU4iLCJ6Ijo3NywibiI6MywibyI6NCwibCI6NDAsInIiOiJzMzovL2xha2UvZGIvdC9kYXRhL2EucGFycXVldCJ9XX19.gR9ZN9zJcgRpbhvj_VeoBb6HU8XbeXJAEiPigLUjJm0"
	if _, err := s.Verify(KindRows, before); !errors.Is(err, ErrMalformedToken) {
		t.Fatalf("a token of an earlier payload: %v, want ErrMalformedToken", err)
	}
	tok, err := s.Sign(KindRows, testSplit())
	if err != nil {
		t.Fatal(err)
	}
	payload, _, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload) // the version byte, then JSON
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"g":`) {
		t.Fatalf("the token of an unsplit file carries a range: %s", raw)
	}

	// A range is one short, optional field of the data file.
	sp := testSplit()
	sp.Data.Range = &RowGroupRange{Start: 0, Length: 600, Records: new(int64(4))}
	got, _ := json.Marshal(sp.Data)
	if want := `"g":{"s":0,"l":600,"n":4}}`; !strings.HasSuffix(string(got), want) {
		t.Fatalf("data file with a range encodes as %s, want it to end in %s", got, want)
	}
	round, err := s.Verify(KindRows, mustSign(t, s, sp))
	if err != nil || round.Data.Range == nil || *round.Data.Range.Records != 4 || round.Data.Range.Length != 600 {
		t.Fatalf("round trip of a range: %+v, %v", round.Data.Range, err)
	}
}

func mustSign(t *testing.T, s *Signer, sp Split) string {
	t.Helper()
	tok, err := s.Sign(KindRows, sp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestRowGroupRange(t *testing.T) {
	const size = 1000
	r := RowGroupRange{Start: 100, Length: 200}
	for _, tc := range []struct {
		start int64
		in    bool
	}{{99, false}, {100, true}, {299, true}, {300, false}, {2000, false}} {
		if got := r.Contains(tc.start, size); got != tc.in {
			t.Errorf("[100, 300) contains a row group at %d: %v, want %v", tc.start, got, tc.in)
		}
	}
	last := RowGroupRange{Start: 800, Length: 200}
	if !last.Contains(1000, size) || !last.Contains(5000, size) || last.Contains(799, size) {
		t.Error("the last range must take every row group from its start on")
	}
	for _, bad := range []RowGroupRange{{-1, 10, nil}, {0, 0, nil}, {900, 101, nil}, {1000, 1, nil}} {
		if bad.Valid(size) {
			t.Errorf("%+v is valid in %d bytes", bad, size)
		}
	}
	if !(RowGroupRange{Start: 0, Length: size}).Valid(size) {
		t.Error("the whole file is not a valid range")
	}
}

// TestRecordCount: a whole file counts its records, a range with a footer
// count counts those, and ranges without one estimate in proportion to
// their bytes, adding up to the file's records.
func TestRecordCount(t *testing.T) {
	s := Split{Data: DataFile{Size: 1000, Records: 7}}
	if n, exact := s.RecordCount(); n != 7 || !exact {
		t.Fatalf("whole file: %d %v", n, exact)
	}
	s.Data.Range = &RowGroupRange{Start: 0, Length: 10, Records: new(int64(3))}
	if n, exact := s.RecordCount(); n != 3 || !exact {
		t.Fatalf("footer count: %d %v", n, exact)
	}
	cuts := []int64{0, 1, 333, 334, 999, 1000}
	var sum int64
	for i := 0; i+1 < len(cuts); i++ {
		s.Data.Range = &RowGroupRange{Start: cuts[i], Length: cuts[i+1] - cuts[i]}
		n, exact := s.RecordCount()
		if exact || n < 0 {
			t.Fatalf("estimate of [%d, %d): %d %v", cuts[i], cuts[i+1], n, exact)
		}
		sum += n
	}
	if sum != 7 {
		t.Fatalf("estimates add up to %d, want 7", sum)
	}
	big := Split{Data: DataFile{Size: 1 << 40, Records: 1 << 40, Range: &RowGroupRange{Start: 1 << 39, Length: 1 << 39}}}
	if n, _ := big.RecordCount(); n != 1<<39 {
		t.Fatalf("large file: %d, want %d", n, int64(1)<<39)
	}
}
