package metrics_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/druidiceberg/sidecar/metrics"
)

// The collectors live on one private registry, which /metrics serves.
func Example() {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.ActiveStreams.Inc()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "sidecar_streams_active ") {
			fmt.Println(l)
		}
	}
	// Output: sidecar_streams_active 1
}
