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
		c.Catalogs = []handlers.Catalog{plannerCatalog(t, cfg, nil, signer, opts...)}
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
// files are served as several splits each, and the union of their rows is
// iceberg-go's ReadTasks rows: positional deletes (or v3 deletion vectors)
// spread over the row groups and an equality delete apply in every range,
// no row is lost or served twice, whether the ranges come from the
// manifests' split offsets, from the footers, or from split offsets that
// disagree with the files. The splits of one file, read in order, are byte
// for byte the file's unsplit rows; each answers Range requests and a
// Druid-like client that breaks connections assembles the same bytes.
func TestRowGroupSplits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	// One file (or range of one) a split, so that each split's rows are
	// those of one file's range.
	splitting := splittingServer(t, dir, splits.WithTargetSplitSize(4000), splits.WithMaxSplitFiles(1))
	whole := splittingServer(t, dir, splits.WithTargetSplitSize(0))
	doc := loadSpec(t)
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		version int
		offsets tablegen.SplitOffsets
	}{
		{"v2_split_offsets", 2, tablegen.SplitOffsetsKept},
		{"v2_footer", 2, tablegen.SplitOffsetsNone},
		{"v2_skewed_split_offsets", 2, tablegen.SplitOffsetsSkewed},
		{"v3_split_offsets", 3, tablegen.SplitOffsetsKept},
		{"v3_footer", 3, tablegen.SplitOffsetsNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := tablegen.RowGroups(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"rg", tc.name}, tc.version, tc.offsets)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(tablegen.RowGroupsLiveIDs()) {
				t.Fatalf("the oracle gives %d rows, want %d", len(want), len(tablegen.RowGroupsLiveIDs()))
			}
			query := "table=rg." + tc.name
			p, body := splitting.rangedPlan(t, query)
			unsplit, _ := whole.rangedPlan(t, query)
			if p.Mode != "v2" || len(unsplit.Splits) != 3 || len(p.Splits) <= len(unsplit.Splits)+1 {
				t.Fatalf("plan %s with %d splits (%d unsplit); want the row path with several splits per large file",
					p.Mode, len(p.Splits), len(unsplit.Splits))
			}
			validatePlan(t, router, splitting.URL+"/splits?"+query, body)

			// The union of the rows of every split is the oracle's.
			var got []string
			bodies := map[string][]byte{}
			records := map[string]int64{}
			parts := map[string]int{}
			for _, s := range p.Splits {
				resp, b := splitting.get(t, strings.TrimPrefix(s.URI, splitting.URL))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d %s", s.URI, resp.StatusCode, b)
				}
				got = append(got, ndjsonLines(t, b)...)
				bodies[s.DataFile] = append(bodies[s.DataFile], b...)
				records[s.DataFile] += s.RecordCount
				parts[s.DataFile]++
				if parts[s.DataFile] > 1 || s.Range != nil {
					if s.Range == nil || s.RecordCountEstimated != (tc.offsets != tablegen.SplitOffsetsNone) {
						t.Fatalf("split of %s: range %v, estimated %v", s.DataFile, s.Range, s.RecordCountEstimated)
					}
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows from the splits, the oracle has %d", len(got), len(want))
			}
			assertSameRows(t, got, want)

			// Each file's splits in order are its unsplit rows, and their
			// record counts add up to the file's.
			for _, s := range unsplit.Splits {
				resp, b := whole.get(t, strings.TrimPrefix(s.URI, whole.URL))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d", s.URI, resp.StatusCode)
				}
				if !bytes.Equal(bodies[s.DataFile], b) {
					t.Fatalf("%s: its %d splits give\n%s\nunsplit:\n%s", s.DataFile, parts[s.DataFile], bodies[s.DataFile], b)
				}
				if records[s.DataFile] != s.RecordCount || s.Range != nil || s.RecordCountEstimated {
					t.Fatalf("%s: record counts of its splits add up to %d, want %d", s.DataFile, records[s.DataFile], s.RecordCount)
				}
			}

			// Range requests and retries, per split.
			d := &druidClient{c: splitting.Client(), rnd: rand.New(rand.NewPCG(uint64(tc.version), uint64(tc.offsets))), cutsLeft: 30}
			for _, s := range p.Splits {
				path := strings.TrimPrefix(s.URI, splitting.URL)
				_, clean := splitting.get(t, path)
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
			resp, page := splitting.get(t, "/?table=rg."+tc.name+"&counts=1")
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
