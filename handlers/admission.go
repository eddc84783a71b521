package handlers

import (
	"fmt"
	"net/http"
)

// admit bounds how many requests of one kind run at once. Past the bound it
// answers 503 with Retry-After at once instead of queueing: Druid retries
// with backoff, and a queue would only hold connections and memory. A bound
// of 0 admits everything.
//
// The slots are made once, here: chi wraps every route of a group in the
// middleware separately, and all of them must share one bound.
func (s *server) admit(kind string, bound int) func(http.Handler) http.Handler {
	slots := make(chan struct{}, max(bound, 0))
	return func(next http.Handler) http.Handler {
		if bound <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				next.ServeHTTP(w, r)
			default:
				if s.Metrics != nil {
					s.Metrics.AdmissionRejected.WithLabelValues(kind).Inc()
				}
				writeError(w, r, s.Logger, errorf(http.StatusServiceUnavailable, "overloaded",
					fmt.Sprintf("%d %s requests are running, the most this sidecar takes at once; retry shortly", bound, kind)))
			}
		})
	}
}
