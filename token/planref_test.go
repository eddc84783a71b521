package token

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// TestPlanRefTokens: a reference token comes back as signed, is short
// whatever the split holds, and is checked like any token: its kind, its
// expiry, its signature; a reference no plan could have is malformed.
func TestPlanRefTokens(t *testing.T) {
	s, _ := NewSigner(key(1))
	fp := bytes.Repeat([]byte{7}, FingerprintSize)
	ref := PlanRef{Catalog: "lake", Table: []string{"sales", "orders"}, MetadataLocation: realisticSplit(0).MetadataLocation, SnapshotID: 8286390426475512101,
		Options: json.RawMessage(`{"t":"sales.orders","sc":3,"ts":1073741824,"mf":1000}`), Index: 17, Count: 64, Fingerprint: fp}
	tok, err := s.SignRef(KindRows, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) > MaxShortToken {
		t.Fatalf("a reference token is %d bytes, more than %d", len(tok), MaxShortToken)
	}
	got, err := s.Decode(KindRows, tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Parts != nil || got.Ref == nil || !reflect.DeepEqual(*got.Ref, ref) {
		t.Fatalf("round trip: %+v, want %+v", got.Ref, ref)
	}
	if _, err := s.Decode(KindFile, tok); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a rows reference on the file route: %v", err)
	}
	if _, err := s.Verify(KindRows, tok); !errors.Is(err, fault.ErrUnsupported) {
		t.Fatalf("Verify of a reference: %v, want fault.ErrUnsupported", err)
	}
	other, _ := NewSigner(key(2))
	if _, err := other.Decode(KindRows, tok); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("another key's reference: %v", err)
	}
	now := time.Unix(1_700_000_000, 0)
	expiring := s.WithTTL(time.Minute, func() time.Time { return now })
	etok, _ := expiring.SignRef(KindRows, ref)
	now = now.Add(2 * time.Minute)
	if _, err := expiring.Decode(KindRows, etok); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("an expired reference: %v", err)
	}
	for name, bad := range map[string]func(*PlanRef){
		"index past count": func(r *PlanRef) { r.Index = r.Count },
		"no splits":        func(r *PlanRef) { r.Count, r.Index = 0, 0 },
		"short print":      func(r *PlanRef) { r.Fingerprint = fp[:4] },
		"no metadata":      func(r *PlanRef) { r.MetadataLocation = "" },
		"no table":         func(r *PlanRef) { r.Table = nil },
	} {
		r := ref
		bad(&r)
		if _, err := s.SignRef(KindRows, r); err == nil {
			t.Errorf("%s: signed", name)
		}
		// Signed by hand, as a forger with the key (or a buggy release)
		// would: refused as malformed.
		payload, _ := json.Marshal(claims{Kind: KindRows, Ref: &r})
		forged := s.signPayload(append([]byte{tokenVersion}, payload...))
		if _, err := s.Decode(KindRows, forged); !errors.Is(err, ErrMalformedToken) {
			t.Errorf("%s: %v, want ErrMalformedToken", name, err)
		}
	}
}

// TestFingerprint: the fingerprint of a plan changes with any change to
// any of its splits, to their order, to how they are packed, or to the
// kind; and is the same for the same plan.
func TestFingerprint(t *testing.T) {
	a, b := realisticSplit(2), realisticSplit(3)
	b.Data.Path += ".2"
	base := [][]Split{{a, b}, {a}}
	print := func(kind TokenKind, splits [][]Split) string {
		t.Helper()
		fp, err := Fingerprint(kind, splits)
		if err != nil {
			t.Fatal(err)
		}
		if len(fp) != FingerprintSize {
			t.Fatalf("fingerprint of %d bytes", len(fp))
		}
		return string(fp)
	}
	want := print(KindRows, base)
	if print(KindRows, [][]Split{{a, b}, {a}}) != want {
		t.Fatal("the same plan has two fingerprints")
	}
	moved := a
	moved.Data.Range = &RowGroupRange{Start: 4, Length: 10}
	filtered := a
	filtered.Filter = json.RawMessage(`true`)
	for name, other := range map[string][][]Split{
		"order":    {{b, a}, {a}},
		"packing":  {{a}, {b, a}},
		"a range":  {{a, b}, {moved}},
		"a filter": {{a, b}, {filtered}},
		"a split":  {{a, b}},
	} {
		if print(KindRows, other) == want {
			t.Errorf("%s changed, the fingerprint did not", name)
		}
	}
	if print(KindFile, base) == want {
		t.Error("the kind changed, the fingerprint did not")
	}
}
