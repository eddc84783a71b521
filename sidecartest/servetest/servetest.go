// Package servetest wires what the sidecar serves one catalog with, a
// planner over the catalog and a reader, as cmd/sidecar wires them but with
// no HTTP between, for the tests of the domain packages that hold a plan to
// the rows its splits read (handlers' tests cross HTTP). Only tests import
// it.
package servetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// Key signs the tokens of every Replica, so that any of them reads what
// another planned; a test that forges a token as an insider signs with it
// too.
var Key = bytes.Repeat([]byte{7}, 32)

// Replica is one sidecar's planner and reader over a catalog: what the
// routes call (Plan for /splits, Resolve and Source for a token, the
// reader's OpenAll for the rows).
type Replica struct {
	Planner *splits.Planner
	Signer  *token.Signer
	Reader  *reader.Reader
	// DeleteCache is the cache Reader decodes delete files through (nil:
	// none, each split reads its delete files itself).
	DeleteCache *deletes.Cache
}

// New is a Replica over cat, its planner built with opts and counting the
// scans it plans on reg (nil: not exported), its reader with no delete
// cache.
func New(t testing.TB, cat splits.Catalog, reg prometheus.Registerer, opts ...splits.PlannerOption) *Replica {
	t.Helper()
	signer, err := token.NewSigner(Key)
	if err != nil {
		t.Fatal(err)
	}
	p, err := splits.NewPlanner(cat, signer, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &Replica{Planner: p, Signer: signer, Reader: reader.New(nil)}
}

// WithDeleteCache gives r a reader that decodes delete files through a
// delete cache of size bytes, as cmd/sidecar's reader does, and returns r.
func (r *Replica) WithDeleteCache(size int64) *Replica {
	r.DeleteCache = deletes.NewCache(size, nil)
	r.Reader = reader.New(nil, reader.WithDeleteCache(r.DeleteCache))
	return r
}

// Plan plans req, failing the test on an error.
func (r *Replica) Plan(t testing.TB, req splits.Request) splits.Plan {
	t.Helper()
	p, err := r.Planner.Plan(context.Background(), req)
	if err != nil {
		t.Fatalf("plan %s: %v", req.Table, err)
	}
	return p
}

// Parts are the splits a token reads, as the row and file routes find
// them: the token's own, or those its plan reference resolves to.
func (r *Replica) Parts(ctx context.Context, kind token.TokenKind, tok string) ([]token.Split, error) {
	decoded, err := r.Signer.Decode(kind, tok)
	if err != nil {
		return nil, err
	}
	if decoded.Ref == nil {
		return decoded.Parts, nil
	}
	return r.Planner.Resolve(ctx, kind, *decoded.Ref)
}

// Open opens the rows of one split as the rows route does before its
// first byte: the table's FileIO and schema from the planner, then the
// reader.
func (r *Replica) Open(ctx context.Context, parts []token.Split) (*reader.Stream, error) {
	src, err := r.Planner.Source(ctx, parts[0])
	if err != nil {
		return nil, err
	}
	return r.Reader.OpenAll(ctx, src.FS, parts, src.Schema)
}

// Read runs the rows of one split, as the rows route does before and after
// its first byte, and returns the NDJSON it wrote.
func (r *Replica) Read(ctx context.Context, parts []token.Split) ([]byte, error) {
	stream, err := r.Open(ctx, parts)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = stream.Run(ctx, &out, nil)
	if cerr := stream.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close the stream of %s: %w", parts[0].Data.Path, cerr)
	}
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// ReadToken reads the rows of a row token as the rows route streams them.
func (r *Replica) ReadToken(ctx context.Context, tok string) ([]byte, error) {
	parts, err := r.Parts(ctx, token.KindRows, tok)
	if err != nil {
		return nil, err
	}
	return r.Read(ctx, parts)
}

// MustReadToken is ReadToken of a token that must read.
func (r *Replica) MustReadToken(t testing.TB, tok string) []byte {
	t.Helper()
	b, err := r.ReadToken(context.Background(), tok)
	if err != nil {
		t.Fatalf("read a split: %v", err)
	}
	return b
}

// Rows reads every split of a row-path plan, made by any replica, through
// its token on r, in the plan's order, and returns its rows (NDJSONLines).
func (r *Replica) Rows(t testing.TB, p splits.Plan) []string {
	t.Helper()
	if p.Path != splits.PathRows {
		t.Fatalf("the plan of %s takes the %s path, want %s", p.Table, p.Path, splits.PathRows)
	}
	var out []string
	for _, ps := range p.Splits {
		out = append(out, NDJSONLines(t, r.MustReadToken(t, ps.Token))...)
	}
	return out
}

// NDJSONLines splits an NDJSON body into its rows, holding it to NDJSON's
// framing: one JSON object a line, each ended by a newline, no blank line.
func NDJSONLines(t testing.TB, body []byte) []string {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	if body[len(body)-1] != '\n' {
		t.Fatalf("the stream does not end with a newline: %q", body[max(0, len(body)-200):])
	}
	lines := strings.Split(string(body[:len(body)-1]), "\n")
	for _, line := range lines {
		if !strings.HasPrefix(line, "{") || !json.Valid([]byte(line)) {
			t.Fatalf("bad NDJSON line %q", line)
		}
	}
	return lines
}

// SameRows holds two lists of NDJSON rows to the same multiset of values
// (tablegen.CanonicalRows).
func SameRows(t testing.TB, got, want []string) {
	t.Helper()
	g, w := Canonical(t, got), Canonical(t, want)
	if !slices.Equal(g, w) {
		t.Fatalf("rows differ from the oracle\n got (%d): %s\nwant (%d): %s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
}

// Canonical is tablegen.CanonicalRows, failing the test on a row that is
// no JSON object.
func Canonical(t testing.TB, rows []string) []string {
	t.Helper()
	c, err := tablegen.CanonicalRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Metrics is what g gathers, by name and labels as the exposition format
// writes them (sidecar_scans_planned_total{catalog="lake",planner="local"}).
func Metrics(t testing.TB, g prometheus.Gatherer) map[string]float64 {
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
