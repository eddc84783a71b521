package reader

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// failingWriter takes ok writes, then fails every one after.
type failingWriter struct {
	bytes.Buffer
	ok int
}

var errBroken = errors.New("connection reset")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.ok == 0 {
		return 0, errBroken
	}
	w.ok--
	return w.Buffer.Write(p)
}

func TestBatchWriterKeepsOrder(t *testing.T) {
	var out bytes.Buffer
	flushes := 0
	bw := startBatchWriter(&out, func() error { flushes++; return nil }, "f.parquet")
	var want bytes.Buffer
	buf := make([]byte, 0, 16)
	for i := range 100 {
		buf = fmt.Appendf(buf, "row %d\n", i)
		want.Write(buf)
		var err error
		if buf, err = bw.write(buf); err != nil {
			t.Fatal(err)
		}
		if len(buf) != 0 {
			t.Fatalf("write %d handed back a buffer holding %q", i, buf)
		}
	}
	if err := bw.close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() || flushes != 100 {
		t.Fatalf("wrote %q with %d flushes, want %q with 100", out.String(), flushes, want.String())
	}
	if err := bw.close(); err != nil {
		t.Fatalf("a second close: %v", err)
	}
}

func TestBatchWriterReportsFailureOnce(t *testing.T) {
	for _, ok := range []int{0, 1, 3} {
		w := &failingWriter{ok: ok}
		bw := startBatchWriter(w, nil, "f.parquet")
		var errs []error
		for i := range 6 {
			if _, err := bw.write([]byte(fmt.Sprintf("batch %d\n", i))); err != nil {
				errs = append(errs, err)
			}
		}
		if err := bw.close(); err != nil {
			errs = append(errs, err)
		}
		if len(errs) != 1 || !errors.Is(errs[0], errBroken) || !bytes.Contains([]byte(errs[0].Error()), []byte("write rows of f.parquet")) {
			t.Fatalf("after %d good writes: errors %v, want one wrapping %v", ok, errs, errBroken)
		}
		if got := bytes.Count(w.Bytes(), []byte("\n")); got != ok {
			t.Fatalf("after %d good writes, %d batches went out", ok, got)
		}
	}
}
