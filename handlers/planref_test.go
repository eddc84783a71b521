package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// TestReferenceTokens: a table of many small files with deletes packs into
// splits whose URIs stay short (their tokens name the split in its plan);
// a second sidecar with the same key and other packing defaults serves
// every URI byte for byte as the planner does; the rows are the oracle's;
// and a reference to a plan that planning again does not give is a 409
// plan_mismatch, never other rows.
func TestReferenceTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	// Snappy: neither the packing nor the references depend on the codec.
	tbl, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"ref", "t"}, 6000, 60, 0.02, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	a := splittingServer(t, dir, splits.WithTargetSplitSize(80_000))
	b := splittingServer(t, dir, splits.WithTargetSplitSize(1), splits.WithMaxSplitFiles(1))
	p := a.plan(t, q("table", "ref.t"))
	if p.Mode != "v2" || len(p.Splits) < 2 || len(p.Splits) >= 60 {
		t.Fatalf("plan %s with %d splits of 60 files", p.Mode, len(p.Splits))
	}
	var got []string
	var first string
	for _, s := range p.Splits {
		if len(s.URI) > 2048 {
			t.Fatalf("a URI of %d bytes", len(s.URI))
		}
		path := strings.TrimPrefix(s.URI, a.URL)
		respA, bodyA := a.get(t, path)
		respB, bodyB := b.get(t, path)
		if respA.StatusCode != http.StatusOK || respB.StatusCode != http.StatusOK || !bytes.Equal(bodyA, bodyB) {
			t.Fatalf("%s: the planner answers %d with %d bytes, the other sidecar %d with %d bytes",
				path, respA.StatusCode, len(bodyA), respB.StatusCode, len(bodyB))
		}
		got = append(got, ndjsonLines(t, bodyA)...)
		if first == "" {
			first = path
		}
	}
	assertSameRows(t, got, want)

	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signer.Decode(token.KindRows, strings.TrimSuffix(strings.TrimPrefix(first, "/splits/"), "/rows"))
	if err != nil || tok.Ref == nil {
		t.Fatalf("the first split is not a plan reference: %v", err)
	}
	ref := *tok.Ref
	ref.Fingerprint = bytes.Repeat([]byte{1}, token.FingerprintSize)
	forged, err := signer.SignRef(token.KindRows, ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*testServer{a, b} {
		resp, body := srv.get(t, "/splits/"+forged+"/rows")
		if resp.StatusCode != http.StatusConflict || errorCode(t, body) != "plan_mismatch" || !strings.Contains(string(body), "plan again") {
			t.Fatalf("a reference to another plan: %d %s", resp.StatusCode, body)
		}
	}
}
