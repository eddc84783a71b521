package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// TestRealPrometheusScrapes runs Debian's Prometheus server against the
// sidecar on loopback: after a demo read, a PromQL query returns the
// rows-emitted counter. Like promtool, the server is optional on a
// workstation and required in CI, which installs it (.ci/run).
func TestRealPrometheusScrapes(t *testing.T) {
	t.Parallel()
	bin := testenv.Tool(t, "prometheus", "apt-get install prometheus")
	testenv.SkipShort(t, "starts a Prometheus server")
	srv := newDemoServer(t)
	prom := startPrometheus(t, bin, "sidecar", strings.TrimPrefix(srv.URL, "http://"))

	rows := srv.rows(t, srv.plan(t, q("table", "demo.orders")))
	want := float64(len(rows))
	if want == 0 {
		t.Fatal("the demo read gave no rows")
	}

	query := "http://" + prom.addr + "/api/v1/query?query=" + url.QueryEscape(`sidecar_rows_emitted_total{job="sidecar"}`)
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if got, ok := promValue(query, &last); ok && got == want {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Prometheus never returned sidecar_rows_emitted_total = %v; last answer %s\nprometheus log:\n%s", want, last, prom.logs.String())
}

// promValue runs an instant query and returns the single sample's value.
func promValue(query string, last *string) (float64, bool) {
	resp, err := http.Get(query)
	if err != nil {
		*last = err.Error()
		return 0, false
	}
	defer resp.Body.Close()
	var ans struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		*last = err.Error()
		return 0, false
	}
	*last = fmt.Sprintf("%+v", ans)
	if ans.Status != "success" || len(ans.Data.Result) != 1 {
		return 0, false
	}
	s, ok := ans.Data.Result[0].Value[1].(string)
	if !ok {
		return 0, false
	}
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		return 0, false
	}
	return v, true
}
