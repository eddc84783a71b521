package handlers

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// getFile serves a data file's raw bytes for the v1 path, with Range support
// (net/http's ServeContent does Range, If-Range and HEAD). Only file tokens
// open this route, and the planner signs those only for data files that no
// delete file applies to.
func (s *server) getFile(w http.ResponseWriter, r *http.Request) error {
	cat, parts, err := s.splitOf(r.Context(), token.KindFile, chi.URLParam(r, "token"))
	if err != nil {
		return err
	}
	sp := parts[0]
	if len(parts) != 1 || len(sp.Deletes) > 0 {
		// Never true for a token this service signed; kept as the last
		// line of defence of the one thing this service exists for.
		return fmt.Errorf("%w: a file token names %d data files, or one with delete files; read its rows instead",
			splits.ErrConflict, len(parts))
	}
	src, err := cat.Splits.Source(r.Context(), sp)
	if err != nil {
		return err
	}
	f, err := src.FS.Open(sp.Data.Path)
	if err != nil {
		return fmt.Errorf("open data file %s: %w", sp.Data.Path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil {
			s.Logger.LogAttrs(r.Context(), slog.LevelWarn, "close data file", slog.String("error", clip(cerr.Error(), maxLoggedErrorBytes)))
		}
	}()
	// The token pins the size the manifest gives: an object of another
	// size is another file than the one planned (replaced in place), and
	// serving it, or splicing a resumed read of it onto the old one's
	// bytes, would hand Druid rows the snapshot never held.
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat data file %s: %w", sp.Data.Path, err)
	}
	if info.Size() != sp.Data.Size {
		return errorf(http.StatusConflict, "file_changed", fmt.Sprintf(
			"data file %s is %d bytes, but the plan found %d in the manifest: it was replaced after planning; plan again with GET /splits",
			path.Base(sp.Data.Path), info.Size(), sp.Data.Size))
	}
	if err := parquetMagic(f, sp.Data.Size); err != nil {
		return fmt.Errorf("serve data file %s: %w", path.Base(sp.Data.Path), err)
	}
	if s.Metrics != nil {
		s.Metrics.ActiveStreams.Inc()
		defer s.Metrics.ActiveStreams.Dec()
	}
	// A range outside the file is answered as every error before the
	// first byte is, in JSON, where ServeContent would write plain text.
	if br, ranged, err := parseRange(r.Header.Get("Range")); err != nil {
		return err
	} else if ranged && br.start >= sp.Data.Size {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", sp.Data.Size))
		return errorf(http.StatusRequestedRangeNotSatisfiable, "bad_range",
			fmt.Sprintf("Range starts at byte %d of a %d-byte file", br.start, sp.Data.Size))
	}
	w.Header().Set("Content-Type", "application/vnd.apache.parquet")
	w.Header().Set("Cache-Control", "no-store")
	// Data files are immutable, so the path and the size identify the
	// content: a file replaced in place by one of another size gets
	// another ETag, and If-Range never splices the two.
	w.Header().Set("ETag", `"`+token.ID(sp.Data.Path+"\x00"+strconv.FormatInt(sp.Data.Size, 10))+`"`)
	http.ServeContent(w, r, path.Base(sp.Data.Path), time.Time{}, f)
	return nil
}

// parquetMagic checks that a file of size bytes begins and ends with
// Parquet's magic bytes, before any of it is served: whatever a manifest
// names as a data file, /files hands out only what looks like Parquet
// (a file the sidecar reads for itself, such as a token key, does not).
// The error quotes none of the file's bytes.
func parquetMagic(f io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 2*int64(len(magic))+4 {
		return fmt.Errorf("%w: %d bytes is too short for a Parquet file", reader.ErrCorruptFile, size)
	}
	var head, tail [len(magic)]byte
	// A ReaderAt may report io.EOF with the bytes that end the file.
	if n, err := f.ReadAt(head[:], 0); n < len(head) {
		return fmt.Errorf("read its first bytes: %w", err)
	}
	if n, err := f.ReadAt(tail[:], size-int64(len(magic))); n < len(tail) {
		return fmt.Errorf("read its last bytes: %w", err)
	}
	if string(head[:]) != magic || string(tail[:]) != magic {
		return fmt.Errorf("%w: it does not begin and end with Parquet's magic bytes (PAR1): it is not a Parquet file", reader.ErrCorruptFile)
	}
	return nil
}
