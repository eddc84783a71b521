package splits

import (
	"context"
	"errors"
	"sync"

	"github.com/apache/iceberg-go/table"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/druidiceberg/sidecar/token"
)

// planCacheParts bounds the files (parts) of the plans the plan cache
// holds: a part is a few hundred bytes, so this is some 100 MiB at most.
// A plan with more parts than this is not cached: each of its reference
// tokens plans it again (once for all the requests that arrive while it
// plans).
const planCacheParts = 250_000

// cachedPlan is a plan's splits, as a reference token resolves them.
type cachedPlan struct {
	fingerprint []byte
	splits      [][]token.Split
	parts       int
	// meta is the metadata a plan made again (Resolve) was made from; nil
	// for a plan cached as it was signed.
	meta table.Metadata
}

// planCache holds the plans that reference tokens name, by the plan's
// identity (its kind, metadata file, snapshot and options; not the split's
// index), least recently used evicted first, and plans each of them once
// however many requests ask at the same time.
type planCache struct {
	mu     sync.Mutex
	plans  *lru.Cache[string, *cachedPlan]
	parts  int
	flight singleflight.Group
}

func newPlanCache() *planCache {
	c := &planCache{}
	// The count bound is loose: the parts bound is the one that holds.
	c.plans, _ = lru.NewWithEvict(1<<16, func(_ string, p *cachedPlan) { c.parts -= p.parts })
	return c
}

// get returns the plan under key, if cached.
func (c *planCache) get(key string) (*cachedPlan, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.plans.Get(key)
}

// add caches a plan, evicting the least recently used until the parts fit.
func (c *planCache) add(key string, p *cachedPlan) {
	if p.parts > planCacheParts {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plans.Contains(key) {
		return
	}
	for c.parts+p.parts > planCacheParts {
		if _, _, ok := c.plans.RemoveOldest(); !ok {
			break
		}
	}
	c.plans.Add(key, p)
	c.parts += p.parts
}

// remove drops the plan under key, if cached.
func (c *planCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plans.Remove(key)
}

// load returns the plan under key, cached or made by plan; concurrent
// loads of one key share one call of plan. A call that failed because its
// caller went away is made again for a caller still waiting.
func (c *planCache) load(ctx context.Context, key string, plan func(context.Context) (*cachedPlan, error)) (*cachedPlan, error) {
	for {
		if p, ok := c.get(key); ok {
			return p, nil
		}
		v, err, _ := c.flight.Do(key, func() (any, error) {
			p, err := plan(ctx)
			if err == nil {
				c.add(key, p)
			}
			return p, err
		})
		if err != nil && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue // another caller's context ended; this one's did not
		}
		if err != nil {
			return nil, err
		}
		return v.(*cachedPlan), nil
	}
}
