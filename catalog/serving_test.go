package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// servingKey signs the tokens of the planners the tests wire; a test that
// forges a token as an insider would signs with it too.
var servingKey = bytes.Repeat([]byte{7}, 32)

// served is a catalog as the sidecar serves it (cmd/sidecar wires the
// same): the catalog, a planner over it and a reader, with no HTTP between
// them. The tests here call what the routes call: Plan for /splits,
// Source and the FileIO for /files, Source and Reader.OpenAll for the rows.
type served struct {
	Cat     *catalog.Catalog
	Planner *splits.Planner
	Reader  *reader.Reader
	Signer  *token.Signer
}

// newServed opens the catalog of cfg (closed when the test ends) and wires
// a planner and a reader over it.
func newServed(t testing.TB, cfg catalog.Config, opts ...catalog.Option) served {
	t.Helper()
	signer, err := token.NewSigner(servingKey)
	if err != nil {
		t.Fatal(err)
	}
	cat := catalogtest.Open(t, cfg, opts...)
	planner, err := splits.NewPlanner(cat, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	return served{Cat: cat, Planner: planner, Reader: reader.New(nil), Signer: signer}
}

// plan plans req and fails the test on an error.
func (s served) plan(t testing.TB, req splits.Request) splits.Plan {
	t.Helper()
	p, err := s.Planner.Plan(context.Background(), req)
	if err != nil {
		t.Fatalf("plan %s: %v", req.Table, err)
	}
	return p
}

// read runs the rows of one split, as the rows route does before and
// after its first byte, and returns the NDJSON it wrote.
func (s served) read(ctx context.Context, parts []token.Split) ([]byte, error) {
	src, err := s.Planner.Source(ctx, parts[0])
	if err != nil {
		return nil, err
	}
	st, err := s.Reader.OpenAll(ctx, src.FS, parts, src.Schema)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = st.Run(ctx, &out, nil)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return out.Bytes(), err
}

// rows reads every split of a row-path plan and returns its rows, holding
// each split to NDJSON's framing: one JSON object a line, each ended by
// a newline, no blank line.
func (s served) rows(t testing.TB, p splits.Plan) []string {
	t.Helper()
	if p.Path != splits.PathRows {
		t.Fatalf("the plan of %s takes the %s path, want %s", p.Table, p.Path, splits.PathRows)
	}
	var lines []string
	for i, ps := range p.Splits {
		if len(ps.Parts) == 0 {
			t.Fatalf("split %d of %s has no parts", i, p.Table)
		}
		out, err := s.read(context.Background(), ps.Parts)
		if err != nil {
			t.Fatalf("read split %d of %s: %v", i, p.Table, err)
		}
		if len(out) == 0 {
			continue
		}
		if out[len(out)-1] != '\n' {
			t.Fatalf("split %d of %s does not end with a newline", i, p.Table)
		}
		for line := range strings.SplitSeq(string(out[:len(out)-1]), "\n") {
			if !strings.HasPrefix(line, "{") || !json.Valid([]byte(line)) {
				t.Fatalf("split %d of %s: bad NDJSON line %q", i, p.Table, line)
			}
			lines = append(lines, line)
		}
	}
	return lines
}

// sameRows holds two lists of NDJSON rows to the same multiset of values
// (tablegen.CanonicalRows).
func sameRows(t testing.TB, got, want []string) {
	t.Helper()
	g, err := tablegen.CanonicalRows(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tablegen.CanonicalRows(want)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g, w) {
		t.Fatalf("rows differ from the oracle\n got (%d): %s\nwant (%d): %s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
}
