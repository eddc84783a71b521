package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// splittingServer serves the local warehouse dir with a planner built with
// opts, such as one that cuts the data files larger than a target size by
// row groups.
func splittingServer(t testing.TB, dir string, opts ...splits.PlannerOption) *testServer {
	t.Helper()
	cfg := sidecatalog.Config{Type: "local", Warehouse: dir}
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, cfg, nil, func(c *handlers.Config) {
		c.Catalogs = []handlers.Catalog{sidecartest.PlannerCatalog(t, cfg, nil, signer, opts...)}
	})
}

// rangedPlan is the part of GET /splits' answer about split files.
type rangedPlan struct {
	Mode   string `json:"mode"`
	Splits []struct {
		URI                  string `json:"uri"`
		DataFile             string `json:"dataFile"`
		RecordCount          int64  `json:"recordCount"`
		RecordCountEstimated bool   `json:"recordCountEstimated"`
		Range                *struct {
			Start  int64 `json:"start"`
			Length int64 `json:"length"`
		} `json:"range"`
	} `json:"splits"`
}

func (s *testServer) rangedPlan(t *testing.T, query string) (rangedPlan, []byte) {
	t.Helper()
	resp, body := s.get(t, "/splits?"+query)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /splits?%s: %d %s", query, resp.StatusCode, body)
	}
	var p rangedPlan
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	return p, body
}

// TestRowGroupSplits: with a small target split size, a table's large data
// files are served as several splits each, described as api/openapi.yaml
// says; each split answers Range requests, and a Druid-like client that
// breaks connections assembles the same bytes; the status page counts each
// split's deleted rows. (That the splits' rows are iceberg-go's, and each
// file's splits in order its unsplit rows, is splits' TestRowGroupSplits.)
func TestRowGroupSplits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	// One file (or range of one) a split.
	splitting := splittingServer(t, dir, splits.WithTargetSplitSize(4000), splits.WithMaxSplitFiles(1))
	doc := loadSpec(t)
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tablegen.RowGroupsVariants() {
		t.Run(tc.Name, func(t *testing.T) {
			if _, err := tablegen.RowGroups(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"rg", tc.Name}, tc.FormatVersion, tc.Offsets); err != nil {
				t.Fatal(err)
			}
			query := "table=rg." + tc.Name
			p, body := splitting.rangedPlan(t, query)
			// A range's record count is estimated from the manifests'
			// split offsets, and read from the footers without them.
			ranged := 0
			for _, s := range p.Splits {
				if s.Range != nil {
					ranged++
					if s.RecordCountEstimated != (tc.Offsets != tablegen.SplitOffsetsNone) {
						t.Fatalf("split of %s: range %v, estimated %v", s.DataFile, s.Range, s.RecordCountEstimated)
					}
				}
			}
			if p.Mode != "v2" || ranged < 2 {
				t.Fatalf("plan %s with %d splits, %d of them ranges; want the row path with several splits per large file",
					p.Mode, len(p.Splits), ranged)
			}
			validatePlan(t, router, splitting.URL+"/splits?"+query, body)

			// Range requests and retries, per split.
			d := &druidClient{c: splitting.Client(), rnd: rand.New(rand.NewPCG(uint64(tc.FormatVersion), uint64(tc.Offsets))), cutsLeft: 30}
			for _, s := range p.Splits {
				path := strings.TrimPrefix(s.URI, splitting.URL)
				resp, clean := splitting.get(t, path)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d %s", s.URI, resp.StatusCode, clean)
				}
				if n := len(clean) / 2; n > 0 {
					resp, part := splitting.get(t, path, "Range", fmt.Sprintf("bytes=%d-", n))
					if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, clean[n:]) ||
						!strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", n)) {
						t.Fatalf("GET %s from byte %d: %d %q, %d bytes; want 206 and the last %d bytes",
							path, n, resp.StatusCode, resp.Header.Get("Content-Range"), len(part), len(clean)-n)
					}
				}
				if got := d.read(t, s.URI); !bytes.Equal(got, clean) {
					t.Fatalf("%s: the Druid-like client assembled %d bytes, a clean read has %d", path, len(got), len(clean))
				}
			}
			if d.cuts < 10 {
				t.Fatalf("only %d connections were cut; the test wants at least 10", d.cuts)
			}

			// The status page counts each split's deleted rows.
			resp, page := splitting.get(t, "/?table=rg."+tc.Name+"&counts=1")
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "row groups in bytes 0–") {
				t.Fatalf("status page: %d\n%s", resp.StatusCode, page)
			}
		})
	}
}

// validatePlan holds an answer of GET /splits against api/openapi.yaml.
func validatePlan(t *testing.T, router routers.Router, url string, body []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, url, nil)
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatal(err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 http.StatusOK,
		Header:                 http.Header{"Content-Type": {"application/json"}},
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in.SetBodyBytes(body)); err != nil {
		t.Fatalf("the plan breaks api/openapi.yaml: %v", err)
	}
}
