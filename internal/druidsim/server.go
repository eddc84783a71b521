package druidsim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Outcome is what becomes of a submitted task.
type Outcome int

// The outcomes a test can give a task.
const (
	// Succeed runs the task; it ends SUCCESS, or FAILED when Druid would
	// refuse it (and Errors lists it).
	Succeed Outcome = iota
	// Fail ends the task FAILED without running it, as a task killed or
	// out of resources does.
	Fail
	// Lose runs the task but the overlord then forgets it: its status is
	// refused as an unknown task's, as after an overlord restart without
	// metadata. The work is done and nobody can know.
	Lose
)

// Submission is one task a client submitted.
type Submission struct {
	ID      string
	Query   string
	Context map[string]any
	// Task is an index_parallel task's JSON, when not an SQL task.
	Task []byte
}

// Server is Druid's HTTP API over a Druid model: a cluster of a Broker, an
// Overlord leader and the task slots of its workers. ServeHTTP answers as
// a Router with the management proxy enabled (every route of both);
// Broker, Overlord, Standby and Router answer as those processes do.
type Server struct {
	*Druid
	// Username and Password, when set, are required as HTTP Basic
	// credentials on every request, by every process.
	Username, Password string
	// Decide picks each task's outcome; nil means Succeed.
	Decide func(id string, s Submission) Outcome
	// Polls is how many status requests of a task answer RUNNING before
	// its end state, after it ended.
	Polls int
	// LeaderURL is the Overlord leader's base URL, as GET
	// /druid/indexer/v1/leader answers it and standbys redirect to it.
	LeaderURL string

	// Capacity is the cluster's task slots (the sum of the workers'
	// druid.worker.capacity); 0 is without bound. A task takes a slot
	// per Druid task it runs: an MSQ statement its controller and
	// maxNumTasks-1 workers, an index_parallel task its supervisor and
	// maxNumConcurrentSubTasks subtasks.
	Capacity int
	// Clock is the cluster's time; nil is time.Now. Tasks start, run and
	// time out on it, when a request comes.
	Clock func() time.Time
	// StartupTime is how long a controller (or supervisor) runs before
	// it submits its workers (or subtasks): a peon's JVM starting, the
	// query planned. Statements submitted within it of each other all
	// get their controllers started before any worker is queued.
	StartupTime time.Duration
	// RunTime is how long a task runs once all its Druid tasks started.
	RunTime time.Duration
	// TaskStartTimeout is how long an MSQ controller waits for a worker
	// slot before it fails with TaskStartTimeout; 0 is 10 minutes.
	TaskStartTimeout time.Duration
	// Runner is the task runner, whose payload limit applies (see
	// Runner).
	Runner Runner

	// run serializes the requests: the cluster's state moves one request
	// at a time.
	run       sync.Mutex
	submitted []Submission
	slots     slots
}

// NewServer returns a server over a new, empty model.
func NewServer() *Server { return &Server{Druid: New()} }

// Submitted are the tasks submitted so far, in order.
func (s *Server) Submitted() []Submission {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Submission(nil), s.submitted...)
}

// route is one Druid HTTP endpoint a process serves.
type route func(s *Server, w http.ResponseWriter, r *http.Request) bool

// The endpoints of each process. SqlTaskResource (/druid/v2/sql/task) is
// bound on the Broker only: its Guice module, SqlTaskModule in the
// multi-stage-query extension, is annotated @LoadScope(roles =
// NodeRole.BROKER_JSON_NAME). The task API (OverlordResource,
// /druid/indexer/v1) is the Overlord's.
// The Overlord also answers as the Coordinator (markUnused), as a
// Coordinator with druid.coordinator.asOverlord.enabled does; every
// process answers GET /status.
var (
	brokerRoutes   = []route{sqlTaskRoute, versionRoute}
	overlordRoutes = []route{taskRoute, statusRoute, leaderRoute, capacityRoute, markUnusedRoute, versionRoute}
)

// ServeHTTP answers as a Router with druid.router.managementProxy.enabled:
// /druid/v2/* goes to a Broker, /druid/indexer/* to the Overlord leader.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, brokerRoutes, overlordRoutes)
}

// Broker answers as a Broker: SQL tasks are submitted here; the task API
// is not served (404).
func (s *Server) Broker() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, brokerRoutes) })
}

// Overlord answers as the Overlord leader: the task API, but not
// /druid/v2/sql/task (404).
func (s *Server) Overlord() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, overlordRoutes) })
}

// Router answers as a Router. Its RouterJettyServerInitializer maps
// /druid/v2/* to the query forwarding servlet (to a Broker) and
// /druid/indexer/* to the management forwarding servlet (to the Overlord
// leader) only when druid.router.managementProxy.enabled is true, which it
// is not by default; any other path falls to Jetty's DefaultServlet on
// "/*", which answers 404 with an HTML page.
func (s *Server) Router(managementProxy bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if managementProxy {
			s.serve(w, r, brokerRoutes, overlordRoutes)
			return
		}
		s.serve(w, r, brokerRoutes)
	})
}

// Standby answers as an Overlord that is not the leader. Its RedirectFilter
// (OverlordRedirectInfo) serves /druid/indexer/v1/leader and
// /druid/indexer/v1/isLeader itself and answers every other request with
// 307 Temporary Redirect to the same path and query at the leader (503
// when it knows no leader). The security filters run before it, so the
// request must carry credentials, and so must the one to the leader.
func (s *Server) Standby() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(w, r) {
			return
		}
		switch r.URL.Path {
		case "/druid/indexer/v1/isLeader":
			writeJSON(w, http.StatusNotFound, map[string]any{"leader": false})
			return
		case "/druid/indexer/v1/leader":
			writeJSON(w, http.StatusOK, s.LeaderURL)
			return
		}
		if s.LeaderURL == "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		loc := strings.TrimRight(s.LeaderURL, "/") + r.URL.Path
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
}

// serve authenticates and answers with the first route that takes the
// request, else as Jetty's DefaultServlet does.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, tables ...[]route) {
	if !s.authorized(w, r) {
		return
	}
	s.run.Lock()
	defer s.run.Unlock()
	for _, routes := range tables {
		for _, rt := range routes {
			if rt(s, w, r) {
				return
			}
		}
	}
	jettyNotFound(w, r)
}

// authorized checks the Basic credentials, as Druid's basic authenticator
// does on every process.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.Username == "" {
		return true
	}
	u, p, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(s.Username)) != 1 ||
		subtle.ConstantTimeCompare([]byte(p), []byte(s.Password)) != 1 {
		druidError(w, http.StatusUnauthorized, "Unauthorized")
		return false
	}
	return true
}

// jettyNotFound is what a Druid process answers for a path no servlet
// serves: Jetty's HTML error page.
func jettyNotFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html;charset=iso-8859-1")
	w.WriteHeader(http.StatusNotFound)
	_, _ = fmt.Fprintf(w, "<html>\n<head>\n<title>Error 404 Not Found</title>\n</head>\n<body><h2>HTTP ERROR 404 Not Found</h2>\n"+
		"<table>\n<tr><th>URI:</th><td>%s</td></tr>\n</table>\n</body>\n</html>\n", r.URL.Path)
}

// druidError writes an error the way Druid's APIs do.
func druidError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// jsonBody checks the method and media type and reads the body.
func jsonBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		druidError(w, http.StatusMethodNotAllowed, "POST only")
		return nil, false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		druidError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return nil, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		druidError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	return body, true
}

// sqlTaskRoute is SqlTaskResource: POST /druid/v2/sql/task with {"query":
// …, "context": {…}}, answered 202 Accepted with {"taskId": …, "state":
// "RUNNING"} (buildTaskResponse), and GET /druid/v2/sql/task/enabled,
// answered 200 {"enabled": true} (doGetEnabled: "callers can check if this
// resource is installed without actually issuing a query").
func sqlTaskRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/druid/v2/sql/task/enabled":
		if r.Method != http.MethodGet {
			druidError(w, http.StatusMethodNotAllowed, "GET only")
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"enabled": true})
		return true
	case "/druid/v2/sql/task":
	default:
		return false
	}
	body, ok := jsonBody(w, r)
	if !ok {
		return true
	}
	// Druid's mapper ignores properties it does not know
	// (DefaultObjectMapper: FAIL_ON_UNKNOWN_PROPERTIES false).
	dec := json.NewDecoder(strings.NewReader(string(body)))
	var req struct {
		Query   *string        `json:"query"`
		Context map[string]any `json:"context"`
	}
	if err := dec.Decode(&req); err != nil || dec.More() {
		druidError(w, http.StatusBadRequest, fmt.Sprintf("bad SQL task body: %v", err))
		return true
	}
	if req.Query == nil || *req.Query == "" {
		druidError(w, http.StatusBadRequest, "query is required")
		return true
	}
	id, err := s.submit(r, Submission{Query: *req.Query, Context: req.Context})
	if err != nil {
		// SqlTaskResource answers the Overlord's refusal as a 500.
		druidError(w, http.StatusInternalServerError, err.Error())
		return true
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"taskId": id, "state": "RUNNING"})
	return true
}

// versionRoute is StatusResource: GET /status, answered {"version": …}
// with the release modelled.
func versionRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != "/status" {
		return false
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": fmt.Sprintf("%d.0.0", s.version())})
	return true
}

// markUnusedRoute is the Coordinator's DataSourcesResource
// .markSegmentsAsUnused: POST
// /druid/coordinator/v1/datasources/{ds}/markUnused with {"interval"}
// drops the segments the interval contains (and so their rows), answered
// {"numChangedSegments": n}.
// DELETE /druid/coordinator/v1/datasources/{ds}
// (markAsUnusedAllSegmentsOrKillUnusedSegmentsInInterval) drops them all.
func markUnusedRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/druid/coordinator/v1/datasources/")
	if ok && r.Method == http.MethodDelete && rest != "" && !strings.Contains(rest, "/") {
		s.advance()
		writeJSON(w, http.StatusOK, map[string]any{"numChangedSegments": s.markUnused(rest, math.MinInt64, math.MaxInt64)})
		return true
	}
	ds, ok2 := strings.CutSuffix(rest, "/markUnused")
	if !ok || !ok2 || strings.Contains(ds, "/") {
		return false
	}
	body, ok := jsonBody(w, r)
	if !ok {
		return true
	}
	var req struct {
		Interval string `json:"interval"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Interval == "" {
		druidError(w, http.StatusBadRequest, "Invalid request payload, either interval or segmentIds array must be specified")
		return true
	}
	a, b, _ := strings.Cut(req.Interval, "/")
	lo, err1 := time.Parse(time.RFC3339Nano, a)
	hi, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil {
		druidError(w, http.StatusBadRequest, fmt.Sprintf("interval %q: the model reads START/END instants", req.Interval))
		return true
	}
	s.advance()
	n := s.markUnused(ds, lo.UnixMilli(), hi.UnixMilli())
	writeJSON(w, http.StatusOK, map[string]any{"numChangedSegments": n})
	return true
}

// taskRoute is OverlordResource.taskPost: POST /druid/indexer/v1/task,
// answered {"task": …}.
func taskRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != "/druid/indexer/v1/task" {
		return false
	}
	body, ok := jsonBody(w, r)
	if !ok {
		return true
	}
	if !json.Valid(body) {
		druidError(w, http.StatusBadRequest, "task is not JSON")
		return true
	}
	id, err := s.submit(r, Submission{Task: body})
	if err != nil {
		druidError(w, http.StatusBadRequest, err.Error())
		return true
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": id})
	return true
}

// leaderRoute is OverlordResource.getLeader and isLeader: the leader
// answers isLeader with 200 {"leader": true}.
func leaderRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/druid/indexer/v1/isLeader":
		writeJSON(w, http.StatusOK, map[string]any{"leader": true})
	case "/druid/indexer/v1/leader":
		writeJSON(w, http.StatusOK, s.LeaderURL)
	default:
		return false
	}
	return true
}

// capacityRoute is OverlordResource.getTotalWorkerCapacity: GET
// /druid/indexer/v1/totalWorkerCapacity, answered with
// currentClusterCapacity, maximumCapacityWithAutoScale and (Druid 28,
// apache/druid#14888) usedClusterCapacity; -1 where the task runner does
// not know (a runner that is not a WorkerTaskRunner).
func capacityRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != "/druid/indexer/v1/totalWorkerCapacity" {
		return false
	}
	s.advance()
	current, used := -1, -1
	if s.Capacity > 0 {
		current, used = s.Capacity, s.slots.used
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"currentClusterCapacity": current, "maximumCapacityWithAutoScale": current, "usedClusterCapacity": used,
	})
	return true
}

// submit records a task and queues it for the task slots, or fails it as
// Decide says. A task runs (and its statement or spec takes effect) when
// it completes on the cluster's clock; without a Capacity or a RunTime
// that is at once. An SQL task whose context has sqlQueryId is named
// "query-" and that id (MSQTaskQueryMaker, MSQTasks.controllerTaskId),
// and refused when a task of that id exists (TaskQueue.add).
func (s *Server) submit(r *http.Request, sub Submission) (string, error) {
	s.mu.Lock()
	s.n++
	id := fmt.Sprintf("query-%04d", s.n)
	if q, ok := sub.Context["sqlQueryId"].(string); ok && q != "" {
		id = "query-" + q
	}
	if _, dup := s.tasks[id]; dup {
		s.mu.Unlock()
		return id, fmt.Errorf("Task [%s] already exists.", id)
	}
	sub.ID = id
	s.submitted = append(s.submitted, sub)
	s.mu.Unlock()

	outcome := Succeed
	if s.Decide != nil {
		outcome = s.Decide(id, sub)
	}
	t := &task{id: id, sub: sub, state: "RUNNING", lost: outcome == Lose,
		// A task outlives the request that submitted it.
		ctx: context.WithoutCancel(r.Context())}
	s.mu.Lock()
	s.tasks[id] = t
	s.mu.Unlock()
	if err := s.Runner.check(sub); err != nil {
		s.fail(t, err)
		return id, nil
	}
	if outcome == Fail {
		t.state, t.errorMsg = "FAILED", "injected failure"
		return id, nil
	}
	s.advance()
	s.slots.queue(t, s.now())
	s.advance()
	return id, nil
}

// fail ends a task FAILED by Druid: a refusal the sidecar caused.
func (s *Server) fail(t *task, err error) {
	t.state, t.errorMsg = "FAILED", err.Error()
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Errorf("task %s: %w", t.id, err))
	s.mu.Unlock()
}

// statusRoute is OverlordResource.getTaskStatus: GET
// /druid/indexer/v1/task/{id}/status, answered {"task": id, "status":
// TaskStatusPlus}. Its TaskResourceFilter looks the task up first and
// refuses one the Overlord's storage does not hold with 400 "Cannot find
// any task with id: [id]" (text, not JSON).
func statusRoute(s *Server, w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/druid/indexer/v1/task/")
	if !ok || !strings.HasSuffix(rest, "/status") {
		return false
	}
	id := strings.TrimSuffix(rest, "/status")
	if r.Method != http.MethodGet {
		druidError(w, http.StatusMethodNotAllowed, "GET only")
		return true
	}
	s.advance()
	s.mu.Lock()
	t, known := s.tasks[id]
	s.mu.Unlock()
	if !known || t.lost && t.state != "RUNNING" {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, "Cannot find any task with id: [%s]", id)
		return true
	}
	state, msg, runner := t.state, t.errorMsg, t.runnerState()
	if state != "RUNNING" && t.polls < s.Polls {
		t.polls++
		state, msg, runner = "RUNNING", "", "RUNNING"
	}
	status := map[string]any{"id": id, "status": state, "statusCode": state, "runnerStatusCode": runner, "duration": -1}
	if msg != "" {
		status["errorMsg"] = msg
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": id, "status": status})
	return true
}

func (s *Server) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

// advance moves the cluster to now: tasks start as slots free, end, or
// time out, in time order; each task that completes takes effect.
func (s *Server) advance() {
	for _, t := range s.slots.advance(s.now(), s.Capacity, clock{startup: s.StartupTime, run: s.RunTime, timeout: s.startTimeout()}) {
		if t.timedOut != "" {
			s.fail(t, fmt.Errorf("%s", t.timedOut))
			continue
		}
		var err error
		if t.sub.Task != nil {
			err = s.ExecTask(t.ctx, t.sub.Task)
		} else {
			err = s.ExecSQL(t.ctx, t.sub.Query, t.sub.Context)
		}
		if err != nil {
			s.fail(t, err)
			continue
		}
		t.state = "SUCCESS"
	}
}

// startTimeout is MSQWorkerTaskLauncher's maxTaskStartDelayMillis:
// IndexerControllerContext.newWorkerManager gives it 10 minutes (with up
// to 2 minutes of jitter either way, which the model leaves out).
func (s *Server) startTimeout() time.Duration {
	if s.TaskStartTimeout > 0 {
		return s.TaskStartTimeout
	}
	return 10 * time.Minute
}

// Peak is the most Druid tasks (controllers, workers, supervisors and
// subtasks) that were in flight at once: submitted and not yet ended,
// running or waiting for a slot.
func (s *Server) Peak() int {
	s.run.Lock()
	defer s.run.Unlock()
	return s.slots.peak
}

// InFlight is the Druid tasks in flight now.
func (s *Server) InFlight() int {
	s.run.Lock()
	defer s.run.Unlock()
	s.advance()
	return s.slots.inFlight
}
