// Package metrics holds the sidecar's HTTP and process-wide Prometheus
// collectors, registered on the one private registry that main builds once
// and /metrics serves (the package example). Every other component
// registers its own collectors on that registry through the
// prometheus.Registerer its constructor is handed (reader.New,
// memory.NewBudget, splits.NewPlanner, catalog.New), and counts where the
// event happens.
//
// No label ever carries a token, path, table or snapshot id: label values
// come from small fixed sets (route patterns, methods, codes, kinds).
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics are the HTTP and process-wide collectors.
type Metrics struct {
	// HTTPRequests counts answered requests by route pattern, method and code.
	HTTPRequests *prometheus.CounterVec
	// HTTPDuration observes request latency by route pattern, method and code.
	HTTPDuration *prometheus.HistogramVec
	// SplitsPlanned counts the splits of the plan answers handed out, by
	// path (v1, v2).
	SplitsPlanned *prometheus.CounterVec
	// PlanDuration observes how long a plan answer took to plan.
	PlanDuration prometheus.Histogram
	// BytesServed counts response body bytes by route pattern.
	BytesServed *prometheus.CounterVec
	// ActiveStreams is the number of row and file streams being served.
	ActiveStreams prometheus.Gauge
	// StreamAborts counts streams cut after the first byte, by cause.
	StreamAborts *prometheus.CounterVec
	// AdmissionRejected counts requests refused with 503 because too many
	// of their kind (stream, plan) were running.
	AdmissionRejected *prometheus.CounterVec
	// CatalogErrors counts the answers 503 because a catalog or storage
	// did not answer, counted where handlers render the error.
	CatalogErrors prometheus.Counter
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
		AdmissionRejected: f.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_admission_rejected_total",
			Help: "Requests answered 503 because too many of their kind (stream, plan) were running.",
		}, []string{"kind"}),
		CatalogErrors: f.NewCounter(prometheus.CounterOpts{
			Name: "sidecar_catalog_errors_total",
			Help: "Catalog calls that failed because the catalog or storage did not answer.",
		}),
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
