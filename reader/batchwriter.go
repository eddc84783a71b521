package reader

import (
	"fmt"
	"io"
)

// batchWriter writes a stream's batches of rows on a goroutine of its own,
// so that the stream decodes and encodes the next batch while the last
// one goes out: a write into a socket waits for the client to drain it,
// and a single stream would otherwise sit idle through each of those
// waits. Two buffers take turns; at most one batch is in flight.
type batchWriter struct {
	path    string
	todo    chan []byte // the batch to write
	done    chan []byte // the buffer of the batch written, to reuse
	spare   []byte
	pending bool // a batch is in flight
	closed  bool
	// err is the first write or flush error, set by the writing goroutine
	// before it hands the buffer back on done; reported once.
	err      error
	reported bool
}

func startBatchWriter(w io.Writer, flush func() error, path string) *batchWriter {
	bw := &batchWriter{path: path, todo: make(chan []byte), done: make(chan []byte, 1)}
	go func() {
		for b := range bw.todo {
			if bw.err == nil {
				bw.err = bw.writeOne(w, flush, b)
			}
			bw.done <- b[:0]
		}
	}()
	return bw
}

func (bw *batchWriter) writeOne(w io.Writer, flush func() error, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write rows of %s: %w", bw.path, err)
	}
	if flush != nil {
		if err := flush(); err != nil {
			return fmt.Errorf("flush rows of %s: %w", bw.path, err)
		}
	}
	return nil
}

// write hands buf over to be written and returns an empty buffer to fill
// next. It waits for the batch before to be written, and returns that
// batch's error, if any, instead of taking buf.
func (bw *batchWriter) write(buf []byte) ([]byte, error) {
	if bw.pending {
		bw.spare, bw.pending = <-bw.done, false
	}
	if err := bw.failed(); err != nil {
		return buf, err
	}
	bw.todo <- buf
	bw.pending = true
	if bw.spare == nil {
		bw.spare = make([]byte, 0, cap(buf))
	}
	next := bw.spare
	bw.spare = nil
	return next, nil
}

// failed reports the write error the first time it is seen.
func (bw *batchWriter) failed() error {
	if bw.err == nil || bw.reported {
		return nil
	}
	bw.reported = true
	return bw.err
}

// close waits for the batch in flight and stops the goroutine; it returns
// a write error that write has not already returned.
func (bw *batchWriter) close() error {
	if bw.closed {
		return nil
	}
	bw.closed = true
	close(bw.todo)
	if bw.pending {
		<-bw.done
		bw.pending = false
	}
	return bw.failed()
}
