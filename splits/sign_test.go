package splits

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// signSplit is a split of a table on S3 with deletes delete files beside
// its data file, every fifth one an equality delete.
func signSplit(deletes int) token.Split {
	const dir = "s3://company-lake/warehouse/sales.db/orders/data/event_date=2025-01-31/"
	sp := token.Split{
		Table:            []string{"sales", "orders"},
		Location:         "s3://company-lake/warehouse/sales.db/orders",
		MetadataLocation: "s3://company-lake/warehouse/sales.db/orders/metadata/00123.metadata.json",
		SnapshotID:       8286390426475512101,
		SchemaID:         3,
		Data:             token.DataFile{Path: dir + "00042-7-data.parquet", Format: "PARQUET", Size: 134_217_311, Records: 2_480_117},
	}
	for i := range deletes {
		d := token.DeleteFile{Kind: token.DeletePosition, Path: fmt.Sprintf("%s%05d-deletes.parquet", dir, i), Format: "PARQUET", Size: 4_812, Records: 120}
		if i%5 == 4 {
			d.Kind, d.EqualityIDs = token.DeleteEquality, []int{1}
		}
		sp.Deletes = append(sp.Deletes, d)
	}
	return sp
}

// TestSignAll: the tokens and IDs that signAll gives a plan's splits, in
// parallel runs, are those that Sign and ID give each split on its own,
// and each verifies back to its split; a split that cannot be encoded
// fails the whole plan.
func TestSignAll(t *testing.T) {
	s, err := token.NewSigner(key(1))
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]PlannedSplit, 1500)
	for i := range ps {
		sp := signSplit(i % 11)
		sp.Data.Records = int64(i)
		ps[i] = PlannedSplit{Parts: []token.Split{sp}, Kind: []token.TokenKind{token.KindRows, token.KindFile}[i%2]}
	}
	if err := signAll(s, ps, false); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		want, err := s.Sign(p.Kind, p.Parts...)
		if err != nil {
			t.Fatal(err)
		}
		if p.Token != want || p.ID != token.ID(want) {
			t.Fatalf("split %d: token %q id %q, want %q and %q", i, p.Token, p.ID, want, token.ID(want))
		}
		got, err := s.Verify(p.Kind, p.Token)
		if err != nil || !reflect.DeepEqual(got, p.Parts[0]) {
			t.Fatalf("split %d: Verify gives %+v, %v; want %+v", i, got, err, p.Parts[0])
		}
	}

	bad := signSplit(1)
	bad.Data.Path = "s3://company-lake/\xff.parquet"
	ps[700].Parts = []token.Split{bad}
	if err := signAll(s, ps, false); !errors.Is(err, fault.ErrUnsupported) {
		t.Fatalf("signAll with a non-UTF-8 path: %v, want fault.ErrUnsupported", err)
	}
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
