package reader_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// stallingStore wraps a table's FileIO: once armed, every read of a
// Parquet file gets nothing until the test ends, as from an object store
// that stopped answering mid-file. No real store stalls on cue, so the
// test holds the reads of the real files here, under the catalog's stall
// timeout, as handlers' TestStalledStoreAbortsTheStream holds an in-process
// S3 server's answers in a proxy.
type stallingStore struct {
	armed    *atomic.Bool
	released <-chan struct{}
	icebergio.IO
}

func (s stallingStore) Open(name string) (icebergio.File, error) {
	f, err := s.IO.Open(name)
	if err != nil || !strings.HasSuffix(name, ".parquet") {
		return f, err
	}
	return stallingFile{File: f, s: s}, nil
}

type stallingFile struct {
	icebergio.File
	s stallingStore
}

func (f stallingFile) stall() error {
	if !f.s.armed.Load() {
		return nil
	}
	<-f.s.released
	return errors.New("the stalled store was released")
}

func (f stallingFile) Read(p []byte) (int, error) {
	if err := f.stall(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f stallingFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.stall(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

// armingWriter arms the store once n bytes went out.
type armingWriter struct {
	bytes.Buffer
	n     int
	armed *atomic.Bool
}

func (w *armingWriter) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if w.Len() >= w.n {
		w.armed.Store(true)
	}
	return n, err
}

// TestStalledStoreAbortsTheStream: a stream whose object store stops
// sending in the middle of a data file fails with the catalog's
// ErrStalled (an ErrUnavailable, which the row route turns into an aborted
// stream, so that Druid, which reads without a timeout, retries it) once
// the store has sent nothing for the stall timeout, instead of hanging. The
// split packs three data files: the store stalls once the stream is under
// way, so the next file's reads stall after the first bytes went out;
// before the first byte, the same stall fails the open (the route's 503,
// handlers' TestStalledStoreAbortsTheStream). With the store answering,
// the stream reads whole.
func TestStalledStoreAbortsTheStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(catalogtest.Local(t, dir)), table.Identifier{"lake", "stall"}, 30_000, 3, 0.01, 0); err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	released := make(chan struct{})
	t.Cleanup(func() { close(released) })
	wrap := func(fsys icebergio.IO) icebergio.IO {
		return stallingStore{armed: &armed, released: released, IO: fsys}
	}
	cat := catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: dir},
		catalog.WithStallTimeout(200*time.Millisecond), catalog.WithFileIOWrapper(wrap))
	pr := servetest.New(t, cat, nil)
	p := pr.Plan(t, rowsRequest("lake.stall", 0))
	if len(p.Splits) != 1 || len(p.Splits[0].Parts) != 3 {
		t.Fatalf("%d splits, want 1 of the 3 files", len(p.Splits))
	}
	whole := pr.MustReadToken(t, p.Splits[0].Token)
	if len(whole) < 64<<10 {
		t.Fatalf("the stream with the store answering: %d bytes", len(whole))
	}

	st, err := pr.Open(ctx, p.Splits[0].Parts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := &armingWriter{n: 4096, armed: &armed}
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx, w, func() error { return nil }) }()
	// A deadline far beyond the stall timeout: it only keeps a broken test
	// from hanging.
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the stream hung with the store stalled")
	}
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d bytes with the store stalled", w.Len())
	}
	if !errors.Is(err, catalog.ErrStalled) || !errors.Is(err, fault.ErrUnavailable) {
		t.Fatalf("the stalled stream failed with %v, want ErrStalled", err)
	}
	if w.Len() < w.n || w.Len() >= len(whole) {
		t.Fatalf("the stalled stream wrote %d bytes, the whole stream is %d", w.Len(), len(whole))
	}

	// Stalled from the start: an error before the first byte, which Druid
	// retries too.
	st2, err := pr.Open(ctx, p.Splits[0].Parts)
	if err == nil {
		err = st2.Run(ctx, io.Discard, func() error { return nil })
		_ = st2.Close()
		t.Fatalf("a split whose store stalls opened; its run gave %v", err)
	}
	if !errors.Is(err, catalog.ErrStalled) {
		t.Fatalf("a split whose store stalls before the first byte: %v, want ErrStalled", err)
	}
}
