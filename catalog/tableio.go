package catalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// loadedFS is a loaded table's FileIO, asked of the table at most every
// fsMaxAge: for a table with prefix-scoped vended credentials that is when
// iceberg-go renews them as they near their expiry; otherwise asking builds
// a new client with the same properties.
type loadedFS struct {
	mu sync.Mutex
	fs icebergio.IO
	at time.Time
}

func (f *loadedFS) get(c *Catalog, tbl *table.Table) (icebergio.IO, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fs != nil && c.now().Sub(f.at) < fsMaxAge {
		return f.fs, nil
	}
	fsys, err := tbl.FS(c.ctx)
	if err != nil {
		return nil, err
	}
	f.fs, f.at = fsys, c.now()
	return fsys, nil
}

// tableIO is the FileIO a table of the catalog reads through: a location
// under a location map's prefix through the server's FileIO (which rewrites
// it), anything else through the FileIO the catalog gives the table now
// (vended credentials), or through the server's when that FileIO serves
// another bucket only. Opening a file whose credentials expired or were
// refused loads the table again and opens it with the new ones; so does a
// read of a file already open (tableFile). Every location is confined to
// the table's roots before it is opened (confine). Errors are classified
// with internal/fault's sentinels and name the catalog.
type tableIO struct {
	c     *Catalog
	ident []string
}

// Open opens a location for reading, within the stall timeout.
func (t *tableIO) Open(location string) (icebergio.File, error) {
	f, l, err := t.c.watchOpen(func() (icebergio.File, *loaded, error) { return t.open(location, nil) })
	if err != nil {
		return nil, t.classify("open "+location, err)
	}
	return &tableFile{file: f, t: t, location: location, l: l}, nil
}

// Remove refuses: the sidecar never changes a table's files.
func (t *tableIO) Remove(string) error { return ErrReadOnly }

// errRenewal marks the error of a table's FileIO that could not renew the
// credentials the catalog vended (their endpoint is not offered, or it
// failed).
var errRenewal = errors.New("renew the vended storage credentials")

// open opens location once confine allows it, and holds the file opened to
// the one checked (localFile.verify); see openConfined.
func (t *tableIO) open(location string, failed *loaded) (icebergio.File, *loaded, error) {
	local, err := t.confine(location)
	if err != nil {
		return nil, nil, err
	}
	f, l, err := t.openConfined(location, failed)
	if err != nil {
		return nil, nil, err
	}
	if err := local.verify(f); err != nil {
		return nil, nil, err
	}
	return f, l, nil
}

// openConfined opens location: under a location map's prefix with the
// server's FileIO, otherwise with the table's current one. failed, when not nil, is
// the load whose credentials a file already open had refused: it is
// replaced first. A store that refuses the credentials, or a FileIO that
// cannot renew them, has the table loaded again once. open returns the
// load the file was opened with, nil when the server's FileIO opened it.
func (t *tableIO) openConfined(location string, failed *loaded) (icebergio.File, *loaded, error) {
	if t.c.server.Mapped(location) {
		f, err := t.via(t.c.server).Open(location)
		return f, nil, err
	}
	ctx := t.c.ctx
	l, err := t.c.cached(ctx, t.ident)
	if err == nil && failed != nil && l == failed {
		l, err = t.c.reload(ctx, t.ident, l, "refused")
	}
	if err != nil {
		return nil, nil, err
	}
	f, opened, err := t.openWith(l, location)
	var reason string
	switch {
	case err == nil:
		return f, opened, nil
	case errors.Is(err, errRenewal):
		reason = "expired"
	case renewable(err):
		reason = "refused"
	default:
		return nil, nil, err
	}
	if l, err = t.c.reload(ctx, t.ident, l, reason); err != nil {
		return nil, nil, err
	}
	return t.openWith(l, location)
}

// openWith opens location with the FileIO of load l.
func (t *tableIO) openWith(l *loaded, location string) (icebergio.File, *loaded, error) {
	fsys, err := l.fs.get(t.c, l.tbl)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w of table %s: %w", fault.ErrUnavailable, errRenewal, strings.Join(t.ident, "."), err)
	}
	f, err := t.via(fsys).Open(location)
	if errors.Is(err, blobfs.ErrUnsupportedObjectAuthority) {
		// The table's FileIO is bound to the bucket of its metadata; a
		// file elsewhere is read with the server's properties.
		f, err = t.via(t.c.server).Open(location)
		return f, nil, err
	}
	return f, l, err
}

// via is the FileIO that opens a file with fsys (see WithFileIOWrapper).
func (t *tableIO) via(fsys icebergio.IO) icebergio.IO {
	if t.c.wrap != nil {
		return t.c.wrap(fsys)
	}
	return fsys
}

// renewable reports a storage error that new credentials may cure: the
// store refused the ones it was given (expired, revoked, rotated), or
// iceberg-go found them expired before it sent them.
func renewable(err error) bool {
	return IsDenied(err) || errors.Is(err, rest.ErrVendedCredentialsExpired)
}

// classify names the catalog in a storage error and gives it its class
// (see classify); errors of reading past a file's end stay as they are. A
// store that refuses or does not answer makes /readyz fail too, until a
// table load gets an answer again (see Catalog.Ping).
func (t *tableIO) classify(doing string, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	err = redact(classify(t.c.cfg.Name, doing, err), t.c.secrets)
	if IsDenied(err) || errors.Is(err, fault.ErrUnavailable) {
		t.c.conn.observe(err)
	}
	return err
}

// tableFile is a file of a tableIO. A read the store refuses (credentials
// that expired or were rotated mid-stream) opens the file again with the
// table's new credentials and repeats the read at the same offset, once;
// the reader never sees it.
type tableFile struct {
	t        *tableIO
	location string

	mu   sync.RWMutex // guards file and l against a reopen
	file icebergio.File
	// l is the load the file was opened with; nil when the server's
	// FileIO opened it (its credentials are not the catalog's to renew).
	l   *loaded
	pos int64 // for Read and Seek
}

// current returns the open file and its load.
func (f *tableFile) current() (icebergio.File, *loaded) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.file, f.l
}

// reopen replaces the file that failed, old, with one opened with renewed
// credentials at the same position, unless another read has already
// replaced it.
func (f *tableFile) reopen(old icebergio.File, l *loaded) (icebergio.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file != old {
		return f.file, nil
	}
	nf, nl, err := f.t.open(f.location, l)
	if err != nil {
		return nil, err
	}
	if _, err := nf.Seek(f.pos, io.SeekStart); err != nil {
		_ = nf.Close()
		return nil, err
	}
	// The old file's credentials failed; closing it can only fail too.
	_ = f.file.Close()
	f.file, f.l = nf, nl
	return nf, nil
}

// retry reports whether a failed read of a file opened with load l is
// worth repeating with a reopened file.
func retry(l *loaded, err error) bool {
	return l != nil && err != nil && !errors.Is(err, io.EOF) && renewable(err)
}

func (f *tableFile) ReadAt(p []byte, off int64) (int, error) {
	file, l := f.current()
	n, err := f.t.c.watch(p, func(b []byte) (int, error) { return file.ReadAt(b, off) })
	if retry(l, err) {
		if file, err = f.reopen(file, l); err != nil {
			return n, f.t.classify("read "+f.location, err)
		}
		n, err = f.t.c.watch(p, func(b []byte) (int, error) { return file.ReadAt(b, off) })
	}
	return n, f.t.classify("read "+f.location, err)
}

// Read and Seek are the sequential reads of one goroutine, as io.Reader
// and io.Seeker are.
func (f *tableFile) Read(p []byte) (int, error) {
	file, l := f.current()
	n, err := f.t.c.watch(p, file.Read)
	f.pos += int64(n)
	if n == 0 && retry(l, err) {
		if file, err = f.reopen(file, l); err != nil {
			return 0, f.t.classify("read "+f.location, err)
		}
		n, err = f.t.c.watch(p, file.Read)
		f.pos += int64(n)
	}
	return n, f.t.classify("read "+f.location, err)
}

// ErrStalled is the error of a storage read that delivered nothing for
// longer than the catalog's stall timeout (WithStallTimeout); it is an
// ErrUnavailable, which aborts a stream so that its client retries.
var ErrStalled = fmt.Errorf("%w: the store sent nothing for longer than the stall timeout", fault.ErrUnavailable)

// watch runs read, one read of the store into a buffer of len(p) bytes,
// under the stall timeout: a read that has not returned when it passes is
// abandoned with ErrStalled. The read fills a buffer of its own, copied to
// p when it returns in time, since an abandoned read may still write into
// it. Reads of a Parquet file are of a page or a read-ahead window (about
// a MiB), so a read that takes the whole timeout is one whose store sent
// (next to) nothing.
func (c *Catalog) watch(p []byte, read func([]byte) (int, error)) (int, error) {
	if c.stall <= 0 {
		return read(p)
	}
	buf := c.readBuffer(len(p))
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := read(buf)
		done <- result{n, err}
	}()
	timer := time.NewTimer(c.stall)
	defer timer.Stop()
	select {
	case r := <-done:
		copy(p, buf[:r.n])
		c.buffers.Put(&buf)
		return r.n, r.err
	case <-timer.C:
		// The read goroutine keeps its buffer, and ends when the store
		// answers or the connection dies.
		return 0, fmt.Errorf("%w (%s)", ErrStalled, c.stall)
	}
}

// watchOpen runs open under the stall timeout: an open that has not
// returned when it passes is abandoned with ErrStalled, and the file it
// opens later closed.
func (c *Catalog) watchOpen(open func() (icebergio.File, *loaded, error)) (icebergio.File, *loaded, error) {
	if c.stall <= 0 {
		return open()
	}
	type result struct {
		f   icebergio.File
		l   *loaded
		err error
	}
	done := make(chan result) // unbuffered: a send after abandoned is never taken
	abandoned := make(chan struct{})
	go func() {
		f, l, err := open()
		select {
		case done <- result{f, l, err}:
		case <-abandoned:
			if f != nil {
				_ = f.Close()
			}
		}
	}()
	timer := time.NewTimer(c.stall)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.f, r.l, r.err
	case <-timer.C:
		close(abandoned)
		// The open may have finished as the timer fired.
		select {
		case r := <-done:
			return r.f, r.l, r.err
		default:
		}
		return nil, nil, fmt.Errorf("%w (%s)", ErrStalled, c.stall)
	}
}

// readBuffer is a buffer of n bytes for a watched read.
func (c *Catalog) readBuffer(n int) []byte {
	if bp, ok := c.buffers.Get().(*[]byte); ok && cap(*bp) >= n {
		return (*bp)[:n]
	}
	return make([]byte, n)
}

func (f *tableFile) Seek(offset int64, whence int) (int64, error) {
	file, _ := f.current()
	pos, err := file.Seek(offset, whence)
	if err == nil {
		f.pos = pos
	}
	return pos, err
}

func (f *tableFile) Stat() (fs.FileInfo, error) {
	file, _ := f.current()
	return file.Stat()
}

func (f *tableFile) Close() error {
	file, _ := f.current()
	return file.Close()
}
