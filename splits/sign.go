package splits

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/druidiceberg/sidecar/token"
)

// The signing step of Plan: each split gets its token, holding the
// split's files or a reference to the split in the plan (see
// token.PlanRef and replan.go).

// sign gives every split of pl its token: the split's files themselves
// when that token is short (token.MaxShortToken), else a reference to the
// split in the plan. A plan that hands out references is cached, so that
// the replica that planned it serves them without planning again.
func (p *Planner) sign(pl *planning) error {
	ps := pl.plan.Splits
	ref, refs := p.refOf(pl)
	if err := signAll(p.signer, ps, refs); err != nil {
		return err
	}
	if !refs {
		return nil
	}
	var cached *cachedPlan
	for i := range ps {
		if ps[i].Token != "" && len(ps[i].Token) <= token.MaxShortToken {
			continue
		}
		if cached == nil {
			var err error
			if cached, err = cachePlanOf(ps); err != nil {
				return err
			}
			ref.Fingerprint = cached.fingerprint
			p.plans.add(planKey(ps[i].Kind, ref), cached)
		}
		r := ref
		r.Index = i
		tok, err := p.signer.SignRef(ps[i].Kind, r)
		if err != nil {
			return err
		}
		ps[i].Token, ps[i].ID = tok, token.ID(tok)
	}
	return nil
}

// cachePlanOf is the cache entry of a plan's splits.
func cachePlanOf(ps []PlannedSplit) (*cachedPlan, error) {
	c := &cachedPlan{splits: make([][]token.Split, len(ps))}
	for i, s := range ps {
		c.splits[i] = s.Parts
		c.parts += len(s.Parts)
	}
	kind := token.KindRows
	if len(ps) > 0 {
		kind = ps[0].Kind
	}
	var err error
	if c.fingerprint, err = token.Fingerprint(kind, c.splits); err != nil {
		return nil, fmt.Errorf("fingerprint the plan: %w", err)
	}
	return c, nil
}

// maxShortParts is the most files a split can pack and still have a
// short token (each file is some 80 bytes of it at the least); a split of
// more is signed as a reference without trying.
const maxShortParts = 12

// signAll signs with s every split of a plan in place and gives it its ID. A wide
// plan has thousands, so the work is spread over the CPUs, in contiguous
// runs of splits. With refs, a split of more than maxShortParts files is
// left unsigned, for a reference.
func signAll(s *token.Signer, ps []PlannedSplit, refs bool) error {
	const minRun = 256
	run := func(ps []PlannedSplit) error {
		for i := range ps {
			if refs && len(ps[i].Parts) > maxShortParts {
				continue
			}
			tok, err := s.Sign(ps[i].Kind, ps[i].Parts...)
			if err != nil {
				return err
			}
			ps[i].Token, ps[i].ID = tok, token.ID(tok)
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), (len(ps)+minRun-1)/minRun)
	if workers <= 1 {
		return run(ps)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { errs[w] = run(ps[w*len(ps)/workers : (w+1)*len(ps)/workers]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
