package splits_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// TestReferenceTokens: a table of many small files with deletes packs into
// splits whose tokens stay short (they name the split in its plan); a
// second replica with the same key and other packing defaults reads every
// token byte for byte as the planner does; the rows are the oracle's; and
// a reference to a plan that planning again does not give is
// ErrPlanMismatch (the rows route's 409 plan_mismatch), never other rows.
func TestReferenceTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Snappy (ReadOnlyTable): neither the packing nor the references
	// depend on the codec.
	const files = 80 // the table the internal tests of references plan
	tbl, dir := splits.BenchTable(t, files)
	want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	a := localReplica(t, dir, splits.WithTargetSplitSize(80_000))
	b := localReplica(t, dir, splits.WithTargetSplitSize(1), splits.WithMaxSplitFiles(1))
	p := a.Plan(t, splits.Request{Table: "ns.t"})
	if p.Path != splits.PathRows || len(p.Splits) < 2 || len(p.Splits) >= files {
		t.Fatalf("plan %s with %d splits of %d files", p.Path, len(p.Splits), files)
	}
	var got []string
	for i, s := range p.Splits {
		// The rows route's URI is the token and 13 bytes around it
		// beside the host: within the 2 KiB that Druid's http
		// inputSource and proxies take.
		if len(s.Token) > token.MaxShortToken {
			t.Fatalf("split %d has a token of %d bytes", i, len(s.Token))
		}
		bodyA, errA := a.ReadToken(ctx, s.Token)
		bodyB, errB := b.ReadToken(ctx, s.Token)
		if errA != nil || errB != nil || !bytes.Equal(bodyA, bodyB) {
			t.Fatalf("split %d: the planner reads %d bytes (%v), the other replica %d bytes (%v)", i, len(bodyA), errA, len(bodyB), errB)
		}
		got = append(got, servetest.NDJSONLines(t, bodyA)...)
	}
	servetest.SameRows(t, got, want)

	tok, err := a.Signer.Decode(token.KindRows, p.Splits[0].Token)
	if err != nil || tok.Ref == nil {
		t.Fatalf("the first split is not a plan reference: %v", err)
	}
	ref := *tok.Ref
	ref.Fingerprint = bytes.Repeat([]byte{1}, token.FingerprintSize)
	forged, err := a.Signer.SignRef(token.KindRows, ref)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []*servetest.Replica{a, b} {
		body, err := r.ReadToken(ctx, forged)
		if !errors.Is(err, splits.ErrPlanMismatch) || !strings.Contains(fmt.Sprint(err), "plan again") || body != nil {
			t.Fatalf("replica %d, a reference to another plan: %d bytes, %v; want ErrPlanMismatch saying to plan again", i, len(body), err)
		}
	}
}
