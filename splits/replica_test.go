package splits_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// The tests of package splits_test hold a plan to the rows it reads: a
// planner, and the reader that reads its tokens, wired as cmd/sidecar wires
// one catalog's (the HTTP routes in between are handlers' tests).

// testKey signs the tokens of every replica of these tests, so that any of
// them reads what another planned.
var testKey = bytes.Repeat([]byte{7}, 32)

// replica is one sidecar's planner and reader over a catalog.
type replica struct {
	planner *splits.Planner
	signer  *token.Signer
	reader  *reader.Reader
}

// newReplica is a replica over cat, its planner built with opts, counting
// the scans it plans on reg (nil: not exported).
func newReplica(t testing.TB, cat splits.Catalog, reg prometheus.Registerer, opts ...splits.PlannerOption) *replica {
	t.Helper()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := splits.NewPlanner(cat, signer, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &replica{planner: p, signer: signer, reader: reader.New(nil)}
}

// localReplica is a replica over the local warehouse dir.
func localReplica(t testing.TB, dir string, opts ...splits.PlannerOption) *replica {
	t.Helper()
	return newReplica(t, catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: dir}), nil, opts...)
}

// plan plans req, failing the test on an error.
func (r *replica) plan(t testing.TB, req splits.Request) splits.Plan {
	t.Helper()
	p, err := r.planner.Plan(context.Background(), req)
	if err != nil {
		t.Fatalf("plan %s: %v", req.Table, err)
	}
	return p
}

// parts are the splits a token reads, as the row and file routes find
// them: the token's own, or those its plan reference resolves to.
func (r *replica) parts(ctx context.Context, kind token.TokenKind, tok string) ([]token.Split, error) {
	decoded, err := r.signer.Decode(kind, tok)
	if err != nil {
		return nil, err
	}
	if decoded.Ref == nil {
		return decoded.Parts, nil
	}
	return r.planner.Resolve(ctx, kind, *decoded.Ref)
}

// read reads the rows of a row token as the rows route streams them.
func (r *replica) read(ctx context.Context, tok string) ([]byte, error) {
	parts, err := r.parts(ctx, token.KindRows, tok)
	if err != nil {
		return nil, err
	}
	return r.readParts(ctx, parts)
}

// readParts reads the rows of splits.
func (r *replica) readParts(ctx context.Context, parts []token.Split) (_ []byte, err error) {
	src, err := r.planner.Source(ctx, parts[0])
	if err != nil {
		return nil, err
	}
	stream, err := r.reader.OpenAll(ctx, src.FS, parts, src.Schema)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := stream.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close the stream of %s: %w", parts[0].Data.Path, cerr)
		}
	}()
	var out bytes.Buffer
	if err := stream.Run(ctx, &out, func() error { return nil }); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// mustRead is read of a token that must read.
func (r *replica) mustRead(t testing.TB, tok string) []byte {
	t.Helper()
	b, err := r.read(context.Background(), tok)
	if err != nil {
		t.Fatalf("read a split: %v", err)
	}
	return b
}

// rows reads every split of a row-path plan, made by any replica, through
// r, in the plan's order.
func (r *replica) rows(t testing.TB, p splits.Plan) []string {
	t.Helper()
	if p.Path != splits.PathRows {
		t.Fatalf("plan of %s on the %s path, want the row path to read", p.Table, p.Path)
	}
	var out []string
	for _, ps := range p.Splits {
		out = append(out, ndjsonLines(t, r.mustRead(t, ps.Token))...)
	}
	return out
}

// ndjsonLines splits an NDJSON body into its rows, checking the framing:
// every line one JSON object, `\n`-terminated, no blank line.
func ndjsonLines(t testing.TB, body []byte) []string {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	if body[len(body)-1] != '\n' {
		t.Fatalf("the stream does not end with a newline: %q", tail(body))
	}
	lines := strings.Split(string(body[:len(body)-1]), "\n")
	for _, line := range lines {
		if line == "" || line[0] != '{' || !json.Valid([]byte(line)) {
			t.Fatalf("bad NDJSON line %q", line)
		}
	}
	return lines
}

// tail is the end of b, for messages.
func tail(b []byte) []byte {
	return b[max(0, len(b)-200):]
}

// assertSameRows compares two lists of NDJSON rows as multisets of values
// (tablegen.CanonicalRows).
func assertSameRows(t testing.TB, got, want []string) {
	t.Helper()
	g, w := canonical(t, got), canonical(t, want)
	if !slices.Equal(g, w) {
		t.Fatalf("rows differ from the oracle\n got (%d): %s\nwant (%d): %s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
}

// canonical is tablegen.CanonicalRows, failing the test on a row that is
// no JSON object.
func canonical(t testing.TB, rows []string) []string {
	t.Helper()
	c, err := tablegen.CanonicalRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// metrics is what g gathers, by name and labels as the exposition format
// writes them (sidecar_scans_planned_total{catalog="lake",planner="local"}).
func metrics(t testing.TB, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := f.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			out[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}
