// Package storage opens the files of one split through the FileIO of its
// table: Parquet files with their footers held to what the rest of the file
// and the manifest confirm (OpenParquet), Avro data files (OpenAvroData),
// and delete files of either format by columns (OpenColumns, ColumnFile).
// Watched wraps the FileIO so that a failing read of the storage itself (a
// network error, a permission error) is told apart from bytes that do not
// decode: Classify wraps the latter with readerr.ErrCorruptFile and keeps
// the former's cause, and a missing file keeps fs.ErrNotExist.
//
// It owns opening and the footer only: decoding pages is parquetpage's and
// column's, Avro records avro's, and which columns to read schema
// resolution's.
package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/token"
)

// Watched wraps the FileIO of one Open so that a failing read of the
// storage itself (a network error, a permission error) can be told apart
// from bytes that do not decode: only the latter are readerr.ErrCorruptFile.
type Watched struct {
	icebergio.IO
	// Records are the row counts the manifests give the split's Parquet
	// files, by path; OpenParquet holds each file's footer to its count.
	Records map[string]int64

	mu  sync.Mutex
	err error
}

// Watch watches the reads of the files of split s through fs.
func Watch(fs icebergio.IO, s token.Split) *Watched {
	w := &Watched{IO: fs, Records: map[string]int64{s.Data.Path: s.Data.Records}}
	for _, d := range s.Deletes {
		if d.Kind != token.DeleteDeletionVector {
			w.Records[d.Path] = d.Records
		}
	}
	return w
}

// Open opens name through the wrapped FileIO and watches its reads.
func (w *Watched) Open(name string) (icebergio.File, error) {
	f, err := w.IO.Open(name)
	if err != nil {
		return nil, err
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return &watchedFile{File: f, w: w, size: size}, nil
}

// note records the first storage error; reading past the end of a file is
// the file's fault (a wrong size or a truncated file), not the storage's.
func (w *Watched) note(err error) {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return
	}
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Classify wraps a decoding error: with the storage error when a read
// failed, with readerr.ErrCorruptFile otherwise.
func (w *Watched) Classify(err error) error {
	w.mu.Lock()
	serr := w.err
	w.mu.Unlock()
	switch {
	case serr == nil:
		return fmt.Errorf("%w: %w", readerr.ErrCorruptFile, err)
	case errors.Is(err, serr):
		return err
	default:
		return fmt.Errorf("%w: %w", serr, err)
	}
}

type watchedFile struct {
	icebergio.File
	w    *Watched
	size int64 // -1 when unknown
}

func (f *watchedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if off >= 0 && (f.size < 0 || off+int64(len(p)) <= f.size) {
		// A read outside the file comes from offsets the file itself
		// gave; only a read inside it can blame the storage.
		f.w.note(err)
	}
	return n, err
}

func (f *watchedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.w.note(err)
	return n, err
}

// readBufferSize is the buffer parquet-go reads pages through: large enough
// that an object store sees few requests per column chunk.
const readBufferSize = 256 << 10

// OpenParquet opens a Parquet file through fs (which applies the location
// map) and reads its footer, skipping the page indexes and bloom filters
// the reader never uses. what names the file in errors ("data file").
func OpenParquet(fs *Watched, what, path string, size int64) (_ *parquet.File, _ icebergio.File, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	if st, serr := f.Stat(); serr == nil && st.Size() > 0 {
		size = st.Size()
	}
	defer func() {
		// parquet-go panics on some malformed schemas; a bad file must not
		// take the server down.
		if r := recover(); r != nil {
			err = fmt.Errorf("read %s %s: %w: %v", what, path, readerr.ErrCorruptFile, r)
		}
		if err != nil {
			_ = f.Close()
		}
	}()
	// parquet-go allocates the footer length the file's last 8 bytes give
	// before it holds it to the file's size: hold it first, and hand
	// parquet-go those 8 bytes again without another read of storage. A
	// file that does not begin and end with Parquet's magic bytes is
	// refused before anything quotes its bytes (parquet-go quotes a wrong
	// magic; the footer length is four of the file's bytes).
	t := &tailReader{ReaderAt: f, off: -1}
	if size >= 8 {
		if n, _ := f.ReadAt(t.tail[:], size-8); n == 8 {
			if m := string(t.tail[4:]); m != parquetMagic && m != encryptedMagic {
				return nil, nil, fmt.Errorf("read %s %s: %w: it does not end with Parquet's magic bytes", what, path, readerr.ErrCorruptFile)
			}
			if footer := int64(binary.LittleEndian.Uint32(t.tail[:4])); footer > size-12 {
				return nil, nil, fmt.Errorf("read %s %s: %w: its footer is longer than the file's %d bytes",
					what, path, readerr.ErrCorruptFile, size)
			}
			t.off = size - 8
		}
	}
	pf, err := parquet.OpenFile(t, size,
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(readBufferSize),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s %s: %w", what, path, fs.Classify(err))
	}
	if err := checkFooter(pf, fs.Records[path]); err != nil {
		return nil, nil, fmt.Errorf("read %s %s: %w: %w", what, path, readerr.ErrCorruptFile, err)
	}
	return pf, f, nil
}

// Parquet's magic bytes: a plain file and one with an encrypted footer
// (which parquet-go refuses in words of its own) begin and end with them.
const (
	parquetMagic   = "PAR1"
	encryptedMagic = "PARE"
)

// errNoMagic is the error of a file that does not begin with Parquet's
// magic bytes, which parquet-go would quote.
var errNoMagic = errors.New("it does not begin with Parquet's magic bytes")

// tailReader serves the last 8 bytes of a file (at off, when not -1) from
// memory and every other read from the file; the read of the leading magic
// bytes fails with errNoMagic when they are not Parquet's.
type tailReader struct {
	io.ReaderAt
	off  int64
	tail [8]byte
}

func (t *tailReader) ReadAt(p []byte, off int64) (int, error) {
	if off == t.off && len(p) == len(t.tail) {
		return copy(p, t.tail[:]), nil
	}
	n, err := t.ReaderAt.ReadAt(p, off)
	if off == 0 && len(p) == len(parquetMagic) && n == len(p) && string(p) != parquetMagic && string(p) != encryptedMagic {
		// No bytes read: parquet-go ignores the error of a whole read.
		clear(p)
		return 0, errNoMagic
	}
	return n, err
}
