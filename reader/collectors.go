package reader

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/promreg"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/token"
)

// collectors are the reader's metrics: rows, deletes and delete file
// loads. Every Reader built on one registry counts into the same collectors
// (promreg.Register), so a reader per catalog exports one set of series;
// the delete cache registers its own (cacheCollectors).
type collectors struct {
	rowsRead, rowsEmitted, rowsFiltered, invalidUTF8 prometheus.Counter
	rowsDeleted, deleteFileLoads                     *prometheus.CounterVec
}

// newCollectors registers the reader's collectors on reg (nil: none, they
// count unexported), and the delete cache's, so that they are exported
// (at zero) when no cache runs.
func newCollectors(reg prometheus.Registerer) *collectors {
	deletes.RegisterCacheMetrics(reg)
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
	}
}

// deleteKinds index Stream.published.loads.
var deleteKinds = [3]token.DeleteKind{token.DeletePosition, token.DeleteEquality, token.DeleteDeletionVector}

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
