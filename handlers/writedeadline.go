package handlers

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// writeDeadline gives every answer a progress-based write deadline: each
// write (and flush) may take up to WriteStallTimeout to move its bytes into
// the connection, and every one that does moves the deadline on. A client
// that stops reading fills the connection's buffers, the write blocks, and
// past the bound the write fails and the connection is cut, freeing the
// stream's slot and memory; a slow reader that keeps reading is never cut,
// however long the stream. Druid stops reading while it persists segments,
// which is why the bound is minutes, not seconds.
//
// net/http sets no write deadline of its own (the server has no
// WriteTimeout), so the one set here lasts until the next request on the
// connection sets its own; the end of an answer, which net/http writes
// after the handler returns, is covered by the deadline set last.
func (s *server) writeDeadline(next http.Handler) http.Handler {
	if s.WriteStallTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw := &progressWriter{ResponseWriter: w, rc: http.NewResponseController(w), bound: s.WriteStallTimeout}
		pw.extend()
		defer func() {
			if pw.stalled && s.Metrics != nil {
				s.Metrics.WriteStalls.Inc()
			}
			pw.extend()
		}()
		next.ServeHTTP(pw, r)
	})
}

// progressWriter moves the connection's write deadline to bound from now
// before each write (of at most progressChunk bytes) and flush. It sets
// the deadline at most once per bound/16 (and per second): a row stream
// writes thousands of times a second, and the deadline only needs to stay
// about bound ahead.
type progressWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	bound time.Duration
	set   time.Time // when the deadline was last moved
	// stalled says that a write or flush passed the deadline.
	stalled bool
}

func (pw *progressWriter) extend() {
	now := time.Now()
	if now.Sub(pw.set) < min(pw.bound/16, time.Second) {
		return
	}
	pw.set = now
	// Not every ResponseWriter has a connection (httptest's recorder):
	// then there is no deadline to move.
	_ = pw.rc.SetWriteDeadline(now.Add(pw.bound))
}

func (pw *progressWriter) WriteHeader(code int) {
	pw.extend()
	pw.ResponseWriter.WriteHeader(code)
}

// progressChunk is the most one write hands the connection at once: a
// batch of a megabyte must not have to pass a slow reader's small window
// within one bound, only each chunk of it. Each write is a system call or
// two and a wake-up of the reader: 64 KiB writes cost a stream's server
// about 0.8 of the CPU per row that 16 KiB writes do (see
// docs/performance.md), and still ask a reader to take only 64 KiB a bound.
const progressChunk = 64 << 10

func (pw *progressWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return pw.ResponseWriter.Write(p)
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), progressChunk)
		pw.extend()
		m, err := pw.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			pw.stalled = pw.stalled || stalled(err)
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// FlushError flushes through the ResponseController, which reaches the
// connection's writer behind any other wrapper.
func (pw *progressWriter) FlushError() error {
	pw.extend()
	err := pw.rc.Flush()
	pw.stalled = pw.stalled || stalled(err)
	return err
}

func (pw *progressWriter) Unwrap() http.ResponseWriter { return pw.ResponseWriter }

// stalled reports a write cut by the write deadline: the client stopped
// reading.
func stalled(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}
