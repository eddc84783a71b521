package reader

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// prefetchPages reads a column chunk's pages one ahead of its consumer, on
// a goroutine of its own: reading a page (the bytes, decompression and
// the decoding of its values) was about a fifth of a stream's CPU, and
// with few streams the other cores are otherwise idle. Unlike parquet-go's
// AsyncPages it recovers a panic of the page decoding (a damaged page) as
// ErrCorruptFile instead of taking the process down, and it holds one
// page, not two. It implements parquet.Pages without SeekToRow, which the
// reader never calls.
type prefetchPages struct {
	pages parquet.Pages
	next  chan pageResult // unbuffered: the goroutine holds one page ahead
	stop  chan struct{}
	err   error // the first error handed out: ReadPage repeats it
	done  bool  // Close was called
}

type pageResult struct {
	page parquet.Page
	err  error
}

func prefetch(pages parquet.Pages) *prefetchPages {
	p := &prefetchPages{pages: pages, next: make(chan pageResult), stop: make(chan struct{})}
	go p.run()
	return p
}

func (p *prefetchPages) run() {
	defer close(p.next)
	for {
		r := readPage(p.pages)
		select {
		case p.next <- r:
		case <-p.stop:
			if r.page != nil {
				parquet.Release(r.page)
			}
			return
		}
		if r.err != nil {
			return
		}
	}
}

// readPage reads the next page, turning a panic of parquet-go's decoding
// into an error.
func readPage(pages parquet.Pages) (r pageResult) {
	defer func() {
		if v := recover(); v != nil {
			r = pageResult{err: fmt.Errorf("%w: decoding a page: %v", ErrCorruptFile, v)}
		}
	}()
	page, err := pages.ReadPage()
	return pageResult{page, err}
}

func (p *prefetchPages) ReadPage() (parquet.Page, error) {
	if p.err != nil {
		return nil, p.err
	}
	r, ok := <-p.next
	if !ok {
		// Only after Close, or after the error already handed out.
		return nil, io.ErrClosedPipe
	}
	if r.err != nil {
		p.err = r.err
	}
	return r.page, r.err
}

func (p *prefetchPages) SeekToRow(int64) error {
	return errors.New("prefetched pages cannot seek")
}

// Close stops the goroutine, releases the page it read ahead, and closes
// the column chunk's pages once nothing reads them any more.
func (p *prefetchPages) Close() error {
	if p.done {
		return nil
	}
	p.done = true
	close(p.stop)
	for r := range p.next {
		if r.page != nil {
			parquet.Release(r.page)
		}
	}
	return p.pages.Close()
}
