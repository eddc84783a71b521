package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// byteRange is a parsed `Range: bytes=N-` or `bytes=N-M` header.
type byteRange struct {
	start int64
	end   int64 // inclusive; -1 means to the end
}

// parseRange parses the single-range forms Druid and curl send. ok is false
// when there is no Range header. Suffix ranges (bytes=-N) need the length,
// which a row stream does not know in advance, so they are refused.
func parseRange(h string) (br byteRange, ok bool, err error) {
	if h == "" {
		return byteRange{}, false, nil
	}
	spec, found := strings.CutPrefix(h, "bytes=")
	first, last, dash := strings.Cut(spec, "-")
	if !found || !dash || strings.Contains(spec, ",") || first == "" {
		return byteRange{}, false, errorf(http.StatusRequestedRangeNotSatisfiable, "bad_range",
			fmt.Sprintf("Range %s: only bytes=N- and bytes=N-M are supported on row streams", fault.Quote(h)))
	}
	br.start, err = strconv.ParseInt(first, 10, 64)
	if err != nil || br.start < 0 {
		return byteRange{}, false, errorf(http.StatusRequestedRangeNotSatisfiable, "bad_range", fmt.Sprintf("Range %s: bad start", fault.Quote(h)))
	}
	br.end = -1
	if last != "" {
		br.end, err = strconv.ParseInt(last, 10, 64)
		if err != nil || br.end < br.start {
			return byteRange{}, false, errorf(http.StatusRequestedRangeNotSatisfiable, "bad_range", fmt.Sprintf("Range %s: bad end", fault.Quote(h)))
		}
	}
	return br, true, nil
}

// rangeWriter passes on the bytes of a byte range of what is written to it.
// Because a split's rows are byte-deterministic, the bytes at offset N of
// this stream are the bytes at offset N of every earlier one.
//
// The answer's status waits for the range's first byte: begin is called
// just before it is passed on, so that a stream that ends before the
// range starts can still be answered 416.
type rangeWriter struct {
	w       io.Writer
	pos     int64 // offset of the next byte written to rangeWriter
	from    int64
	to      int64 // exclusive; -1 for no end
	begin   func()
	started bool
}

// errRangeDone stops the reader once the range's last byte is out.
var errRangeDone = errors.New("range complete")

func (rw *rangeWriter) Write(p []byte) (int, error) {
	n := len(p)
	start, end := rw.pos, rw.pos+int64(n)
	rw.pos = end
	lo := max(start, rw.from)
	hi := end
	if rw.to >= 0 {
		hi = min(end, rw.to)
	}
	if lo < hi {
		if !rw.started {
			rw.started = true
			rw.begin()
		}
		if _, err := rw.w.Write(p[lo-start : hi-start]); err != nil {
			return 0, err
		}
	}
	if rw.to >= 0 && end >= rw.to {
		return n, errRangeDone
	}
	return n, nil
}

// rowsHandler serves a split's rows compressed as c.
func (s *server) rowsHandler(c splits.Compression) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error { return s.getRows(w, r, c) }
}

func (s *server) getRows(w http.ResponseWriter, r *http.Request, c splits.Compression) error {
	br, ranged, err := parseRange(r.Header.Get("Range"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	cat, parts, err := s.splitOf(ctx, token.KindRows, chi.URLParam(r, "token"))
	if err != nil {
		return err
	}
	if v := parts[0].Encoding.Version; ranged && br.start > 0 && v != token.RowEncoding {
		// The bytes before the offset were encoded by a release of another
		// row encoding (a rolling upgrade): resuming would splice two.
		return errorf(http.StatusConflict, "encoding_changed", fmt.Sprintf(
			"the stream was planned under row encoding %d and this sidecar writes %d, so byte %d is not where the "+
				"earlier read left off; plan again with GET /splits", v, token.RowEncoding, br.start))
	}
	src, err := cat.Splits.Source(ctx, parts[0])
	if err != nil {
		return err
	}
	// Everything that can fail early fails here, before the first byte.
	stream, err := cat.Rows.OpenAll(ctx, src.FS, parts, src.Schema)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := stream.Close(); cerr != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "close split files", slog.String("error", clip(cerr.Error(), maxLoggedErrorBytes)))
		}
	}()

	h := w.Header()
	h.Set("Content-Type", contentTypes[c])
	h.Set("Cache-Control", "no-store")
	h.Set("Accept-Ranges", "bytes")
	h.Set("X-Content-Type-Options", "nosniff")
	out := io.Writer(w)
	var rw *rangeWriter
	if ranged && (br.start > 0 || br.end >= 0) {
		// Druid asks for bytes=0- on every first read, which is the whole
		// body: a plain 200. A resumption at N > 0 is a 206 whose
		// Content-Range Druid's HttpEntity only checks to start with
		// "bytes " (else it reads from the first byte and skips N). The
		// stream's length is unknown until its end, so an open range is
		// answered "bytes N-*/*", which RFC 9110 does not allow (it wants
		// the last position); the docs say so.
		last := "*"
		to := int64(-1)
		if br.end >= 0 {
			last = strconv.FormatInt(br.end, 10)
			to = br.end + 1
		}
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%s/*", br.start, last))
		rw = &rangeWriter{w: w, from: br.start, to: to, begin: func() { w.WriteHeader(http.StatusPartialContent) }}
		out = rw
	}
	// A Range counts the compressed bytes, as Druid's retries do: the
	// compressor writes into the range.
	comp, err := newCompressor(c, out)
	if err != nil {
		return err
	}
	if comp != nil {
		out = comp
	}
	if r.Method == http.MethodHead {
		// The split opened: that is what a HEAD can tell.
		if rw != nil {
			w.WriteHeader(http.StatusPartialContent)
		}
		return nil
	}
	if rw == nil {
		w.WriteHeader(http.StatusOK)
	}

	if s.Metrics != nil {
		s.Metrics.ActiveStreams.Inc()
		defer s.Metrics.ActiveStreams.Dec()
	}
	rc := http.NewResponseController(w)
	flush := rc.Flush
	if rw != nil {
		// A flush before the range's first byte would send the header.
		flush = func() error {
			if !rw.started {
				return nil
			}
			return rc.Flush()
		}
	}
	err = stream.Run(ctx, out, flush)
	if err == nil && comp != nil {
		// The end of the compressed stream, then the last bytes out.
		if err = comp.Close(); err == nil {
			err = flush()
		}
	}
	addRows(ctx, stream.Stats().RowsEmitted)
	if errors.Is(err, errRangeDone) {
		err = nil
	}
	if rw != nil && !rw.started {
		// Nothing is written yet: the stream ended before the range
		// starts, or failed before it did.
		return s.beforeRange(w, rw, err)
	}
	if err != nil {
		// After the first byte the only honest signal is a broken
		// connection: a clean end would read as a complete, shorter file.
		cause := "read_error"
		switch {
		case stalled(err):
			cause = "client_stalled"
		case ctx.Err() != nil || errors.Is(err, context.Canceled):
			cause = "client_gone"
		}
		if s.Metrics != nil {
			s.Metrics.StreamAborts.WithLabelValues(cause).Inc()
		}
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "row stream aborted",
			slog.String("cause", cause), slog.String("split", token.ID(chi.URLParam(r, "token"))), slog.String("error", clip(err.Error(), maxLoggedErrorBytes)))
		panic(http.ErrAbortHandler)
	}
	return nil
}

// beforeRange answers a ranged row stream that wrote nothing: its error,
// or for a stream that ended at exactly the range's start (Druid reopens
// there when a connection drops after the last byte) an empty 206, or for
// one that ended before it a 416 that gives the stream's length.
func (s *server) beforeRange(w http.ResponseWriter, rw *rangeWriter, err error) error {
	switch {
	case err != nil:
		w.Header().Del("Content-Range")
		return err
	case rw.pos == rw.from:
		w.WriteHeader(http.StatusPartialContent)
		return nil
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", rw.pos))
	return errorf(http.StatusRequestedRangeNotSatisfiable, "bad_range",
		fmt.Sprintf("Range starts at byte %d of a %d-byte stream", rw.from, rw.pos))
}
