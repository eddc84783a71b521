// Package handlers is the sidecar's HTTP layer: a chi router whose handlers
// parse a request, call the planner (splits, changes), the reader or the
// catalog, write the answer and map errors. It holds no Iceberg logic of
// its own.
//
// New returns the router over a Config whose Catalogs each wire one
// catalog: the *catalog.Catalog as Tables, its *splits.Planner as Plans and
// Splits, a changes.Differ over the planner as Changes, a *reader.Reader as
// Rows. The package example serves the demo tables so.
package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/druidiceberg/sidecar/api"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/token"
)

// Verifier checks split tokens.
type Verifier interface {
	Decode(kind token.TokenKind, token string) (token.Token, error)
}

// Config wires the router.
type Config struct {
	// Catalogs are the catalogs served, each under its planner's name.
	Catalogs []Catalog
	// DefaultCatalog is the one a request without ?catalog= plans against;
	// empty means the only one (with several, such a request is a 400).
	DefaultCatalog string
	Signer         Verifier
	// PublicURL is the base of the URIs handed out; empty means the base
	// the request came in on, which a client names in its Host header, so
	// with BasicAuth it is required (a plan without it is a 500).
	PublicURL string
	Metrics   *metrics.Metrics
	Gatherer  prometheus.Gatherer
	Logger    *slog.Logger
	// BasicAuth, when set, is required on every route but /healthz,
	// /readyz and (unless AuthMetrics) /metrics.
	BasicAuth   []Credential
	AuthMetrics bool
	// MaxStreams and MaxPlans bound the row and file streams and the
	// planning requests served at once; past them the answer is 503 with
	// Retry-After. 0 means no bound.
	MaxStreams int
	MaxPlans   int
	// BodyTimeout is how long a request's body may take to arrive after
	// its header; past it the answer is 408 and the connection is closed.
	// A planning request is admitted (MaxPlans) only once its body is in.
	// 0 means no deadline.
	BodyTimeout time.Duration
	// PlanTimeout bounds a planning request (the catalog's and storage's
	// calls included) once admitted; past it the answer is 503
	// plan_timeout. It also bounds /readyz's calls to the catalogs. 0
	// means no deadline but the client's.
	PlanTimeout time.Duration
	// WriteStallTimeout bounds how long one write of an answer may take to
	// move its bytes into the connection; every write that does moves the
	// deadline on, so a slow reader is never cut, and a client that stops
	// reading is cut after it. 0 means no bound.
	WriteStallTimeout time.Duration
	// DruidPasswordEnv names the environment variable that Druid's tasks
	// read the password from; the generated inputSource refers to it and
	// never holds the password itself.
	DruidPasswordEnv string
	// Stopping, once closed, turns /readyz to 503 shutting_down whatever
	// the catalogs answer: the process is shutting down, and the
	// orchestrator should send its traffic elsewhere before the listener
	// closes. nil never closes.
	Stopping <-chan struct{}
}

type server struct {
	Config
	catalogs catalogs
}

// New returns the router.
func New(cfg Config) http.Handler {
	s := newServer(cfg)
	auth := newBasicAuth(cfg.BasicAuth)
	failures := newFailureLimiter(time.Now)
	planGate := s.admit("plan", cfg.MaxPlans)
	r := chi.NewRouter()
	// Every GET route answers HEAD too, as HTTP asks (RFC 9110, 9.3.2).
	r.Use(withRequestID, s.instrument, s.writeDeadline, s.bodyDeadline, middleware.GetHead)
	r.Group(func(r chi.Router) {
		r.Use(s.require(auth, failures), s.strictQuery)
		r.Group(func(r chi.Router) {
			r.Use(s.readBody, s.renderFirst, planGate, s.memoryScope, s.planDeadline)
			r.Get("/splits", s.handle(s.getSplits))
			r.Post("/splits", s.handle(s.postSplits))
			r.Get("/druid/task", s.handle(s.getDruidTask))
			r.Get("/druid/sql", s.handle(s.getDruidSQL))
			r.Get("/changes", s.handle(s.getChanges))
		})
		r.Group(func(r chi.Router) {
			r.Use(s.admit("stream", cfg.MaxStreams))
			for c, suffix := range rowSuffixes {
				r.Get("/splits/{token}"+suffix, s.handle(s.rowsHandler(c)))
			}
			r.Get("/files/{token}", s.handle(s.getFile))
		})
		r.With(s.readBody, s.renderFirst, planGate, s.memoryScope, s.planDeadline).Get("/", s.handle(s.getStatus))
		r.Get("/openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/yaml")
			_, _ = w.Write(api.OpenAPI)
		})
	})
	s.healthRoutes(r, auth, failures)
	return r
}

// NewHealth returns the router of the health listener: /healthz, /readyz
// and /metrics of New's router, served apart so that they answer while
// the main listener is at its connection cap.
func NewHealth(cfg Config) http.Handler {
	s := newServer(cfg)
	r := chi.NewRouter()
	r.Use(withRequestID, s.instrument, s.writeDeadline, middleware.GetHead)
	s.healthRoutes(r, newBasicAuth(cfg.BasicAuth), newFailureLimiter(time.Now))
	return r
}

// newServer fills in cfg's defaults.
func newServer(cfg Config) *server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// Every line logged with a request's context carries its id.
	if _, ok := cfg.Logger.Handler().(requestIDHandler); !ok {
		cfg.Logger = slog.New(LogHandler(cfg.Logger.Handler()))
	}
	return &server{Config: cfg, catalogs: newCatalogs(cfg.Catalogs, cfg.DefaultCatalog)}
}

// healthRoutes adds the routes that carry no table data and need no
// credentials (/metrics needs them with AuthMetrics), and the answers to a
// path or method no route takes.
func (s *server) healthRoutes(r chi.Router, auth *basicAuth, failures *failureLimiter) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	r.With(s.planDeadline).Get("/readyz", s.handle(s.getReady))
	if s.Gatherer != nil {
		h := promhttp.HandlerFor(s.Gatherer, promhttp.HandlerOpts{})
		if s.AuthMetrics {
			h = s.require(auth, failures)(h)
		}
		r.Method(http.MethodGet, "/metrics", h)
	}
	r.NotFound(s.handle(func(http.ResponseWriter, *http.Request) error {
		return errorf(http.StatusNotFound, "not_found", "no such route; see /openapi.yaml")
	}))
	r.MethodNotAllowed(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		allow := allowed(r)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return errorf(http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("method %s is not allowed on this route; use %s", fault.Quote(r.Method), strings.Join(allow, " or ")))
	}))
}

// allowed lists the methods the request's path answers, for the Allow
// header of a 405 (RFC 9110, 15.5.6); a GET route answers HEAD too.
func allowed(r *http.Request) []string {
	rctx := chi.RouteContext(r.Context())
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := m
		if m == http.MethodHead {
			probe = http.MethodGet
		}
		if rctx != nil && rctx.Routes.Match(chi.NewRouteContext(), probe, path) {
			out = append(out, m)
		}
	}
	return out
}

// handle adapts a handler that returns an error; the error is written by
// writeError, the one function that renders errors.
func (s *server) handle(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			if errors.Is(context.Cause(r.Context()), errPlanTimeout) {
				err = &apiError{Status: http.StatusServiceUnavailable, Code: "plan_timeout", Err: err, Message: fmt.Sprintf(
					"planning took longer than %s (--plan-timeout): the catalog or storage is slow, or the plan is larger "+
						"than the deadline allows", s.PlanTimeout)}
			}
			if ae := toAPIError(err); ae.Status == http.StatusServiceUnavailable && ae.Code != "shutting_down" && s.Metrics != nil {
				s.Metrics.CatalogErrors.Inc()
			}
			writeError(w, r, s.Logger, err)
		}
	}
}

// getReady is ready when every catalog answers and the sidecar is not
// shutting down: a sidecar that cannot plan one of its catalogs, or is
// about to close its listener, should not take the traffic meant for it.
func (s *server) getReady(w http.ResponseWriter, r *http.Request) error {
	select {
	case <-s.Stopping:
		return errorf(http.StatusServiceUnavailable, "shutting_down",
			"the sidecar is shutting down: its running streams finish, it takes no new work")
	default:
	}
	var errs []error
	for _, name := range s.catalogs.names {
		if err := s.catalogs.byName[name].Tables.Ping(r.Context()); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ready\n"))
	return nil
}
