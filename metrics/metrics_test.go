package metrics_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/metrics"
)

// TestNamesPassPromtool gives every collector a series, so that every name
// and help text is in the scrape, and lints the scrape with promtool. The
// collectors other components own are linted by their own tests.
func TestNamesPassPromtool(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.HTTPRequests.WithLabelValues("/splits", "GET", "200").Inc()
	m.HTTPDuration.WithLabelValues("/splits", "GET", "200").Observe(0.01)
	m.SplitsPlanned.WithLabelValues("v2").Inc()
	m.PlanDuration.Observe(0.1)
	m.BytesServed.WithLabelValues("/splits").Add(100)
	m.ActiveStreams.Inc()
	m.StreamAborts.WithLabelValues("client_gone").Inc()
	m.AdmissionRejected.WithLabelValues("stream").Inc()
	m.CatalogErrors.Inc()

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var scrape bytes.Buffer
	if _, err := scrape.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"sidecar_http_requests_total", "sidecar_http_request_duration_seconds", "sidecar_splits_planned_total",
		"sidecar_plan_duration_seconds", "sidecar_http_response_bytes_total",
		"sidecar_streams_active", "sidecar_stream_aborts_total", "sidecar_catalog_errors_total",
		"go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(scrape.String(), "\n# TYPE "+name+" ") {
			t.Errorf("the scrape lacks %s", name)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "sidecar_http_requests_total"); err != nil || n != 1 {
		t.Errorf("sidecar_http_requests_total: %d series, %v", n, err)
	}

	testenv.PromtoolCheck(t, scrape.Bytes())
}
