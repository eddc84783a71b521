package handlers_test

import (
	"context"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// pausingCatalog is a catalog whose tables, once armed, pause the first
// manifest read (after the plan was admitted): entered is closed when
// it is reached, and the read goes on once release is closed.
type pausingCatalog struct {
	*sidecatalog.Catalog
	armed            atomic.Bool
	entered, release chan struct{}
}

func (c *pausingCatalog) TableAt(ctx context.Context, ident []string, location string) (*table.Table, error) {
	tbl, err := c.Catalog.TableAt(ctx, ident, location)
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (icebergio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return pausingIO{IO: fsys, c: c}, nil
	}, nil), nil
}

type pausingIO struct {
	icebergio.IO
	c *pausingCatalog
}

func (p pausingIO) Open(name string) (icebergio.File, error) {
	base := path.Base(name)
	if strings.HasSuffix(base, ".avro") && !strings.HasPrefix(base, "snap-") && p.c.armed.CompareAndSwap(true, false) {
		close(p.c.entered)
		<-p.c.release
	}
	return p.IO.Open(name)
}

// replanServer serves the warehouse dir as a replica that has planned
// nothing yet (a restart), its plans drawing on a budget of capacity.
func replanServer(t *testing.T, dir string, capacity int64) (*testServer, *pausingCatalog, *memory.Budget) {
	t.Helper()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sidecatalog.Config{Type: "local", Warehouse: dir}
	cat := &pausingCatalog{Catalog: catalogtest.Open(t, cfg), entered: make(chan struct{}), release: make(chan struct{})}
	var budget *memory.Budget
	srv := newServer(t, cfg, nil, func(c *handlers.Config) {
		// The budget's metrics go on the server's registry, which
		// exists only once the server is wired.
		budget = memory.NewBudget(capacity, "the test's budget", registererOf(c))
		planner, err := splits.NewPlanner(cat, signer, nil, splits.WithMemoryBudget(budget), splits.WithTargetSplitSize(80_000))
		if err != nil {
			t.Fatal(err)
		}
		c.Catalogs = []handlers.Catalog{wireCatalog(cat.Catalog, planner, reader.New(nil))}
	})
	return srv, cat, budget
}

// TestHostileReplanMemory: a plan-reference token's stream plans its
// snapshot again on a replica that has not cached the plan (after a
// restart), and the stream routes had no memory scope, so the replan's
// reservation was given back the moment it was made: 12 concurrent
// streams planned a 40,000-file table 12 times at once with
// sidecar_memory_reserved_bytes{kind="plan"} at 0, where 12 GET /splits
// got 11 503 memory_busy. A replan now holds its reservation until it is
// done, so a second replan that does not fit beside it is a 503
// memory_busy, as a second GET /splits is.
func TestHostileReplanMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if _, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"ref", "t"}, 3000, 30, 0.02, 0.01); err != nil {
		t.Fatal(err)
	}
	planner := splittingServer(t, dir, splits.WithTargetSplitSize(80_000))
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	// Two plans of the one snapshot, each with a reference token.
	var paths []string
	for _, minSplits := range []string{"2", "3"} {
		p := planner.plan(t, q("table", "ref.t", "minSplits", minSplits))
		path := strings.TrimPrefix(p.InputSource.URIs[0], planner.URL)
		tok, err := signer.Decode(token.KindRows, strings.TrimSuffix(strings.TrimPrefix(path, "/splits/"), "/rows"))
		if err != nil || tok.Ref == nil {
			t.Fatalf("the first split of minSplits=%s is not a plan reference: %v", minSplits, err)
		}
		paths = append(paths, path)
	}

	// What one replan reserves, on a replica with room for any.
	probe, _, probeBudget := replanServer(t, dir, 1<<30)
	if resp, body := probe.get(t, paths[0]); resp.StatusCode != http.StatusOK {
		t.Fatalf("a replan with room: %d %.300s", resp.StatusCode, body)
	}
	need := probeBudget.Stats().Peak
	if need < 30*splits.PlanBytesPerFile {
		t.Fatalf("a replan of 30 data files reserved %d bytes, want at least %d", need, 30*splits.PlanBytesPerFile)
	}

	// A replica with room for one replan: the first pauses while it
	// plans, and holds its reservation meanwhile.
	srv, pc, budget := replanServer(t, dir, need*3/2)
	pc.armed.Store(true)
	var wg sync.WaitGroup
	var first *http.Response
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, _ = srv.get(t, paths[0])
	}()
	select {
	case <-pc.entered:
	case <-time.After(time.Minute):
		t.Fatal("the first replan never read a manifest")
	}
	reserved := metricValue(t, srv, "sidecar_memory_reserved_bytes", "kind", "plan")
	resp, body := srv.get(t, paths[1])
	close(pc.release)
	wg.Wait()
	if reserved != float64(need) {
		t.Errorf("sidecar_memory_reserved_bytes{kind=\"plan\"} while a replan plans: %v, want its %d bytes", reserved, need)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, body) != "memory_busy" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a second replan beside one that holds the budget: %d %.300s, want 503 memory_busy with Retry-After", resp.StatusCode, body)
	}
	if first == nil || first.StatusCode != http.StatusOK {
		t.Errorf("the first replan: %v, want 200", first)
	}
	if s := budget.Stats(); s.Used != 0 {
		t.Errorf("the budget holds %d bytes once the streams are done, want 0", s.Used)
	}
	if resp, body := srv.get(t, paths[1]); resp.StatusCode != http.StatusOK {
		t.Errorf("the second token once the first replan is done: %d %.300s", resp.StatusCode, body)
	}
}
