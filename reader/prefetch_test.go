package reader

import (
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	pqencoding "github.com/parquet-go/parquet-go/encoding"
)

// stubPages hands out n pages (n < 0: without end), then io.EOF; at
// panicAt (1-based) it panics instead.
type stubPages struct {
	n, read, panicAt int
	closed           atomic.Int32
}

func (s *stubPages) ReadPage() (parquet.Page, error) {
	s.read++
	if s.read == s.panicAt {
		panic("index out of range [7] with length 3")
	}
	if s.n >= 0 && s.read > s.n {
		return nil, io.EOF
	}
	v := int64(s.read)
	return parquet.Int64Type.NewPage(0, 1, pqencoding.Int64Values([]int64{v})), nil
}

func (s *stubPages) SeekToRow(int64) error { return nil }
func (s *stubPages) Close() error          { s.closed.Add(1); return nil }

func pageValue(t *testing.T, p parquet.Page) int64 {
	t.Helper()
	vals := make([]parquet.Value, 1)
	if n, _ := p.Values().ReadValues(vals); n != 1 {
		t.Fatal("a page without its value")
	}
	return vals[0].Int64()
}

func TestPrefetchPagesInOrder(t *testing.T) {
	stub := &stubPages{n: 3}
	p := prefetch(stub)
	for want := int64(1); want <= 3; want++ {
		page, err := p.ReadPage()
		if err != nil || pageValue(t, page) != want {
			t.Fatalf("page %d: %v", want, err)
		}
	}
	for range 2 {
		if _, err := p.ReadPage(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last page: %v, want io.EOF", err)
		}
	}
	if err := p.Close(); err != nil || p.Close() != nil || stub.closed.Load() != 1 {
		t.Fatalf("close: %v; the column chunk closed %d times", err, stub.closed.Load())
	}
}

func TestPrefetchPagesRecoversPanic(t *testing.T) {
	p := prefetch(&stubPages{n: 5, panicAt: 2})
	defer p.Close()
	if page, err := p.ReadPage(); err != nil || pageValue(t, page) != 1 {
		t.Fatalf("first page: %v", err)
	}
	for range 2 {
		if _, err := p.ReadPage(); !errors.Is(err, ErrCorruptFile) {
			t.Fatalf("the page that panics: %v, want ErrCorruptFile", err)
		}
	}
}

func TestPrefetchPagesCloseEarly(t *testing.T) {
	before := runtime.NumGoroutine()
	stub := &stubPages{n: -1}
	p := prefetch(stub)
	if _, err := p.ReadPage(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil || stub.closed.Load() != 1 {
		t.Fatalf("close: %v; the column chunk closed %d times", err, stub.closed.Load())
	}
	if _, err := p.ReadPage(); err == nil {
		t.Fatal("a page after Close")
	}
	// Close waits for the goroutine to stop reading; it is gone right after.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
