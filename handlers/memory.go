package handlers

import (
	"net/http"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/metrics"
)

// memoryScope holds what a planning request reserves of the memory budget
// (splits.WithMemoryBudget) until the request is over, its answer rendered:
// the plan's files are held that long. renderFirst writes the answer after
// this returns, so a client that does not read holds no budget.
func (s *server) memoryScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, end := memory.WithScope(r.Context())
		defer end()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// MemoryMetrics returns the observer to give memory.NewBudget so that m
// follows the bytes reserved and counts the reservations refused.
func MemoryMetrics(m *metrics.Metrics) memory.Observer { return memoryMetrics{m} }

type memoryMetrics struct{ m *metrics.Metrics }

func (o memoryMetrics) MemoryReserved(kind memory.Kind, delta int64) {
	o.m.MemoryReserved.WithLabelValues(string(kind)).Add(float64(delta))
}

func (o memoryMetrics) MemoryRefused(kind memory.Kind, busy bool) {
	reason := "too_large"
	if busy {
		reason = "busy"
	}
	o.m.MemoryRefused.WithLabelValues(string(kind), reason).Inc()
}
