package handlers

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/splits/split"
)

// getFile serves a data file's raw bytes for the v1 path, with Range support
// (net/http's ServeContent does Range, If-Range and HEAD). Only file tokens
// open this route, and the planner signs those only for data files that no
// delete file applies to.
func (s *server) getFile(w http.ResponseWriter, r *http.Request) error {
	cat, parts, err := s.splitOf(r.Context(), split.KindFile, chi.URLParam(r, "token"))
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
			s.Logger.LogAttrs(r.Context(), slog.LevelWarn, "close data file", slog.String("error", cerr.Error()))
		}
	}()
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
	// Data files are immutable, so the path identifies the content.
	w.Header().Set("ETag", `"`+split.ID(sp.Data.Path)+`"`)
	http.ServeContent(w, r, path.Base(sp.Data.Path), time.Time{}, f)
	return nil
}
