package druidsim

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// How Druid reads one URI of an http input source, as the model does it.
//
// HttpInputSource.createSplits (processing/src/main/java/org/apache/druid/
// data/input/impl/HttpInputSource.java) makes one InputSplit per URI, and
// index_parallel runs one subtask per split, maxNumConcurrentSubTasks at a
// time (Druid.Concurrency here). Each reads its URI as an HttpEntity
// (processing/.../data/input/impl/HttpEntity.java), a RetryingInputEntity
// (processing/.../data/input/RetryingInputEntity.java):
//
//   - open() is CompressionUtils.decompress(openRaw(), getPath())
//     (processing/.../utils/CompressionUtils.java): by the URI path's
//     extension, ".gz" through a GZIPInputStream (concatenated members
//     read on), ".zst" through ZstdCompressorInputStream, ".bz2", ".xz",
//     ".sz", ".zip" and ".lz4" through theirs (not modelled: an error
//     here), anything else as it is. The query string is not part of the
//     path.
//   - openRaw() is a RetryingInputStream (processing/.../data/input/impl/
//     RetryingInputStream.java) over HttpEntity.readFrom(offset): every
//     open, the first included, sends `Range: bytes=<offset>-`; an answer
//     whose Content-Range does not start with "bytes " is read from its
//     start and the offset skipped. A failure to open, or an IOException
//     while reading (HttpURLConnection.getInputStream throws one for a
//     status of 400 or more; a connection cut mid-body is one), reopens at
//     the count of raw bytes read so far. One read() tries at most
//     RetryUtils.DEFAULT_MAX_TRIES (10) times (its loop counter starts
//     again with every read), so a stream that keeps making progress is
//     never given up; a clean end of the body is the end of the data.
//
// So the model decompresses above the retries, exactly as Druid does: a
// compressed stream resumed at a raw offset must continue the very same
// bytes, or the decompressor fails.

// maxTries is RetryUtils.DEFAULT_MAX_TRIES in apache/druid.
const maxTries = 10

// Fetch is one read of one URI, as the model saw it.
type Fetch struct {
	URI string
	// Opens are the offsets of the requests made, the first always 0.
	Opens []int64
	// Statuses are their HTTP statuses, 0 when the request failed
	// without an answer.
	Statuses []int
}

// Fetches are the reads of http URIs made so far, in the order they ended.
func (d *Druid) Fetches() []Fetch {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Fetch(nil), d.fetches...)
}

// fetch reads uri as Druid's HttpEntity does and returns its decompressed
// bytes.
func (d *Druid) fetch(ctx context.Context, uri string, s inputSource) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("uri %s: %w", uri, err)
	}
	f := &Fetch{URI: uri}
	defer func() {
		d.mu.Lock()
		d.fetches = append(d.fetches, *f)
		d.mu.Unlock()
	}()
	raw := &retryingStream{ctx: ctx, d: d, uri: uri, src: s, f: f}
	defer raw.close()
	var in io.Reader = raw
	switch p := u.Path; {
	case strings.HasSuffix(p, ".gz"):
		gz, err := gzip.NewReader(raw)
		if err != nil {
			return nil, fmt.Errorf("GET %s: gzip: %w", uri, err)
		}
		in = gz
	case strings.HasSuffix(p, ".zst"):
		zr, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("GET %s: zstd: %w", uri, err)
		}
		defer zr.Close()
		in = zr
	case strings.HasSuffix(p, ".bz2"), strings.HasSuffix(p, ".xz"), strings.HasSuffix(p, ".sz"),
		strings.HasSuffix(p, ".zip"), strings.HasSuffix(p, ".lz4"):
		return nil, fmt.Errorf("GET %s: the model does not decompress %s", uri, p)
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, in); err != nil {
		return nil, fmt.Errorf("GET %s: %w", uri, err)
	}
	return b.Bytes(), nil
}

// retryingStream is RetryingInputStream over HttpEntity.readFrom.
type retryingStream struct {
	ctx   context.Context
	d     *Druid
	uri   string
	src   inputSource
	f     *Fetch
	body  io.ReadCloser
	read  int64 // raw bytes read, over every connection
	tries int   // failures since the last byte read
}

func (r *retryingStream) Read(p []byte) (int, error) {
	for {
		if r.body == nil {
			if err := r.open(); err != nil {
				return 0, err
			}
		}
		n, err := r.body.Read(p)
		r.read += int64(n)
		if n > 0 {
			r.tries = 0
		}
		switch {
		case err == nil || errors.Is(err, io.EOF):
			return n, err
		case n > 0:
			// Hand over what arrived; the error comes back on the next
			// read of the broken body.
			return n, nil
		}
		r.close()
		if err := r.failed(err); err != nil {
			return 0, err
		}
	}
}

// fatalError is a failure Druid does not retry.
type fatalError struct{ error }

// failed counts a failure and waits before the next try, or gives up.
func (r *retryingStream) failed(err error) error {
	var fatal fatalError
	if errors.As(err, &fatal) {
		return err
	}
	r.d.mu.Lock()
	r.d.retries++
	r.d.mu.Unlock()
	r.tries++
	if r.tries >= maxTries {
		return fmt.Errorf("GET %s: %d tries: %w", r.uri, r.tries, err)
	}
	// RetryUtils.awaitNextRetry sleeps for seconds; the model for a moment.
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-time.After(time.Duration(r.tries) * 5 * time.Millisecond):
	}
	return nil
}

// open opens the URI at the raw offset read so far, retrying as Druid does.
func (r *retryingStream) open() error {
	for {
		body, status, err := r.d.openAt(r.ctx, r.uri, r.src, r.read)
		r.f.Opens = append(r.f.Opens, r.read)
		r.f.Statuses = append(r.f.Statuses, status)
		if err == nil {
			r.body = body
			return nil
		}
		if err := r.failed(err); err != nil {
			return err
		}
	}
}

func (r *retryingStream) close() {
	if r.body != nil {
		_ = r.body.Close()
		r.body = nil
	}
}

// openAt is HttpEntity.openInputStream: a GET with `Range: bytes=offset-`
// and the credentials; an answer without a Content-Range is skipped to the
// offset. An answer of 400 or more is an error, as getInputStream's
// IOException.
func (d *Druid) openAt(ctx context.Context, uri string, s inputSource, offset int64) (io.ReadCloser, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, 0, err
	}
	if s.Username != "" {
		pw, err := d.password(s.Password)
		if err != nil {
			return nil, 0, fatalError{err}
		}
		req.SetBasicAuth(s.Username, pw)
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	c := d.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", uri, err)
	}
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		return nil, resp.StatusCode, fmt.Errorf("GET %s at byte %d: %s: %s", uri, offset, resp.Status, b)
	}
	if cr := resp.Header.Get("Content-Range"); offset > 0 && !strings.HasPrefix(cr, "bytes ") {
		if skipped, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
			_ = resp.Body.Close()
			if errors.Is(err, io.EOF) {
				// HttpEntity: an ISE, which RetryingInputStream does not retry.
				return nil, resp.StatusCode, fatalError{fmt.Errorf("GET %s: Requested to skip [%d] bytes, but actual number of bytes skipped is [%d]",
					uri, offset, skipped)}
			}
			return nil, resp.StatusCode, fmt.Errorf("GET %s: skip %d bytes: %w", uri, offset, err)
		}
	} else if offset > 0 && !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", offset)) {
		// Druid trusts any "bytes " range; the model holds the server to
		// the offset it asked for.
		_ = resp.Body.Close()
		return nil, resp.StatusCode, fmt.Errorf("GET %s: Content-Range %q for an offset of %d", uri, cr, offset)
	}
	return resp.Body, resp.StatusCode, nil
}

// fetchAll reads every URI of an http input source, Concurrency at a time
// (Druid's subtasks), and returns their bodies in the URIs' order.
func (d *Druid) fetchAll(ctx context.Context, s inputSource) ([][]byte, error) {
	n := max(d.Concurrency, 1)
	bodies := make([][]byte, len(s.URIs))
	errs := make([]error, len(s.URIs))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, uri := range s.URIs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			bodies[i], errs[i] = d.fetch(ctx, uri, s)
		}()
	}
	wg.Wait()
	return bodies, errors.Join(errs...)
}

// CuttingTransport is an http.RoundTripper that breaks some of the answers
// it passes on: after a random number of bytes of the body, a read fails as
// a reset connection would, so the model's retries are exercised. It stops
// once it has cut Cuts answers.
type CuttingTransport struct {
	// Base is the transport that does the requests; nil is
	// http.DefaultTransport.
	Base http.RoundTripper
	// Cuts is how many answers to break; MaxBytes bounds how far into an
	// answer's body a cut falls.
	Cuts, MaxBytes int64
	// Seed seeds where the cuts fall.
	Seed uint64

	mu   sync.Mutex
	n    uint64
	done int64
}

// Done is how many answers were cut.
func (c *CuttingTransport) Done() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// RoundTrip does the request and, while cuts remain, cuts the answer's body.
func (c *CuttingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := c.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	c.mu.Lock()
	cut := c.done < c.Cuts
	var at int64
	if cut {
		c.done++
		c.n++
		// A splitmix64 step: where the cut falls, reproducibly.
		z := c.Seed + c.n*0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		at = int64((z ^ (z >> 31)) % uint64(max(c.MaxBytes, 1)))
	}
	c.mu.Unlock()
	if cut {
		resp.Body = &cutBody{ReadCloser: resp.Body, left: at}
	}
	return resp, nil
}

// errCut is the failure of a cut body.
var errCut = errors.New("connection reset (cut by the test)")

type cutBody struct {
	io.ReadCloser
	left int64
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errCut
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
