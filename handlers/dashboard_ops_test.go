package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// What operators are handed beside the metrics (docs/operations.md).
const (
	dashboardFile  = "../docker/grafana/sidecar-dashboard.json"
	alertsFile     = "../docker/prometheus/sidecar-alerts.yml"
	alertTestsFile = "../docker/prometheus/sidecar-alerts.test.yml"
	operationsDoc  = "../docs/operations.md"
)

// TestAlertRules runs promtool on the alerting rules and their unit tests,
// and holds the two files to each other and to the docs: every alert is
// tested both firing and quiet, has a severity, a summary, a description and
// a runbook that is a section of docs/operations.md.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	promtool := testenv.Tool(t, "promtool", "apt-get install prometheus")
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertTestsFile}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, promtool, args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}

	rules := alertRules(t)
	anchors := docAnchors(t, operationsDoc)
	for name, r := range rules {
		if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
			t.Errorf("%s: severity %q", name, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: no summary or description", name)
		}
		doc, anchor, _ := strings.Cut(r.Annotations["runbook"], "#")
		if doc != "docs/operations.md" || !anchors[anchor] {
			t.Errorf("%s: runbook %q is no section of docs/operations.md", name, r.Annotations["runbook"])
		}
	}

	var tests struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			Name       string `yaml:"name"`
			AlertTests []struct {
				Alert  string `yaml:"alertname"`
				Alerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, alertTestsFile, &tests)
	if !slices.Equal(tests.RuleFiles, []string{filepath.Base(alertsFile)}) {
		t.Errorf("%s tests %v, want %s", alertTestsFile, tests.RuleFiles, filepath.Base(alertsFile))
	}
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertTests {
			if _, ok := rules[at.Alert]; !ok {
				t.Errorf("test %q expects alert %s, which no rule defines", tc.Name, at.Alert)
			}
			if len(at.Alerts) > 0 {
				firing[at.Alert] = true
			} else {
				quiet[at.Alert] = true
			}
		}
	}
	for name := range rules {
		if !firing[name] || !quiet[name] {
			t.Errorf("%s: tested firing %v, quiet %v; want both", name, firing[name], quiet[name])
		}
	}
}

// TestDashboardQueriesOnLiveSidecar has a real Prometheus scrape a sidecar
// that plans, streams rows, serves from its delete cache, turns a stream
// away at --max-streams, cuts a client that stopped reading and refuses a
// plan its memory budget cannot hold while others hold it. Then every query
// of the Grafana dashboard, its templating variables substituted, must
// parse, name only metrics the sidecar exposes, and return data; every
// alerting rule must parse and name only metrics it exposes (alerts are
// meant to be quiet, so theirs may return nothing).
func TestDashboardQueriesOnLiveSidecar(t *testing.T) {
	t.Parallel()
	bin := testenv.Tool(t, "prometheus", "apt-get install prometheus")
	testenv.SkipShort(t, "starts a Prometheus server")

	dash := readDashboard(t)
	queries := dash.queries(t)
	rules := alertRules(t)

	srv, budget, logs := liveSidecar(t)
	prom := startPrometheus(t, bin, "dashboard", strings.TrimPrefix(srv.URL, "http://"))
	// The counters' first samples are from before any traffic, so that
	// the rates below see them rise.
	prom.waitFor(t, `sidecar_rows_emitted_total{job="dashboard"} == 0`)

	// A plan while others hold all but a byte of the memory budget: 503
	// memory_busy. (Before any read, so that the delete cache holds
	// nothing it could give back.)
	table := q("table", "bench.t", "mode", "rows")
	others, err := budget.Reserve(memory.Plan, budget.Capacity()-1, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := srv.get(t, "/splits?"+table.Encode()); resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, body) != "memory_busy" {
		t.Fatalf("a plan while others hold the budget: %d %s", resp.StatusCode, body)
	}
	others.Release()

	// Rows, twice: the second read finds the delete file in the cache.
	p := srv.plan(t, table)
	for range 2 {
		if lines := srv.rows(t, p); len(lines) == 0 {
			t.Fatal("the table streamed no rows")
		}
	}

	// A client that reads nothing holds the only stream slot: the next
	// stream is turned away, and the stalled one is cut.
	path := strings.TrimPrefix(p.Splits[0].URI, srv.URL)
	held := nonReader(t, strings.TrimPrefix(srv.URL, "http://"), path)
	if held.StatusCode != http.StatusOK {
		t.Fatalf("the stream that is not read: %d", held.StatusCode)
	}
	if resp, body := srv.get(t, path); resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, body) != "overloaded" {
		t.Fatalf("a stream past --max-streams: %d %s", resp.StatusCode, body)
	}
	// Its request line, logged "aborted", comes once the server cut it
	// and counted the cut.
	awaitRequests(t, logs, "/splits/{token}/rows", "aborted", 1)
	if got := metricValue(t, srv, "sidecar_stream_aborts_total", "cause", "client_stalled"); got != 1 {
		t.Errorf("sidecar_stream_aborts_total{cause=\"client_stalled\"} = %v once the stalled stream was cut, want 1", got)
	}
	if _, err := io.Copy(io.Discard, held.Body); err == nil {
		t.Error("the stalled stream ended cleanly, want a cut")
	}

	// The check itself: a misspelt metric, a broken expression and an
	// unknown variable must each fail it.
	vars := dashboardVars{"job": "dashboard", "instance": ".*", "__rate_interval": "5m"}
	names := prom.metricNames(t)
	for _, bad := range []string{
		`sum(rate(sidecar_rows_emited_total{job=~"$job"}[$__rate_interval]))`,
		`sum(rate(sidecar_rows_emitted_total{job=~"$job"}[$__rate_interval])`,
		`sum(rate(sidecar_rows_emitted_total{job=~"$job", instance=~"$instnce"}[$__rate_interval]))`,
	} {
		if problem, _ := prom.check(vars.expand(bad), names, true); problem == "" {
			t.Errorf("the check passes %s", bad)
		}
	}

	// Every dashboard query returns data once Prometheus has scraped the
	// traffic; the rules are checked once.
	testenv.Poll(t, time.Minute, func() error {
		names = prom.metricNames(t)
		var problems []string
		for _, dq := range queries {
			problem, refused := prom.check(vars.expand(dq.Expr), names, true)
			if refused {
				// More scrapes will not mend it.
				t.Fatalf("panel %q: %s", dq.Panel, problem)
			}
			if problem != "" {
				problems = append(problems, fmt.Sprintf("panel %q: %s", dq.Panel, problem))
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%d of %d dashboard queries fail:\n%s", len(problems), len(queries), strings.Join(problems, "\n"))
		}
		return nil
	})
	for name, r := range rules {
		if problem, _ := prom.check(r.Expr, names, false); problem != "" {
			t.Errorf("alert %s: %s", name, problem)
		}
	}
	t.Logf("%d dashboard queries and %d alerting rules checked against %d live metric names", len(queries), len(rules), len(names))
}

// TestPromQLMetricNames holds the PromQL reader of the checks above to the
// names an expression selects.
func TestPromQLMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up{job="sidecar"} == 0`, []string{"up"}},
		{`histogram_quantile(0.99, sum by (route, le) (rate(a_bucket{code!="x{y}"}[5m])))`, []string{"a_bucket"}},
		{`1e9 * sum by (instance) (rate(b[1m])) / (sum by (instance) (rate(c[1m])) > 0)`, []string{"b", "c"}},
		{"(sum by (job) (d) > 0)\nunless on (job, instance)\n(sum by (job) (increase(e{route=~\"/splits/.+\"}[30m])) > 0)", []string{"d", "e"}},
		{`sum(f offset 5m) without (kind) + ignoring (kind) group_left g[5m:1m] and bool h @ start()`, []string{"f", "g", "h"}},
		{`rate(j:k_total[1e-3m]) > .5 or vector(1) # comment names_nothing`, []string{"j:k_total"}},
		{`max without (kind) (byte_total)`, []string{"byte_total"}},
		{`k bytes_total`, []string{"k", "bytes_total"}},
	} {
		if got := promqlMetricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// liveSidecar serves a table of 10,000 rows with positional deletes as
// cmd/sidecar wires it (a memory budget of 1 GiB for plans and delete
// files, a delete cache), one stream at a time, cutting a client that reads
// nothing for 3 seconds; logs holds what it logs.
func liveSidecar(t *testing.T) (srv *testServer, budget *memory.Budget, logs *testlog.Buffer) {
	t.Helper()
	cfg := sidecatalog.Config{Type: "local", Warehouse: rowsTable(t)}
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	logs = &testlog.Buffer{}
	srv = newServerListening(t, cfg, nil, 0,
		func(l net.Listener) net.Listener { return smallBuffers{Listener: l} },
		func(c *handlers.Config) {
			c.MaxStreams, c.WriteStallTimeout = 1, 3*time.Second
			c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
			reg := sidecartest.RegistererOf(c)
			budget = memory.NewBudget(1<<30, "the memory budget (the test's)", reg)
			cache := deletes.NewCache(testDeleteCacheSize, reg)
			budget.OnPressure(cache.Reclaim)
			cat := sidecartest.PlannerCatalog(t, cfg, nil, signer, splits.WithMemoryBudget(budget))
			cat.Rows = reader.New(reg, reader.WithDeleteCache(cache), reader.WithMemory(budget, 1<<29, "--max-delete-memory"))
			c.Catalogs = []handlers.Catalog{cat}
		})
	return srv, budget, logs
}

// alertRule is one alerting rule of the rules file.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// alertRules reads the alerting rules by name.
func alertRules(t *testing.T) map[string]alertRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, alertsFile, &file)
	rules := map[string]alertRule{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Fatalf("%s: a rule that is no alert: %+v", alertsFile, r)
			}
			if _, dup := rules[r.Alert]; dup {
				t.Errorf("%s: two alerts named %s", alertsFile, r.Alert)
			}
			rules[r.Alert] = r
		}
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no alerts", alertsFile)
	}
	return rules
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// docAnchors returns the anchors GitHub gives the headings of a Markdown
// file: lower case, spaces as hyphens, punctuation dropped.
func docAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	anchors := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimLeft(h, "#")
			anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")] = true
		}
	}
	return anchors
}

// dashboard is what the test reads of the Grafana dashboard.
type dashboard struct {
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []dashboardPanel `json:"panels"`
}

type dashboardPanel struct {
	ID         int               `json:"id"`
	Type       string            `json:"type"`
	Title      string            `json:"title"`
	Datasource map[string]string `json:"datasource"`
	GridPos    map[string]int    `json:"gridPos"`
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []dashboardPanel `json:"panels"`
}

// dashboardQuery is one PromQL query of the dashboard: a panel's target or
// a templating variable's label_values.
type dashboardQuery struct{ Panel, Expr string }

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" {
		t.Errorf("%s has no uid", dashboardFile)
	}
	return d
}

// queries returns every query of the dashboard, and checks what Grafana
// needs of each panel: a unique id, a place, the datasource variable, and
// a query per target.
func (d dashboard) queries(t *testing.T) []dashboardQuery {
	t.Helper()
	defined := map[string]bool{}
	var out []dashboardQuery
	for _, v := range d.Templating.List {
		defined[v.Name] = true
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		expr, _ := q["query"].(string)
		inner, ok := strings.CutPrefix(expr, "label_values(")
		if !ok {
			t.Fatalf("variable %s: query %q, want label_values(...)", v.Name, expr)
		}
		// label_values(metric{…}, label): the selector is a query of its own.
		if i := strings.LastIndex(inner, ","); i > 0 {
			out = append(out, dashboardQuery{"variable " + v.Name, inner[:i]})
		}
	}
	if !defined["datasource"] {
		t.Errorf("%s has no datasource variable", dashboardFile)
	}
	ids := map[int]bool{}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel %q: id %d is taken", p.Title, p.ID)
			}
			ids[p.ID] = true
			if p.GridPos["w"] == 0 || p.GridPos["h"] == 0 {
				t.Errorf("panel %q has no place (gridPos %v)", p.Title, p.GridPos)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource["uid"] != "${datasource}" {
				t.Errorf("panel %q: datasource %v, want the ${datasource} variable", p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("panel %q, target %s: no expr", p.Title, tg.RefID)
				}
				out = append(out, dashboardQuery{p.Title, tg.Expr})
			}
		}
	}
	walk(d.Panels)
	for _, q := range out {
		for _, m := range dashboardVar.FindAllStringSubmatch(q.Expr, -1) {
			if name := m[1] + m[2]; !defined[name] && !strings.HasPrefix(name, "__") {
				t.Errorf("%s: $%s is no variable of the dashboard", q.Panel, name)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no queries", dashboardFile)
	}
	return out
}

// dashboardVar is a Grafana variable in a query: $name or ${name}.
var dashboardVar = regexp.MustCompile(`\$(?:\{(\w+)\}|(\w+))`)

// dashboardVars are the values the checks give the variables.
type dashboardVars map[string]string

// expand replaces each variable by its value; one without a value stays,
// and fails the query.
func (v dashboardVars) expand(expr string) string {
	return dashboardVar.ReplaceAllStringFunc(expr, func(s string) string {
		m := dashboardVar.FindStringSubmatch(s)
		if val, ok := v[m[1]+m[2]]; ok {
			return val
		}
		return s
	})
}

// promServer is a Prometheus server scraping one target.
type promServer struct {
	addr string
	logs *testlog.Buffer
}

// startPrometheus runs bin scraping target every second as job; the
// server stops when the test ends, and what it logged is in the test's
// log if the test failed.
func startPrometheus(t *testing.T, bin, job, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"+
		"scrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets: [%q]\n", job, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &promServer{addr: testnet.FreeAddr(t), logs: &testlog.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+p.addr,
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	t.Logf("started prometheus (pid %d) on %s scraping %s", cmd.Process.Pid, p.addr, target)
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		t.Logf("stopped prometheus (pid %d)", cmd.Process.Pid)
		if t.Failed() {
			t.Logf("prometheus log:\n%s", p.logs.String())
		}
	})
	return p
}

// promAnswer is the API's answer to a query.
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	} `json:"data"`
}

// query runs an instant query; err is for a server that did not answer.
func (p *promServer) query(expr string) (promAnswer, error) {
	var ans promAnswer
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return ans, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return ans, fmt.Errorf("query %s: %d: %w", expr, resp.StatusCode, err)
	}
	return ans, nil
}

// waitFor waits until expr returns data.
func (p *promServer) waitFor(t *testing.T, expr string) {
	t.Helper()
	testenv.Poll(t, time.Minute, func() error {
		ans, err := p.query(expr)
		if err != nil {
			return err
		}
		if ans.Status != "success" || len(ans.Data.Result) == 0 {
			return fmt.Errorf("%s: no data yet: %+v", expr, ans)
		}
		return nil
	})
}

// metricNames returns every metric name Prometheus holds.
func (p *promServer) metricNames(t *testing.T) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/api/v1/label/__name__/values")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Status string   `json:"status"`
		Data   []string `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || ans.Status != "success" {
		t.Fatalf("metric names: %+v (%v)", ans, err)
	}
	names := map[string]bool{}
	for _, n := range ans.Data {
		names[n] = true
	}
	return names
}

// check says what is wrong with expr, or "": it must parse (Prometheus
// evaluates it), every metric it names must be one of names, and, when
// wantData, it must return at least one sample. refused is for an
// expression Prometheus would not evaluate.
func (p *promServer) check(expr string, names map[string]bool, wantData bool) (problem string, refused bool) {
	if m := dashboardVar.FindString(expr); m != "" {
		return fmt.Sprintf("%s: %s has no value", expr, m), true
	}
	var problems []string
	for _, n := range promqlMetricNames(expr) {
		if !names[n] {
			problems = append(problems, fmt.Sprintf("no metric %s", n))
		}
	}
	ans, err := p.query(expr)
	switch {
	case err != nil:
		problems = append(problems, err.Error())
	case ans.Status != "success":
		problems = append(problems, fmt.Sprintf("%s: %s", ans.ErrorType, ans.Error))
		refused = true
	case wantData && len(ans.Data.Result) == 0:
		problems = append(problems, "no data")
	}
	if len(problems) == 0 {
		return "", false
	}
	return fmt.Sprintf("%s: %s", expr, strings.Join(problems, "; ")), refused
}

// promqlKeywords are PromQL's words that name no metric.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"inf": true, "nan": true, "atan2": true,
}

// promqlLabelLists are the words followed by a list of label names.
var promqlLabelLists = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// promqlMetricNames returns the metric names an expression selects, in
// order, once each: the words that are no function, keyword, number, label
// list, label matcher, string or duration.
func promqlMetricNames(expr string) []string {
	var names []string
	isWord := func(c byte, first bool) bool {
		return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
	}
	// skip returns the index after the bracket that closes the one at
	// i, passing over strings.
	skip := func(i int, open, close byte) int {
		depth := 0
		for ; i < len(expr); i++ {
			switch c := expr[i]; {
			case c == '"' || c == '\'' || c == '`':
				i = skipString(expr, i) - 1
			case c == open:
				depth++
			case c == close:
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '{':
			i = skip(i, '{', '}')
		case c == '[':
			i = skip(i, '[', ']')
		case '0' <= c && c <= '9' || c == '.':
			for i < len(expr) && (isWord(expr[i], false) || expr[i] == '.' ||
				(expr[i] == '-' || expr[i] == '+') && (expr[i-1] == 'e' || expr[i-1] == 'E')) {
				i++
			}
		case isWord(c, true):
			j := i
			for j < len(expr) && isWord(expr[j], false) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\t' || expr[k] == '\n') {
				k++
			}
			paren := k < len(expr) && expr[k] == '('
			// An aggregation with its grouping first: sum by (le) (…).
			n := k
			for n < len(expr) && isWord(expr[n], false) {
				n++
			}
			aggregation := expr[k:n] == "by" || expr[k:n] == "without"
			switch {
			case promqlLabelLists[word] && paren:
				j = skip(k, '(', ')')
			case paren || aggregation || promqlKeywords[strings.ToLower(word)]:
			case !slices.Contains(names, word):
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}

// skipString returns the index after the string that starts at i.
func skipString(s string, i int) int {
	quote := s[i]
	for i++; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quote != '`':
			i++
		case s[i] == quote:
			return i + 1
		}
	}
	return i
}
