package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// druidAPI is how sync talks to Druid, as Druid routes its APIs:
//
//   - statements go to a Broker: /druid/v2/sql/task is bound there only
//     (the multi-stage-query extension's SqlTaskModule is
//     @LoadScope(roles = BROKER)); a Router forwards /druid/v2/* to one;
//   - task status and worker capacity come from the Overlord leader's
//     /druid/indexer/v1. A Router forwards it only with
//     druid.router.managementProxy.enabled=true, which is off by default
//     (RouterJettyServerInitializer); without it the path falls to Jetty
//     and answers 404. A standby Overlord answers 307 to the leader
//     (RedirectFilter, OverlordRedirectInfo).
//
// Go's client drops Authorization when a redirect leads to another host,
// so the leader would answer 401: sync follows a redirect only to a host
// the operator configured (--druid, --druid-broker, --druid-overlord),
// and sends the credentials there again; any other redirect is refused.
type druidAPI struct {
	log    *slog.Logger
	client *http.Client
	cred   *credential
	broker string
	// coordinator marks the segments of an emptied interval unused.
	coordinator string
	// overlords are the configured Overlords (or Routers); overlord is
	// the one asked, the leader once known.
	overlords []string
	allowed   map[string]bool

	mu       sync.Mutex
	overlord string
	// noCapacity says the Overlord does not tell its worker capacity
	// (an older Druid, or no CONFIG read permission): not asked again.
	noCapacity bool
}

// errRedirect is a redirect to a host the operator did not configure.
var errRedirect = errors.New("redirect refused")

func newDruidAPI(cfg syncConfig, log *slog.Logger) *druidAPI {
	d := &druidAPI{log: log, cred: cfg.DruidAuth, broker: strings.TrimRight(cfg.broker(), "/"),
		coordinator: strings.TrimRight(cfg.coordinator(), "/"), allowed: map[string]bool{}}
	for _, o := range cfg.overlords() {
		d.overlords = append(d.overlords, strings.TrimRight(o, "/"))
	}
	if len(d.overlords) > 0 {
		d.overlord = d.overlords[0]
	}
	for _, u := range append([]string{cfg.DruidURL, cfg.BrokerURL, cfg.CoordinatorURL}, d.overlords...) {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			d.allowed[origin(p)] = true
		}
	}
	d.client = &http.Client{Timeout: cfg.HTTPTimeout, CheckRedirect: d.checkRedirect}
	return d
}

// origin is a URL's scheme and host, in lower case.
func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

// checkRedirect follows a redirect only to a configured host, with the
// credentials (Go has already dropped them for another host).
func (d *druidAPI) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return fmt.Errorf("%w: more than 5 redirects from %s", errRedirect, via[0].URL.Redacted())
	}
	if !d.allowed[origin(req.URL)] {
		return fmt.Errorf("%w: Druid redirected %s to %s, which is not a configured Druid host: if it is the Overlord leader, "+
			"add it to --druid-overlord", errRedirect, via[0].URL.Redacted(), origin(req.URL))
	}
	if d.cred != nil {
		req.SetBasicAuth(d.cred.Username, d.cred.Password)
	}
	return nil
}

func (d *druidAPI) current() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.overlord
}

// do sends one request to Druid and reads the answer, at most 64 MiB. An
// Overlord request that a redirect took to the leader goes there next.
func (d *druidAPI) do(ctx context.Context, method, u string, body []byte) (int, []byte, error) {
	status, data, final, err := send(ctx, d.client, method, u, body, d.cred)
	if err == nil && final != nil && strings.HasPrefix(final.Path, "/druid/indexer/") {
		if from, perr := url.Parse(u); perr == nil && origin(from) != origin(final) {
			d.mu.Lock()
			d.overlord = origin(final)
			d.mu.Unlock()
			d.log.Info("following the Overlord leader", slog.String("leader", origin(final)))
		}
	}
	return status, data, err
}

// send sends one request and reads the answer, at most 64 MiB; final is
// the URL that answered (after redirects).
func send(ctx context.Context, client *http.Client, method, u string, body []byte, cred *credential) (int, []byte, *url.URL, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if cred != nil {
		req.SetBasicAuth(cred.Username, cred.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, nil, nil, fmt.Errorf("read answer of %s %s: %w", method, req.URL.Redacted(), err)
	}
	return resp.StatusCode, data, resp.Request.URL, nil
}

// probe checks, before anything is submitted, that the Broker serves
// SQL-based ingestion (GET /druid/v2/sql/task/enabled, SqlTaskResource's
// probe) and that an Overlord answers for the task API (GET
// /druid/indexer/v1/isLeader, which every Overlord serves itself: 200
// {"leader": true} from the leader or through a Router's management
// proxy, 404 {"leader": false} from a standby). It asks the leader from
// then on.
func (d *druidAPI) probe(ctx context.Context) error {
	status, body, err := d.do(ctx, http.MethodGet, d.broker+"/druid/v2/sql/task/enabled", nil)
	switch {
	case err != nil:
		return fmt.Errorf("reach the Druid Broker %s: %w", d.broker, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("the Druid Broker %s refused the credentials (%d): check --druid-auth-file", d.broker, status)
	case status == http.StatusNotFound:
		return fmt.Errorf("%s does not serve SQL-based ingestion (GET /druid/v2/sql/task/enabled: 404): point --druid-broker "+
			"(or --druid) at a Broker or a Router, and load the multi-stage-query extension", d.broker)
	case status != http.StatusOK:
		return fmt.Errorf("the Druid Broker %s answered %d: %s", d.broker, status, snippet(body))
	}
	var found []string
	leader := ""
	var problems []string
	for _, o := range d.overlords {
		status, body, err := d.do(ctx, http.MethodGet, o+"/druid/indexer/v1/isLeader", nil)
		var ans struct {
			Leader *bool `json:"leader"`
		}
		isJSON := err == nil && json.Unmarshal(body, &ans) == nil && ans.Leader != nil
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", o, err))
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return fmt.Errorf("the Druid Overlord %s refused the credentials (%d): check --druid-auth-file", o, status)
		case status == http.StatusOK && isJSON && *ans.Leader:
			found = append(found, o)
			if leader == "" {
				leader = o
			}
		case status == http.StatusNotFound && isJSON && !*ans.Leader:
			found = append(found, o) // a standby: it redirects to the leader
		case status == http.StatusNotFound:
			problems = append(problems, fmt.Sprintf("%s does not serve the Overlord's task API (GET /druid/indexer/v1/isLeader: 404): "+
				"point --druid-overlord (or --druid) at the Overlords, or at a Router with druid.router.managementProxy.enabled=true", o))
		default:
			problems = append(problems, fmt.Sprintf("%s answered %d: %s", o, status, snippet(body)))
		}
	}
	if len(found) == 0 {
		return fmt.Errorf("no Druid Overlord answers: %s", strings.Join(problems, "; "))
	}
	for _, p := range problems {
		d.log.Warn("druid overlord not answering", slog.String("problem", p))
	}
	d.mu.Lock()
	d.overlord = found[0]
	if leader != "" {
		d.overlord = leader
	}
	d.mu.Unlock()
	return nil
}

// taskID is the id of the task Druid makes of a statement whose context
// has sqlQueryId id: MSQTaskQueryMaker names the controller task
// MSQTasks.controllerTaskId(plannerContext.getSqlQueryId()), "query-"
// and the id. Druid refuses a second task of one id ("Task [%s] already
// exists"), so every submission takes a new one.
func taskID(sqlQueryID string) string { return "query-" + sqlQueryID }

// newQueryID is a new sqlQueryId for a statement of sync's.
func newQueryID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return "sidecar-sync-" + hex.EncodeToString(b[:])
}

// submit posts an MSQ statement to the Broker under sqlQueryId queryID
// and returns its task id (SqlTaskResource answers 202 with {"taskId",
// "state"}).
func (d *druidAPI) submit(ctx context.Context, query string, qctx map[string]any, queryID string) (string, error) {
	qctx = maps.Clone(qctx)
	if qctx == nil {
		qctx = map[string]any{}
	}
	qctx["sqlQueryId"] = queryID
	body, err := json.Marshal(map[string]any{"query": query, "context": qctx})
	if err != nil {
		return "", fmt.Errorf("encode SQL task: %w", err)
	}
	status, resp, err := d.do(ctx, http.MethodPost, d.broker+"/druid/v2/sql/task", body)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return "", fmt.Errorf("Druid answered %d: %s", status, snippet(resp))
	}
	var ans struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(resp, &ans); err != nil || ans.TaskID == "" {
		return "", fmt.Errorf("Druid's answer holds no taskId: %s", snippet(resp))
	}
	return ans.TaskID, nil
}

// taskStatus is what the Overlord says of a task.
type taskStatus struct {
	// State is SUCCESS, FAILED or RUNNING (TaskState).
	State string
	// Runner is the runner's state (RunnerTaskState): PENDING while the
	// task waits for a task slot.
	Runner string
	Msg    string
}

// The status answers that are no status.
var (
	// errUnknownTask: the Overlord does not hold the task. Its
	// TaskResourceFilter answers 400 "Cannot find any task with id";
	// getTaskStatus 404 {"task": id} without a status.
	errUnknownTask = errors.New("the Overlord does not know the task")
	// errNotOverlord: a 404 that is not the Overlord's, such as a
	// Router's without the management proxy.
	errNotOverlord = errors.New("answered 404, not as the Overlord does")
)

// status asks the Overlord for a task's status (OverlordResource
// .getTaskStatus: {"task": id, "status": TaskStatusPlus}).
func (d *druidAPI) status(ctx context.Context, id string) (taskStatus, error) {
	u := d.current() + "/druid/indexer/v1/task/" + url.PathEscape(id) + "/status"
	status, body, err := d.do(ctx, http.MethodGet, u, nil)
	if err != nil {
		return taskStatus{}, err
	}
	var ans struct {
		Task   string `json:"task"`
		Status *struct {
			Status           string `json:"status"`
			StatusCode       string `json:"statusCode"`
			RunnerStatusCode string `json:"runnerStatusCode"`
			ErrorMsg         string `json:"errorMsg"`
		} `json:"status"`
	}
	isJSON := json.Unmarshal(body, &ans) == nil
	switch {
	case status == http.StatusBadRequest && strings.HasPrefix(string(body), "Cannot find any task with id"),
		status == http.StatusNotFound && isJSON && ans.Task == id && ans.Status == nil:
		return taskStatus{}, errUnknownTask
	case status == http.StatusNotFound:
		return taskStatus{}, fmt.Errorf("%s %w: %s", u, errNotOverlord, snippet(body))
	case status != http.StatusOK:
		return taskStatus{}, fmt.Errorf("task status: Druid answered %d: %s", status, snippet(body))
	case !isJSON || ans.Status == nil:
		return taskStatus{}, fmt.Errorf("task status: no status in %s", snippet(body))
	}
	st := taskStatus{State: ans.Status.StatusCode, Runner: ans.Status.RunnerStatusCode, Msg: ans.Status.ErrorMsg}
	if st.State == "" {
		st.State = ans.Status.Status
	}
	return st, nil
}

// freeSlots is how many task slots the cluster has free, from the
// Overlord's GET /druid/indexer/v1/totalWorkerCapacity
// (currentClusterCapacity less usedClusterCapacity, Druid 28 and later);
// known is false when Druid does not say (an older Druid, a runner that
// does not know, or a user without CONFIG read permission), and then
// sync goes by its own tasks' states alone.
func (d *druidAPI) freeSlots(ctx context.Context) (free int, known bool) {
	d.mu.Lock()
	no := d.noCapacity
	d.mu.Unlock()
	if no {
		return 0, false
	}
	status, body, err := d.do(ctx, http.MethodGet, d.current()+"/druid/indexer/v1/totalWorkerCapacity", nil)
	if err != nil {
		return 0, false // asked again next time
	}
	var ans struct {
		Current *int `json:"currentClusterCapacity"`
		Used    *int `json:"usedClusterCapacity"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &ans) != nil || ans.Current == nil || ans.Used == nil || *ans.Current < 0 || *ans.Used < 0 {
		d.mu.Lock()
		d.noCapacity = true
		d.mu.Unlock()
		d.log.Info("druid does not tell its free task slots: pacing by the tasks' own states", slog.Int("status", status))
		return 0, false
	}
	return *ans.Current - *ans.Used, true
}

// version is the Druid release of the Broker, from its GET /status
// (StatusResource: {"version": …}); "" when it does not say.
func (d *druidAPI) version(ctx context.Context) string {
	status, body, err := d.do(ctx, http.MethodGet, d.broker+"/status", nil)
	var ans struct {
		Version string `json:"version"`
	}
	if err != nil || status != http.StatusOK || json.Unmarshal(body, &ans) != nil {
		return ""
	}
	return ans.Version
}

// markUnused drops the segments of ds that lie in interval (START/END,
// or ALL) through the Coordinator: POST
// /druid/coordinator/v1/datasources/{ds}/markUnused with {"interval"}
// (DataSourcesResource.markSegmentsAsUnused, which marks the used
// segments the interval contains), and for ALL DELETE
// /druid/coordinator/v1/datasources/{ds}
// (markAsUnusedAllSegmentsOrKillUnusedSegmentsInInterval, which marks all
// of them); answered 200 with a count, or 204.
func (d *druidAPI) markUnused(ctx context.Context, ds, interval string) error {
	u := d.coordinator + "/druid/coordinator/v1/datasources/" + url.PathEscape(ds)
	method, body := http.MethodDelete, []byte(nil)
	if !strings.EqualFold(interval, "ALL") {
		var err error
		if body, err = json.Marshal(map[string]string{"interval": interval}); err != nil {
			return fmt.Errorf("encode markUnused: %w", err)
		}
		method, u = http.MethodPost, u+"/markUnused"
	}
	status, resp, err := d.do(ctx, method, u, body)
	switch {
	case err != nil:
		return fmt.Errorf("mark the segments of %s in %s unused: %w", ds, interval, err)
	case status == http.StatusNotFound:
		return fmt.Errorf("mark the segments of %s in %s unused: %s answered 404: point --druid-coordinator (or --druid) at a "+
			"Coordinator, or at a Router with druid.router.managementProxy.enabled=true", ds, interval, d.coordinator)
	case status != http.StatusOK && status != http.StatusNoContent:
		return fmt.Errorf("mark the segments of %s in %s unused: Druid answered %d: %s", ds, interval, status, snippet(resp))
	}
	return nil
}

// snippet is an answer's body for an error message, cut short.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
