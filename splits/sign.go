package splits

import (
	"errors"
	"runtime"
	"sync"

	"github.com/druidiceberg/sidecar/splits/split"
)

// signAll signs with s every split of a plan in place and gives it its ID. A wide
// plan has thousands, so the work is spread over the CPUs, in contiguous
// runs of splits.
func signAll(s *split.Signer, ps []PlannedSplit) error {
	const minRun = 256
	run := func(ps []PlannedSplit) error {
		for i := range ps {
			tok, err := s.Sign(ps[i].Kind, ps[i].Parts...)
			if err != nil {
				return err
			}
			ps[i].Token, ps[i].ID = tok, split.ID(tok)
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
