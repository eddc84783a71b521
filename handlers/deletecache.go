package handlers

import (
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits/split"
)

// DeleteCacheMetrics returns the observer to give reader.NewDeleteCache so
// that m counts the cache's hits, misses and evictions and follows its
// size. The cache is shared by every catalog's reader, so it is wired where
// they are built, not per request.
func DeleteCacheMetrics(m *metrics.Metrics) reader.DeleteCacheObserver {
	return deleteCacheMetrics{m}
}

type deleteCacheMetrics struct{ m *metrics.Metrics }

func (o deleteCacheMetrics) DeleteCacheLookup(kind split.DeleteKind, hit bool) {
	if hit {
		o.m.DeleteCacheHits.WithLabelValues(string(kind)).Inc()
	} else {
		o.m.DeleteCacheMisses.WithLabelValues(string(kind)).Inc()
	}
}

func (o deleteCacheMetrics) DeleteCacheChanged(bytesDelta int64, evicted int) {
	o.m.DeleteCacheBytes.Add(float64(bytesDelta))
	o.m.DeleteCacheEvictions.Add(float64(evicted))
}
