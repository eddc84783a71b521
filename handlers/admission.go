package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// admit bounds how many requests of one kind run at once. Past the bound it
// answers 503 with Retry-After at once instead of queueing: Druid retries
// with backoff, and a queue would only hold connections and memory. A bound
// of 0 admits everything.
//
// The slots are made once, here: chi wraps every route of a group in the
// middleware separately, and all of them must share one bound.
func (s *server) admit(kind string, bound int) func(http.Handler) http.Handler {
	slots := make(chan struct{}, max(bound, 0))
	return func(next http.Handler) http.Handler {
		if bound <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
				next.ServeHTTP(w, r)
			default:
				if s.Metrics != nil {
					s.Metrics.AdmissionRejected.WithLabelValues(kind).Inc()
				}
				writeError(w, r, s.Logger, errorf(http.StatusServiceUnavailable, "overloaded",
					fmt.Sprintf("%d %s requests are running, the most this sidecar takes at once; retry shortly", bound, kind)))
			}
		})
	}
}

// renderFirst has a planning request's answer rendered into memory and
// written to the client only once the request is out of admit, whose slot
// is then free: a client that pipelines planning requests and never reads
// their answers (the answer's write blocks once the connection's buffers
// are full) holds a connection and its rendered answer, never a planning
// slot. The write then has the write deadline every answer has
// (writeDeadline). The answer goes out with its Content-Length, in chunks.
//
// A planning answer closes its connection (Connection: close): released
// slots alone did not hold, since net/http reads the next request a client
// pipelined as soon as an answer fits in the connection's buffers, so a
// client that wrote hundreds of planning requests at once and never read
// kept a slot busy, plan after plan, until megabytes of answers filled the
// server's send buffer. One connection now plans once; more plans cost
// more connections, which --max-connections bounds. Planning is rare and
// costs far more than a connection (Druid's tasks only read row streams,
// which keep their connections alive).
func (s *server) renderFirst(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := &renderedAnswer{header: w.Header()}
		next.ServeHTTP(a, r)
		a.writeTo(w)
	})
}

// renderChunk is how much of a rendered answer one write sends, so that a
// slow reader's writes keep moving the write deadline.
const renderChunk = 64 << 10

// renderedAnswer is an answer held in memory: its status, and its body.
// It shares the header map of the writer it will be written to.
type renderedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *renderedAnswer) Header() http.Header { return a.header }

func (a *renderedAnswer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *renderedAnswer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(p)
}

// writeTo writes the answer to w; a failed write ends it (the connection
// is broken, and net/http closes it).
func (a *renderedAnswer) writeTo(w http.ResponseWriter) {
	a.WriteHeader(http.StatusOK)
	w.Header().Set("Content-Length", strconv.Itoa(a.body.Len()))
	w.Header().Set("Connection", "close")
	w.WriteHeader(a.status)
	for b := a.body.Bytes(); len(b) > 0; {
		n := min(len(b), renderChunk)
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		b = b[n:]
	}
}

// readBody reads a planning request's body whole, within maxSpecBytes,
// before the request is admitted: a plan slot is taken only by a request
// whose body is in, so a client that trickles its body holds a connection
// (until bodyDeadline cuts it), never a slot. The handler reads the body
// from memory.
func (s *server) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSpecBytes))
		if err != nil {
			writeError(w, r, s.Logger, bodyError(err, s.BodyTimeout))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// bodyError is the answer to a request whose body could not be read.
func bodyError(err error, timeout time.Duration) error {
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &tooBig):
		return errorf(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", maxSpecBytes))
	case errors.As(err, &ne) && ne.Timeout():
		return errorf(http.StatusRequestTimeout, "body_timeout", fmt.Sprintf(
			"the request body did not arrive within %s; send it whole", timeout))
	}
	return fmt.Errorf("%w: read the request body: %w", errBadRequest, err)
}

// errPlanTimeout is the cause of a planning request's context past
// PlanTimeout; handle answers its error as 503 plan_timeout.
var errPlanTimeout = errors.New("the planning deadline passed")

// planDeadline bounds an admitted planning request to PlanTimeout: the
// catalog's and storage's calls take the request's context, so a catalog
// that never answers costs a slot for PlanTimeout, not for as long as the
// client waits.
func (s *server) planDeadline(next http.Handler) http.Handler {
	if s.PlanTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeoutCause(r.Context(), s.PlanTimeout, errPlanTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// memoryScope holds what a planning request reserves of the memory budget
// (splits.WithMemoryBudget) until the request is over, its answer rendered:
// the plan's files are held that long. renderFirst writes the answer after
// this returns, so a client that does not read holds no budget.
func (s *server) memoryScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, end := memory.WithScope(r.Context())
		defer end()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
