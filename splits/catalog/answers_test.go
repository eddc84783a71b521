package catalog

import (
	"errors"
	"io"
	"strings"
	"testing"
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
