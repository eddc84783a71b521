package handlers_test

import (
	"encoding/json"
	"fmt"
	"strconv"
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

	const expr = `sidecar_rows_emitted_total{job="sidecar"}`
	testenv.Poll(t, time.Minute, func() error {
		got, err := prom.value(expr)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s = %v, want %v", expr, got, want)
		}
		return nil
	})
}

// value runs an instant query whose answer is one sample, and returns the
// sample's value.
func (p *promServer) value(expr string) (float64, error) {
	ans, err := p.query(expr)
	if err != nil {
		return 0, err
	}
	if ans.Status != "success" || len(ans.Data.Result) != 1 {
		return 0, fmt.Errorf("%s: not one sample: %+v", expr, ans)
	}
	var sample struct {
		Value [2]any `json:"value"`
	}
	if err := json.Unmarshal(ans.Data.Result[0], &sample); err != nil {
		return 0, fmt.Errorf("%s: the sample %s: %w", expr, ans.Data.Result[0], err)
	}
	s, ok := sample.Value[1].(string)
	if !ok {
		return 0, fmt.Errorf("%s: a sample whose value is not a string: %s", expr, ans.Data.Result[0])
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: the sample's value: %w", expr, err)
	}
	return v, nil
}
