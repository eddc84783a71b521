// Package metrics holds the sidecar's Prometheus collectors, all registered
// on one private registry that main builds once and /metrics serves (the
// package example).
//
// No label ever carries a token, path, table or snapshot id: label values
// come from small fixed sets (route patterns, methods, codes, kinds).
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the sidecar's collectors.
type Metrics struct {
	// HTTPRequests counts answered requests by route pattern, method and code.
	HTTPRequests *prometheus.CounterVec
	// HTTPDuration observes request latency by route pattern, method and code.
	HTTPDuration *prometheus.HistogramVec
	// SplitsPlanned counts planned splits by path (v1, v2).
	SplitsPlanned *prometheus.CounterVec
	// PlanDuration observes how long planning takes.
	PlanDuration prometheus.Histogram
	// ScansPlanned counts the snapshots' files planned, by catalog and
	// planner: local (the sidecar read the manifests) or remote (the REST
	// catalog's server planned them).
	ScansPlanned *prometheus.CounterVec
	// RowsRead counts rows decoded from data files, deleted or not.
	RowsRead prometheus.Counter
	// RowsEmitted counts rows written to clients.
	RowsEmitted prometheus.Counter
	// RowsFiltered counts rows dropped by an applied residual filter.
	RowsFiltered prometheus.Counter
	// RowsDeleted counts rows dropped by kind (position, equality, deletion_vector).
	RowsDeleted *prometheus.CounterVec
	// InvalidUTF8 counts string values whose invalid UTF-8 bytes were
	// replaced with U+FFFD.
	InvalidUTF8 prometheus.Counter
	// BytesServed counts response body bytes by route pattern.
	BytesServed *prometheus.CounterVec
	// ActiveStreams is the number of row and file streams being served.
	ActiveStreams prometheus.Gauge
	// StreamAborts counts streams cut after the first byte, by cause.
	StreamAborts *prometheus.CounterVec
	// DeleteFileLoads counts delete files read from storage to serve row
	// streams, by kind; with the delete cache, only those it did not hold.
	DeleteFileLoads *prometheus.CounterVec
	// DeleteCacheHits and DeleteCacheMisses count requests for decoded
	// delete files by kind: hits were answered without reading the file.
	DeleteCacheHits   *prometheus.CounterVec
	DeleteCacheMisses *prometheus.CounterVec
	// DeleteCacheEvictions counts entries the delete cache dropped to stay
	// within its bound.
	DeleteCacheEvictions prometheus.Counter
	// DeleteCacheBytes is the estimated memory the delete cache holds.
	DeleteCacheBytes prometheus.Gauge
	// AdmissionRejected counts requests refused with 503 because too many
	// of their kind (stream, plan) were running.
	AdmissionRejected *prometheus.CounterVec
	// MemoryReserved is the memory budget's reserved bytes by kind (plan,
	// deletes); MemoryRefused counts the reservations refused, by kind and
	// reason (busy: others held it, a 503; too_large: it can never fit, a
	// 422).
	MemoryReserved *prometheus.GaugeVec
	MemoryRefused  *prometheus.CounterVec
	// CatalogErrors counts failed catalog calls.
	CatalogErrors prometheus.Counter
	// TableReloads counts tables loaded again from their catalog to read
	// the files of their tokens with fresh storage credentials, by
	// catalog, reason (age, expired, refused) and outcome (ok, error).
	TableReloads *prometheus.CounterVec
	// HTTPConnections is the client connections open on the main
	// listener; HTTPConnectionsShed counts the idle ones closed to make
	// room near its cap, HTTPConnectionsRefused the new ones refused at it.
	HTTPConnections        prometheus.Gauge
	HTTPConnectionsShed    prometheus.Counter
	HTTPConnectionsRefused prometheus.Counter
	// WriteStalls counts answers cut because a write moved no byte for
	// the write-stall timeout: clients that stopped reading.
	WriteStalls prometheus.Counter
}

// TableReloaded counts a table loaded again (catalog.Events).
func (m *Metrics) TableReloaded(catalog, reason string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.TableReloads.WithLabelValues(catalog, reason, outcome).Inc()
}

// ScanPlanned counts a scan planned (splits.PlanEvents).
func (m *Metrics) ScanPlanned(catalog string, remote bool) {
	planner := "local"
	if remote {
		planner = "remote"
	}
	m.ScansPlanned.WithLabelValues(catalog, planner).Inc()
}

// New creates the collectors on reg, with the Go and process collectors.
func New(reg prometheus.Registerer) *Metrics {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := promauto.With(reg)
	return &Metrics{
		HTTPRequests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		HTTPDuration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sidecar_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, including streaming the body.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 30, 120, 600},
		}, []string{"route", "method", "code"}),
		SplitsPlanned: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_splits_planned_total",
			Help: "Splits handed out, by path: v1 (raw data files) or v2 (delete-applied rows).",
		}, []string{"path"}),
		PlanDuration: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "sidecar_plan_duration_seconds",
			Help:    "Time to load a table and plan its scan.",
			Buckets: prometheus.DefBuckets,
		}),
		ScansPlanned: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_scans_planned_total",
			Help: "Snapshots' files planned, by catalog and planner: local (the sidecar read the table's manifests) or remote (the REST catalog's server planned them, --scan-planning).",
		}, []string{"catalog", "planner"}),
		RowsRead: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_rows_read_total",
			Help: "Rows decoded from data files, before deletes.",
		}),
		RowsEmitted: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_rows_emitted_total",
			Help: "Rows written to clients.",
		}),
		RowsFiltered: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_rows_filtered_total",
			Help: "Rows dropped because they do not match the filter (applyResidual=true).",
		}),
		RowsDeleted: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_rows_deleted_total",
			Help: "Rows dropped because a delete file deletes them, by kind.",
		}, []string{"kind"}),
		InvalidUTF8: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_invalid_utf8_values_total",
			Help: "String values written with invalid UTF-8 bytes replaced by U+FFFD.",
		}),
		BytesServed: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_http_response_bytes_total",
			Help: "Response body bytes written, by route pattern.",
		}, []string{"route"}),
		ActiveStreams: f.NewGauge(prometheus.GaugeOpts{
			Name: "sidecar_streams_active",
			Help: "Row and file streams being served now.",
		}),
		StreamAborts: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_stream_aborts_total",
			Help: "Streams cut after the first byte, by cause (client_gone, client_stalled, read_error).",
		}, []string{"cause"}),
		DeleteFileLoads: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_delete_file_loads_total",
			Help: "Delete files read from storage to serve a row stream, by kind (position, equality, deletion_vector); a file the delete cache holds is not read again.",
		}, []string{"kind"}),
		DeleteCacheHits: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_delete_cache_hits_total",
			Help: "Delete files a split needed that the delete cache answered without reading the file (held, or being loaded for another split), by kind.",
		}, []string{"kind"}),
		DeleteCacheMisses: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_delete_cache_misses_total",
			Help: "Delete files a split needed that the delete cache did not hold, so the file was read and decoded (or its load failed), by kind.",
		}, []string{"kind"}),
		DeleteCacheEvictions: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_delete_cache_evictions_total",
			Help: "Decoded delete files dropped from the delete cache, least recently used first, to stay within --delete-cache-size.",
		}),
		DeleteCacheBytes: f.NewGauge(prometheus.GaugeOpts{
			Name: "sidecar_delete_cache_bytes",
			Help: "Estimated memory held by the decoded delete files in the delete cache, in bytes.",
		}),
		MemoryReserved: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sidecar_memory_reserved_bytes",
			Help: "Memory reserved from the memory budget, by kind: plan (a plan's data files by the sizing rule) and deletes (decoded delete files, being loaded, used by streams or kept by the delete cache).",
		}, []string{"kind"}),
		MemoryRefused: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_memory_refused_total",
			Help: "Reservations of the memory budget refused, by kind (plan, deletes) and reason (busy: others held the memory, answered 503; too_large: it can never fit, answered 422).",
		}, []string{"kind", "reason"}),
		AdmissionRejected: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_admission_rejected_total",
			Help: "Requests answered 503 because too many of their kind (stream, plan) were running.",
		}, []string{"kind"}),
		CatalogErrors: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_catalog_errors_total",
			Help: "Catalog calls that failed because the catalog or storage did not answer.",
		}),
		TableReloads: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_catalog_table_reloads_total",
			Help: "Tables loaded again from their catalog to read their tokens' files with fresh storage credentials, by catalog, reason (age: the load was old; expired: the vended credentials could not be renewed; refused: the store refused them) and outcome (ok, error).",
		}, []string{"catalog", "reason", "outcome"}),
		HTTPConnections: f.NewGauge(prometheus.GaugeOpts{
			Name: "sidecar_http_connections",
			Help: "Client connections open on the main listener (--addr).",
		}),
		HTTPConnectionsShed: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_http_connections_shed_total",
			Help: "Idle connections closed to make room for new ones near --max-connections.",
		}),
		HTTPConnectionsRefused: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_http_connections_refused_total",
			Help: "New connections refused (503, closed) because --max-connections were open and busy.",
		}),
		WriteStalls: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_http_write_stalls_total",
			Help: "Answers cut because a write moved no byte for --write-stall-timeout (a client that stopped reading).",
		}),
	}
}
