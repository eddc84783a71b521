package catalog

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// TestAnswerBound: an answer of a REST catalog outside a plan is read up
// to the bound and not a byte further (one past it tells a body that ends
// there from one that goes on); an answer of a plan is charged to the
// plan's meter as it arrives, and once the meter refuses not a byte more
// is read, and the refusal is what the plan reports.
func TestAnswerBound(t *testing.T) {
	const limit = 1 << 20
	endless := func(read *int64) io.ReadCloser {
		return io.NopCloser(readerFunc(func(p []byte) (int, error) {
			*read += int64(len(p))
			return len(p), nil
		}))
	}

	var read int64
	b := &boundedBody{body: endless(&read), limit: limit, what: "GET /v1/config"}
	_, err := io.Copy(io.Discard, b)
	if err == nil || !strings.Contains(err.Error(), "GET /v1/config answered with more than 1048576 bytes") {
		t.Fatalf("an endless answer: %v, want the bound named", err)
	}
	if read != limit+1 {
		t.Fatalf("read %d bytes of an endless answer, want the bound and one more (%d)", read, limit+1)
	}
	exact := &boundedBody{body: io.NopCloser(strings.NewReader(strings.Repeat("x", limit))), limit: limit}
	if n, err := io.Copy(io.Discard, exact); err != nil || n != limit {
		t.Fatalf("an answer of the bound's size: %d bytes, %v", n, err)
	}

	read = 0
	m := &cappedMeter{cap: limit}
	pa := &planAnswers{meter: m}
	b = &boundedBody{body: endless(&read), plan: pa}
	buf := make([]byte, 32<<10)
	for {
		if _, err = b.Read(buf); err != nil {
			break
		}
	}
	if !errors.Is(err, errMeterFull) || !errors.Is(pa.refused(), errMeterFull) {
		t.Fatalf("a plan's endless answer: %v (refused %v), want the meter's refusal", err, pa.refused())
	}
	if read > limit+int64(len(buf)) {
		t.Fatalf("read %d bytes after a meter of %d refused, want no more than one read past it", read, limit)
	}
	if _, err := b.Read(buf); !errors.Is(err, errMeterFull) || read > limit+int64(len(buf)) {
		t.Fatalf("a read after the refusal: %v, %d bytes read; want the refusal and nothing read", err, read)
	}
}

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

var errMeterFull = errors.New("the meter is full")

// cappedMeter refuses an answer past cap bytes.
type cappedMeter struct{ cap int64 }

func (m *cappedMeter) Answer(read int64) error {
	if read > m.cap {
		return errMeterFull
	}
	return nil
}

func (m *cappedMeter) Entries(int64) error { return nil }

// TestEndlessAnswer: a REST catalog whose table load answers with an
// endless body (a hand-written server: Iceberg's cannot be told to) is
// read to the bound of the catalog's transport and no further, and the
// load fails as a catalog's bad answer does (ErrUpstream), naming the
// bound, instead of filling the process.
func TestEndlessAnswer(t *testing.T) {
	const limit = 64 << 10
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, `{"defaults":{},"overrides":{}}`)
			return
		}
		_, _ = io.WriteString(w, `{"metadata-location":"`)
		chunk := []byte(strings.Repeat("x", 32<<10))
		// Stops at 64 MiB should the sidecar read on: the test then fails.
		for sent.Load() < 64<<20 {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	cat, err := New(Config{Type: "rest", Name: "lake", URI: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	cat.conn.answerLimit = limit
	_, err = cat.LoadTable(context.Background(), table.Identifier{"ns", "t"})
	if !errors.Is(err, fault.ErrUpstream) || !strings.Contains(err.Error(), "answered with more than 65536 bytes") {
		t.Fatalf("a table load answered with an endless body: %v, want ErrUpstream naming the bound", err)
	}
	srv.CloseClientConnections()
	// What the server wrote bounds what the transport read; the rest of
	// it sat in the sockets' buffers.
	if s := sent.Load(); s >= 32<<20 {
		t.Fatalf("the server wrote %d bytes before the sidecar stopped reading, want far less than its 64 MiB", s)
	}
}
