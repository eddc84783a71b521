package reader

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/promreg"
	"github.com/druidiceberg/sidecar/token"
)

// collectors are the reader's metrics: rows, deletes, delete file loads and
// the delete cache. Every Reader and DeleteCache built on one registry
// counts into the same collectors (promreg.Register), so a reader per
// catalog and the cache they share export one set of series.
type collectors struct {
	rowsRead, rowsEmitted, rowsFiltered, invalidUTF8 prometheus.Counter
	rowsDeleted, deleteFileLoads                     *prometheus.CounterVec
	cacheHits, cacheMisses                           *prometheus.CounterVec
	cacheEvictions                                   prometheus.Counter
	cacheBytes                                       prometheus.Gauge
}

// newCollectors registers the reader's collectors on reg (nil: none, they
// count unexported).
func newCollectors(reg prometheus.Registerer) *collectors {
	counter := func(name, help string) prometheus.Counter {
		return promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
	}
	byKind := func(name, help string) *prometheus.CounterVec {
		return promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"kind"}))
	}
	return &collectors{
		rowsRead:     counter("sidecar_rows_read_total", "Rows decoded from data files, before deletes."),
		rowsEmitted:  counter("sidecar_rows_emitted_total", "Rows written to clients."),
		rowsFiltered: counter("sidecar_rows_filtered_total", "Rows dropped because they do not match the filter (applyResidual=true)."),
		invalidUTF8:  counter("sidecar_invalid_utf8_values_total", "String values written with invalid UTF-8 bytes replaced by U+FFFD."),
		rowsDeleted:  byKind("sidecar_rows_deleted_total", "Rows dropped because a delete file deletes them, by kind."),
		deleteFileLoads: byKind("sidecar_delete_file_loads_total",
			"Delete files read from storage to serve a row stream, by kind (position, equality, deletion_vector); a file the delete cache holds is not read again."),
		cacheHits: byKind("sidecar_delete_cache_hits_total",
			"Delete files a split needed that the delete cache answered without reading the file (held, or being loaded for another split), by kind."),
		cacheMisses: byKind("sidecar_delete_cache_misses_total",
			"Delete files a split needed that the delete cache did not hold, so the file was read and decoded (or its load failed), by kind."),
		cacheEvictions: counter("sidecar_delete_cache_evictions_total",
			"Decoded delete files dropped from the delete cache, least recently used first, to stay within --delete-cache-size."),
		cacheBytes: promreg.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sidecar_delete_cache_bytes",
			Help: "Estimated memory held by the decoded delete files in the delete cache, in bytes.",
		})),
	}
}

// tally is what a stream has counted, in the order of deleteKinds.
type tally struct {
	read, emitted, filtered, invalid int64
	deleted, loads                   [3]int64
}

// record adds what a stream counted since its last record: now is its
// counts, before what record saw last time.
func (c *collectors) record(now, before tally) {
	c.rowsRead.Add(float64(now.read - before.read))
	c.rowsEmitted.Add(float64(now.emitted - before.emitted))
	c.rowsFiltered.Add(float64(now.filtered - before.filtered))
	c.invalidUTF8.Add(float64(now.invalid - before.invalid))
	for i, kind := range deleteKinds {
		c.rowsDeleted.WithLabelValues(string(kind)).Add(float64(now.deleted[i] - before.deleted[i]))
		// Only the delete files the stream read itself: not those the
		// delete cache held or another stream was loading.
		if d := now.loads[i] - before.loads[i]; d > 0 {
			c.deleteFileLoads.WithLabelValues(string(kind)).Add(float64(d))
		}
	}
}

// lookup counts a request for a delete file of kind (DeleteCache.Stats
// says what a hit is).
func (c *collectors) lookup(kind token.DeleteKind, hit bool) {
	if hit {
		c.cacheHits.WithLabelValues(string(kind)).Inc()
	} else {
		c.cacheMisses.WithLabelValues(string(kind)).Inc()
	}
}
