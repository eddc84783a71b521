package handlers

import (
	"errors"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
)

// maxRepacks is how often a generator plans again with fewer, larger
// splits when what it writes is larger than Druid's task runners take.
const maxRepacks = 3

// withinPayload makes a generated spec over req's plan with attempt, which
// plans req and renders the spec over the plan's source; while the spec is
// larger than druid.MaxPayloadBytes (a spec of many URIs), it plans again
// with as many splits as fit (req.MaxSplits), each packing more. What is
// still too large with fewer URIs, or after maxRepacks plans, is the
// error.
func withinPayload[T any](req splits.Request, attempt func(splits.Request) (T, druid.Source, error)) (T, error) {
	for try := 0; ; try++ {
		out, src, err := attempt(req)
		var tooLarge *druid.TooLargeError
		if !errors.As(err, &tooLarge) || try == maxRepacks {
			return out, err
		}
		n, ok := src.FitURIs(tooLarge.Size)
		if !ok {
			return out, err
		}
		req.MaxSplits = n
	}
}
