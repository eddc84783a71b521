package handlers

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
)

// RequestIDHeader carries a request's id in and out: a client's (or a
// proxy's) id is kept when it is sane, else the sidecar makes one; the answer
// always carries it.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds an id taken from a client, so that no client can
// fill the log with one header.
const maxRequestIDLen = 128

// ctxKey is the type of this package's context keys.
type ctxKey int

const requestKey ctxKey = iota

// requestState is what the middleware and the handlers of one request share.
// Only the request's own goroutine touches it.
type requestState struct {
	id string
	// rows is the number of rows a row stream emitted; it goes on the
	// request's log line.
	rows int64
}

// RequestID returns the id of the request ctx belongs to, or "" outside a
// request.
func RequestID(ctx context.Context) string {
	if st, ok := ctx.Value(requestKey).(*requestState); ok {
		return st.id
	}
	return ""
}

// addRows records rows emitted by the request's row stream.
func addRows(ctx context.Context, n int64) {
	if st, ok := ctx.Value(requestKey).(*requestState); ok {
		st.rows += n
	}
}

// requestRows returns the rows recorded with addRows.
func requestRows(ctx context.Context) int64 {
	if st, ok := ctx.Value(requestKey).(*requestState); ok {
		return st.rows
	}
	return 0
}

// withRequestID gives every request an id: the sanitized X-Request-Id of the
// request, or a new random one. The id is in the answer's X-Request-Id header
// and in the request's context, where LogHandler finds it.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = rand.Text()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := context.WithValue(r.Context(), requestKey, &requestState{id: id})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// validRequestID accepts 1 to maxRequestIDLen printable ASCII characters
// without spaces: nothing that could forge a log line or a header.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// LogHandler wraps h so that every record logged with a request's context
// carries the request's id as request_id:
//
//	log := slog.New(handlers.LogHandler(slog.NewJSONHandler(os.Stderr, nil)))
//	log.InfoContext(r.Context(), "something") // … "request_id":"…"
//
// New installs it on Config.Logger when it is not there yet.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := RequestID(ctx); id != "" {
		rec = rec.Clone()
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
