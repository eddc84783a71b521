package token

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testSplit() Split {
	off, size := int64(4), int64(40)
	return Split{
		Table:            []string{"db", "t"},
		MetadataLocation: "s3://lake/db/t/metadata/v3.metadata.json",
		SnapshotID:       42,
		SchemaID:         1,
		Data:             DataFile{Path: "s3://lake/db/t/data/a.parquet", Format: "PARQUET", Size: 1234, Records: 10},
		Deletes: []DeleteFile{
			{Kind: DeletePosition, Path: "s3://lake/db/t/data/d.parquet", Format: "PARQUET", Size: 99, Records: 2},
			{Kind: DeleteEquality, Path: "s3://lake/db/t/data/e.parquet", Format: "PARQUET", Size: 98, Records: 1, EqualityIDs: []int{1, 2}},
			{Kind: DeleteDeletionVector, Path: "s3://lake/db/t/data/v.puffin", Format: "PUFFIN", Size: 77, Records: 3,
				ContentOffset: &off, ContentSize: &size, ReferencedDataFile: "s3://lake/db/t/data/a.parquet"},
		},
	}
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestTokenRoundTrip(t *testing.T) {
	s, err := NewSigner(key(1))
	if err != nil {
		t.Fatal(err)
	}
	want := testSplit()
	tok, err := s.Sign(KindRows, want)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Sign(KindRows, want)
	if tok != again {
		t.Fatal("signing the same split twice gave two tokens")
	}
	got, err := s.Verify(KindRows, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if _, err := s.Verify(KindFile, tok); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("rows token on the file route: %v, want ErrBadSignature", err)
	}
}

func TestTokenRotation(t *testing.T) {
	old, _ := NewSigner(key(1))
	rotated, _ := NewSigner(key(2), key(1))
	tok, _ := old.Sign(KindFile, testSplit())
	if _, err := rotated.Verify(KindFile, tok); err != nil {
		t.Fatalf("a token of the old key must verify after rotation: %v", err)
	}
	newTok, _ := rotated.Sign(KindFile, testSplit())
	if newTok == tok {
		t.Fatal("the new key must sign")
	}
	if _, err := old.Verify(KindFile, newTok); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("an unknown key's token: %v, want ErrBadSignature", err)
	}
}

func TestTokenTampering(t *testing.T) {
	s, _ := NewSigner(key(1))
	tok, _ := s.Sign(KindRows, testSplit())
	for i := range tok {
		if tok[i] == '.' {
			continue
		}
		b := []byte(tok)
		b[i] ^= 0x01
		_, err := s.Verify(KindRows, string(b))
		if err == nil {
			t.Fatalf("byte %d changed: token still verifies", i)
		}
		if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrMalformedToken) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	for _, bad := range []string{"", ".", "abc", "abc.def", strings.Repeat("A", MaxTokenLength+1), tok + "x"} {
		if _, err := s.Verify(KindRows, bad); !errors.Is(err, ErrMalformedToken) && !errors.Is(err, ErrBadSignature) {
			t.Fatalf("%.20q: %v", bad, err)
		}
	}
}

// TestTokenHasOneSpelling: base64 decoding skips CR and LF even in strict
// mode, so a token with one inserted anywhere (or a space, tab or padding)
// would verify as the same split under another spelling; it is refused as
// malformed.
func TestTokenHasOneSpelling(t *testing.T) {
	s, _ := NewSigner(key(1))
	tok, _ := s.Sign(KindRows, testSplit())
	for _, extra := range []string{"\n", "\r", "\r\n", " ", "\t", "="} {
		for i := range len(tok) + 1 {
			bad := tok[:i] + extra + tok[i:]
			if _, err := s.Verify(KindRows, bad); !errors.Is(err, ErrMalformedToken) {
				t.Fatalf("%q inserted at byte %d: %v", extra, i, err)
			}
		}
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "token.key")
	first, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	second, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) || len(first) != 1 || len(first[0]) != 32 {
		t.Fatal("a restart must read back the same 32-byte key")
	}
	if err := os.WriteFile(path, []byte("zz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(path); err == nil {
		t.Fatal("a key file that is not hex must be refused")
	}
}

func FuzzVerify(f *testing.F) {
	s, _ := NewSigner(key(1))
	tok, _ := s.Sign(KindRows, testSplit())
	f.Add(tok)
	f.Add("a.b")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		sp, err := s.Verify(KindRows, token)
		if err == nil {
			// Anything that verifies must re-sign to itself: only our own
			// tokens pass.
			again, serr := s.Sign(KindRows, sp)
			if serr != nil || again != token {
				t.Fatalf("verified a token we did not sign: %q", token)
			}
			return
		}
		if !errors.Is(err, ErrMalformedToken) && !errors.Is(err, ErrBadSignature) {
			t.Fatalf("unclassified error %v", err)
		}
	})
}

func TestTokenExpiry(t *testing.T) {
	base, _ := NewSigner(key(1))
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	s := base.WithTTL(time.Hour, clock)
	tok, err := s.Sign(KindRows, testSplit())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(KindRows, tok); err != nil {
		t.Fatalf("a fresh token: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Verify(KindRows, tok); err != nil {
		t.Fatalf("a token at its expiry second: %v", err)
	}
	now = now.Add(time.Second)
	if _, err := s.Verify(KindRows, tok); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("an expired token: %v, want ErrTokenExpired", err)
	}
	// The expiry is signed: it cannot be stretched without the key, and a
	// signer without a TTL still honours it.
	if _, err := base.Verify(KindRows, tok); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("a TTL-less signer on an expired token: %v", err)
	}
	forever, _ := base.Sign(KindRows, testSplit())
	if _, err := s.Verify(KindRows, forever); err != nil {
		t.Fatalf("a token without expiry: %v", err)
	}
}
