package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/internal/testnet"
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
	target := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"+
		"scrape_configs:\n  - job_name: sidecar\n    static_configs:\n      - targets: [%q]\n", target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := testnet.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr,
		"--log.level=warn")
	var logs testlog.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	t.Logf("started prometheus (pid %d) on %s scraping %s", cmd.Process.Pid, promAddr, target)
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		t.Logf("stopped prometheus (pid %d)", cmd.Process.Pid)
	})

	rows := srv.rows(t, srv.plan(t, q("table", "demo.orders")))
	want := float64(len(rows))
	if want == 0 {
		t.Fatal("the demo read gave no rows")
	}

	query := "http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(`sidecar_rows_emitted_total{job="sidecar"}`)
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if got, ok := promValue(query, &last); ok && got == want {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Prometheus never returned sidecar_rows_emitted_total = %v; last answer %s\nprometheus log:\n%s", want, last, logs.String())
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
