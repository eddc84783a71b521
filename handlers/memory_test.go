package handlers_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// memoryServer serves the fixture f with plans and delete files drawing on
// budget, one decoded delete file bounded by deleteBound, as cmd/sidecar
// wires them. Every data file is a split of its own, so that a split's
// delete files load before its first byte.
func memoryServer(t *testing.T, f fixture, budget *memory.Budget, deleteBound int64) *testServer {
	t.Helper()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sidecatalog.Config{Type: "static", Tables: map[string]string{"fixtures.t": filepath.Join(f.Dir, f.Metadata)}}
	cache := deletes.NewCache(testDeleteCacheSize, nil)
	budget.OnPressure(cache.Reclaim)
	c := sidecartest.PlannerCatalog(t, cfg, f.mappings(), signer, splits.WithMemoryBudget(budget), splits.WithTargetSplitSize(0))
	c.Rows = reader.New(nil, reader.WithDeleteCache(cache), reader.WithMemory(budget, deleteBound, "--max-delete-memory"))
	s := newServerWithCache(t, cfg, f.mappings(), 0, func(hc *handlers.Config) { hc.Catalogs = []handlers.Catalog{c} })
	s.cache = cache
	return s
}

// equalityFixture has 3 data files and equality delete files.
const equalityFixture = "impala__iceberg_v2_delete_equality"

// TestMemoryBudgetAnswers holds plans and row streams to the memory rule:
// a plan admitted by its snapshot's data files (PlanBytesPerFile each), a
// delete file by what it decodes. What must wait for others is a 503 with
// Retry-After, what can never fit a 422 that names the memory it needs; a
// request's memory is given back when it ends.
func TestMemoryBudgetAnswers(t *testing.T) {
	t.Parallel()
	f := namedFixture(t, equalityFixture)
	const files = 3
	need := int64(files * splits.PlanBytesPerFile)
	table := q("table", "fixtures.t", "mode", "rows")

	t.Run("a plan larger than the budget", func(t *testing.T) {
		t.Parallel()
		s := memoryServer(t, f, memory.NewBudget(need-1, "the memory budget (the test's)", nil), 0)
		resp, body := s.get(t, "/splits?"+table.Encode())
		if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "memory_exceeded" ||
			!strings.Contains(string(body), "its 3 data files need 12 KiB to plan") || !strings.Contains(string(body), "the memory budget (the test's)") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})

	t.Run("busy, then free", func(t *testing.T) {
		t.Parallel()
		budget := memory.NewBudget(1<<30, "the memory budget", nil)
		s := memoryServer(t, f, budget, 0)
		others, err := budget.Reserve(memory.Plan, 1<<30-need+1, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		resp, body := s.get(t, "/splits?"+table.Encode())
		if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, body) != "memory_busy" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("a plan while others hold the budget: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
		others.Release()
		p := s.plan(t, table)
		if bs := budget.Stats(); bs.Used != 0 || bs.Peak < need {
			t.Fatalf("after the plan the budget holds %d (peak %d): the request must give its %d back", bs.Used, bs.Peak, need)
		}

		// A row stream whose delete files do not fit while others hold
		// the budget: 503, and nothing written.
		others, err = budget.Reserve(memory.Plan, 1<<30-16, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		resp, body = s.get(t, withDeletes(t, s, p))
		if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, body) != "memory_busy" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("rows while others hold the budget: %d %s", resp.StatusCode, body)
		}
		others.Release()
		if lines := s.rows(t, p); len(lines) != f.Expected.RowCount {
			t.Fatalf("%d rows, want %d", len(lines), f.Expected.RowCount)
		}
		if bs, cs := budget.Stats(), s.cache.Stats(); bs.Used <= 0 || bs.Used > cs.Bytes || bs.ByKind[memory.Plan] != 0 {
			t.Errorf("after the streams the budget holds %+v, the cache %d bytes: want only the cached delete files", bs, cs.Bytes)
		}
	})

	t.Run("a delete file past its bound", func(t *testing.T) {
		t.Parallel()
		s := memoryServer(t, f, memory.NewBudget(1<<30, "the memory budget", nil), 8)
		p := s.plan(t, table)
		resp, body := s.get(t, withDeletes(t, s, p))
		if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "memory_exceeded" ||
			!strings.Contains(string(body), "equality delete file") || !strings.Contains(string(body), "8 bytes, --max-delete-memory") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
}

// withDeletes is the path of the first split of p with an equality delete
// file.
func withDeletes(t *testing.T, s *testServer, p plan) string {
	t.Helper()
	for _, sp := range p.Splits {
		if sp.EqualityDeleteFiles > 0 {
			return strings.TrimPrefix(sp.URI, s.URL)
		}
	}
	t.Fatal("no split with an equality delete file")
	return ""
}
