package handlers

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
)

// statusRecorder remembers the status and counts body bytes. It passes
// Unwrap through so http.NewResponseController still reaches the real
// writer's Flush.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rec *statusRecorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *statusRecorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(p)
	rec.bytes += int64(n)
	return n, err
}

func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// methodLabel is the method a request is counted and logged under: one of
// those the routes serve, else OTHER. A method is any token a client
// makes up, of any length: as a label or a log field each would be a
// series or a line of its own.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
		return method
	}
	return "OTHER"
}

// instrument records every request in the HTTP metrics and logs one line per
// request: route, status, bytes, rows (of a row stream) and duration. The
// route is chi's route pattern, never the raw path (which holds tokens). It
// runs inside withRequestID, so the line carries the request id.
func (s *server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		aborted := true
		defer func() {
			// A stream aborted with http.ErrAbortHandler passes through
			// here as a panic: record it, then let net/http cut the
			// connection. Any other panic is a bug of the sidecar's own
			// code (third-party decoding recovers where it runs): this is
			// the one place it ends, logged with its stack, answered 500
			// before the first byte and cut after it, never taking the
			// process down.
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				s.Logger.LogAttrs(r.Context(), slog.LevelError, "panic", slog.String("panic", fmt.Sprint(p)),
					slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					writeError(rec, r, s.Logger, fmt.Errorf("panic: %v", p))
					p, aborted = nil, false
				} else {
					p = http.ErrAbortHandler
				}
			}
			route := chi.RouteContext(r.Context()).RoutePattern()
			if route == "" {
				route = "unmatched"
			}
			code := rec.status
			if code == 0 {
				code = http.StatusOK
			}
			codeLabel := strconv.Itoa(code)
			if aborted {
				codeLabel = "aborted"
			}
			elapsed := time.Since(start)
			method := methodLabel(r.Method)
			if s.Metrics != nil {
				s.Metrics.HTTPRequests.WithLabelValues(route, method, codeLabel).Inc()
				s.Metrics.HTTPDuration.WithLabelValues(route, method, codeLabel).Observe(elapsed.Seconds())
				s.Metrics.BytesServed.WithLabelValues(route).Add(float64(rec.bytes))
			}
			level := slog.LevelInfo
			if aborted || code >= 500 {
				level = slog.LevelWarn
			}
			// Never the raw path, the query or a header: they may hold a
			// token, a password or a filter a user considers private.
			s.Logger.LogAttrs(r.Context(), level, "request",
				slog.String("method", method), slog.String("route", route), slog.String("status", codeLabel),
				slog.Int64("bytes", rec.bytes), slog.Int64("rows", requestRows(r.Context())),
				slog.Duration("duration", elapsed))
			if p != nil {
				panic(p)
			}
		}()
		next.ServeHTTP(rec, r)
		aborted = false
	})
}

// bodyDeadline gives a request's body BodyTimeout to arrive, from the end of
// its header: past it, a read of the body fails (readBody answers 408) and
// the connection is closed. net/http clears the deadline itself once the
// body has been read to its end, so a long plan or stream that follows is
// not cut. A request without a body has nothing to wait for.
func (s *server) bodyDeadline(next http.Handler) http.Handler {
	if s.BodyTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// Not supported by every ResponseWriter (httptest's
			// recorder has no connection): then there is no deadline.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.BodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// strictQuery answers 400 to a request whose query does not parse:
// r.URL.Query() silently drops a parameter with broken percent-encoding
// or a ';' separator, so mode=files%zz would plan as if no mode were
// given. The handlers then read the query with r.URL.Query(), which
// gives all of it.
func (s *server) strictQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			writeError(w, r, s.Logger, fmt.Errorf("%w: the query string does not parse (%w): percent-encode every "+
				"%%, and separate parameters with &", errBadRequest, err))
			return
		}
		next.ServeHTTP(w, r)
	})
}
