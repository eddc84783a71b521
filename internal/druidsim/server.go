package druidsim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
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
	// Lose runs the task but the overlord then forgets it: its status is a
	// 404, as after an overlord restart without metadata. The work is done
	// and nobody can know.
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

type task struct {
	state    string // RUNNING, SUCCESS, FAILED
	errorMsg string
	polls    int
	lost     bool
}

// Server is Druid's HTTP API over a Druid model.
type Server struct {
	*Druid
	// Username and Password, when set, are required as HTTP Basic
	// credentials on every request.
	Username, Password string
	// Decide picks each task's outcome; nil means Succeed.
	Decide func(id string, s Submission) Outcome
	// Polls is how many status requests answer RUNNING before the end
	// state.
	Polls int

	submitted []Submission
}

// NewServer returns a server over a new, empty model.
func NewServer() *Server { return &Server{Druid: New()} }

// Submitted are the tasks submitted so far, in order.
func (s *Server) Submitted() []Submission {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Submission(nil), s.submitted...)
}

// ServeHTTP serves the routes Druid documents for SQL-based ingestion and
// task status.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.Username != "" {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(s.Username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(s.Password)) != 1 {
			druidError(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
	}
	switch {
	case r.URL.Path == "/druid/v2/sql/task":
		s.postSQLTask(w, r)
	case r.URL.Path == "/druid/indexer/v1/task":
		s.postTask(w, r)
	case strings.HasPrefix(r.URL.Path, "/druid/indexer/v1/task/") && strings.HasSuffix(r.URL.Path, "/status"):
		s.getStatus(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/druid/indexer/v1/task/"), "/status"))
	default:
		druidError(w, http.StatusNotFound, "no such route")
	}
}

// druidError writes an error the way Druid's APIs do.
func druidError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": msg})
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

// postSQLTask is POST /druid/v2/sql/task: {"query": …, "context": {…}},
// answered {"taskId": …, "state": "RUNNING"}.
func (s *Server) postSQLTask(w http.ResponseWriter, r *http.Request) {
	body, ok := jsonBody(w, r)
	if !ok {
		return
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
		return
	}
	if req.Query == nil || *req.Query == "" {
		druidError(w, http.StatusBadRequest, "query is required")
		return
	}
	sub := Submission{Query: *req.Query, Context: req.Context}
	id := s.submit(r, sub)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"taskId": id, "state": "RUNNING"})
}

// postTask is POST /druid/indexer/v1/task, answered {"task": …}.
func (s *Server) postTask(w http.ResponseWriter, r *http.Request) {
	body, ok := jsonBody(w, r)
	if !ok {
		return
	}
	if !json.Valid(body) {
		druidError(w, http.StatusBadRequest, "task is not JSON")
		return
	}
	id := s.submit(r, Submission{Task: body})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"task": id})
}

// submit records a task and runs it (or not) as Decide says.
func (s *Server) submit(r *http.Request, sub Submission) string {
	s.mu.Lock()
	s.n++
	id := fmt.Sprintf("query-%04d", s.n)
	sub.ID = id
	s.submitted = append(s.submitted, sub)
	s.mu.Unlock()

	outcome := Succeed
	if s.Decide != nil {
		outcome = s.Decide(id, sub)
	}
	t := &task{state: "SUCCESS"}
	if outcome == Fail {
		t.state, t.errorMsg = "FAILED", "injected failure"
	} else {
		// A task outlives the request that submitted it.
		ctx := context.WithoutCancel(r.Context())
		var err error
		if sub.Task != nil {
			err = s.ExecTask(ctx, sub.Task)
		} else {
			err = s.ExecSQL(ctx, sub.Query, sub.Context)
		}
		if err != nil {
			t.state, t.errorMsg = "FAILED", err.Error()
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("task %s: %w", id, err))
			s.mu.Unlock()
		}
		t.lost = outcome == Lose
	}
	s.mu.Lock()
	s.tasks[id] = t
	s.mu.Unlock()
	return id
}

// getStatus is GET /druid/indexer/v1/task/{id}/status.
func (s *Server) getStatus(w http.ResponseWriter, r *http.Request, id string) {
	if r.Method != http.MethodGet {
		druidError(w, http.StatusMethodNotAllowed, "GET only")
		return
	}
	s.mu.Lock()
	t, ok := s.tasks[id]
	state, msg := "", ""
	if ok && !t.lost {
		state, msg = t.state, t.errorMsg
		if t.polls < s.Polls {
			t.polls++
			state, msg = "RUNNING", ""
		}
	}
	s.mu.Unlock()
	if !ok || t.lost {
		druidError(w, http.StatusNotFound, fmt.Sprintf("Unable to find task with id [%s]", id))
		return
	}
	status := map[string]any{"id": id, "status": state, "statusCode": state, "duration": -1}
	if msg != "" {
		status["errorMsg"] = msg
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"task": id, "status": status})
}
