package splits

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/token"
)

// benchTable is tablegen.Bench's table ns.t of files data files of 100
// rows each, with positional and equality deletes, in a local warehouse
// of its own, built once per run of the package and shared, read-only, by
// the tests that ask for that many files.
func benchTable(t *testing.T, files int) (*table.Table, string) {
	t.Helper()
	return readOnlyTable(t, fmt.Sprintf("bench-%d", files), func(ctx context.Context, cat icecatalog.Catalog) (*table.Table, error) {
		return tablegen.Bench(ctx, cat, table.Identifier{"ns", "t"}, files*100, files, 0.02, 0.01)
	})
}

// TestPlanReferences: a split too large for a short token gets a reference
// of at most token.MaxShortToken bytes, and another planner with the same
// key (a replica configured with other packing defaults) resolves it to
// exactly the planned files, with a filter and its residuals too; a
// reference whose fingerprint does not match the plan is ErrPlanMismatch,
// planned once while the metadata file does not change.
func TestPlanReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dir := benchTable(t, 80)
	p := localPlanner(t, dir, WithTargetSplitSize(50_000))
	replica := localPlanner(t, dir, WithTargetSplitSize(1), WithMaxSplitFiles(2))
	filter := parseFilter(t, `{"type":"range","filterColumn":"id","lower":"1000","upper":"4500"}`)
	for name, req := range map[string]Request{
		"all":                {Table: "ns.t"},
		"filter":             {Table: "ns.t", Filter: filter},
		"residual":           {Table: "ns.t", Filter: filter, ApplyResidual: true, Columns: []string{"id", "token"}},
		"at least 5 splits":  {Table: "ns.t", MinSplits: 5},
		"iso, binary as str": {Table: "ns.t", Encoding: token.Encoding{ISOTimestamps: true, BinaryAsString: true}},
		"time interval": {Table: "ns.t", Interval: &TimeInterval{Column: "event_ts",
			Start: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		t.Run(name, func(t *testing.T) {
			plan, err := p.Plan(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			refs := 0
			for i, ps := range plan.Splits {
				if len(ps.Token) > token.MaxShortToken {
					t.Fatalf("split %d has a token of %d bytes", i, len(ps.Token))
				}
				tok, err := p.signer.Decode(ps.Kind, ps.Token)
				if err != nil {
					t.Fatal(err)
				}
				parts := tok.Parts
				if tok.Ref != nil {
					refs++
					if parts, err = replica.Resolve(ctx, ps.Kind, *tok.Ref); err != nil {
						t.Fatalf("split %d: %v", i, err)
					}
				}
				if !reflect.DeepEqual(parts, ps.Parts) {
					t.Fatalf("split %d resolves to\n%+v\nplanned\n%+v", i, parts, ps.Parts)
				}
			}
			if refs == 0 {
				t.Fatal("no split needed a reference; the test wants packed splits")
			}
		})
	}

	plan, err := p.Plan(ctx, Request{Table: "ns.t"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := p.signer.Decode(token.KindRows, plan.Splits[0].Token)
	if err != nil || tok.Ref == nil {
		t.Fatalf("the first split is not a reference: %v", err)
	}
	bad := *tok.Ref
	bad.Fingerprint = append([]byte(nil), bad.Fingerprint...)
	bad.Fingerprint[0] ^= 1
	if _, err := replica.Resolve(ctx, token.KindRows, bad); !errors.Is(err, ErrPlanMismatch) {
		t.Fatalf("a reference to another plan: %v, want ErrPlanMismatch", err)
	}
	// Asked again, the mismatch reads the metadata file, finds it as the
	// plan was made from, and plans nothing again.
	cached, ok := replica.plans.get(planKey(token.KindRows, bad))
	if _, err := replica.Resolve(ctx, token.KindRows, bad); !errors.Is(err, ErrPlanMismatch) {
		t.Fatalf("a reference to another plan, again: %v, want ErrPlanMismatch", err)
	}
	if again, _ := replica.plans.get(planKey(token.KindRows, bad)); !ok || again != cached {
		t.Fatal("a reference to another plan, asked twice of an unchanged metadata file, planned it twice")
	}
	bad = *tok.Ref
	bad.Count++
	if _, err := replica.Resolve(ctx, token.KindRows, bad); !errors.Is(err, ErrPlanMismatch) {
		t.Fatalf("a reference to a plan of another size: %v, want ErrPlanMismatch", err)
	}
	bad = *tok.Ref
	bad.SnapshotID++
	if _, err := replica.Resolve(ctx, token.KindRows, bad); !errors.Is(err, ErrPlanMismatch) {
		t.Fatalf("a reference to a snapshot the metadata lacks: %v, want ErrPlanMismatch", err)
	}
}

// TestPlanCacheSingleFlight: concurrent loads of one plan plan it once,
// and later loads find it cached; a load whose planning failed because its
// own caller went away is planned again for a caller still waiting. The
// concurrent loads run in a synctest bubble: synctest.Wait returns once
// every one of them is blocked, in planning or waiting for it.
func TestPlanCacheSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newPlanCache()
		var calls atomic.Int32
		release := make(chan struct{})
		plan := func(context.Context) (*cachedPlan, error) {
			calls.Add(1)
			<-release
			return &cachedPlan{parts: 1, splits: [][]token.Split{{{}}}}, nil
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := c.load(context.Background(), "k", plan); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("8 loads blocked at once planned %d times, want once", n)
		}
		close(release)
		wg.Wait()
		if _, err := c.load(context.Background(), "k", plan); err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("8 concurrent loads and one later planned %d times, want once", n)
		}
	})
	c := newPlanCache()
	var calls atomic.Int32

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	calls.Store(0)
	failing := func(ctx context.Context) (*cachedPlan, error) {
		if calls.Add(1) == 1 {
			return nil, context.Canceled
		}
		return &cachedPlan{parts: 1}, nil
	}
	if _, err := c.load(gone, "k2", failing); !errors.Is(err, context.Canceled) {
		t.Fatalf("the load of a caller gone: %v", err)
	}
	if _, err := c.load(context.Background(), "k2", failing); err != nil || calls.Load() != 2 {
		t.Fatalf("a waiting caller's load after another's went away: %v, %d calls", err, calls.Load())
	}
}

// TestPlanCacheBound: the cache holds at most planCacheParts parts,
// evicting the least recently used plans, and never a plan larger than
// that.
func TestPlanCacheBound(t *testing.T) {
	c := newPlanCache()
	half := &cachedPlan{parts: planCacheParts / 2}
	c.add("a", half)
	c.add("b", half)
	c.get("a")
	c.add("c", half)
	if _, ok := c.get("b"); ok {
		t.Fatal("the least recently used plan was kept")
	}
	if _, ok := c.get("a"); !ok {
		t.Fatal("a recently used plan was evicted")
	}
	c.add("huge", &cachedPlan{parts: planCacheParts + 1})
	if _, ok := c.get("huge"); ok || c.parts > planCacheParts {
		t.Fatalf("the cache holds %d parts", c.parts)
	}
}
