package splits

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// The path decision of Plan: whether Druid reads the data files themselves
// (PathFiles, v1) or the sidecar's delete-applied rows (PathRows, v2).
// mode=rows always takes the row path; so do a projection, ISO timestamps,
// a residual filter applied row by row, any delete file, and a table whose
// raw files Druid would read differently from Iceberg (see rawfiles.go).
// mode=files refuses each of those rather than serve rows that differ from
// the table's.

// servesChangedValues takes the row path for what changes the values
// served; it runs before the scan, so that mode=files is refused without
// reading a manifest.
func (pl *planning) servesChangedValues() error {
	req := pl.req
	// A projection, ISO timestamps and metadata columns change what is
	// served, which only the row path can do; binaryAsString is also a
	// Druid Parquet option, so it needs no row path.
	if len(pl.columns) > 0 || req.Encoding.ISOTimestamps || req.MetaColumns != 0 {
		if req.Mode == ModeFiles {
			return fmt.Errorf("%w: columns, timestamps=iso and metadataColumns need the row path, not mode=files", fault.ErrBadRequest)
		}
		pl.plan.Path = PathRows
	}
	return nil
}

// decidePath sets pl's path from the scan's files and adds the warnings
// that explain it.
func (pl *planning) decidePath() error {
	req := pl.req
	if slices.ContainsFunc(pl.tasks, func(t table.FileScanTask) bool { r, _ := pl.residualOf(t); return r != nil }) {
		if req.Mode == ModeFiles {
			return fmt.Errorf("%w: applyResidual (or a time interval) needs the row path, and the filter leaves a residual; "+
				"not mode=files", fault.ErrBadRequest)
		}
		pl.plan.Path = PathRows
	}
	withDeletes := 0
	for _, t := range pl.tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			withDeletes++
		}
	}
	switch {
	case req.Mode == ModeFiles && withDeletes > 0:
		return fmt.Errorf("%w: mode=files refused: %d of %d data files of %s have delete files, "+
			"and raw files would ingest the deleted rows; use mode=auto or mode=rows",
			ErrConflict, withDeletes, len(pl.tasks), req.Table)
	case withDeletes > 0:
		pl.plan.Path = PathRows
	}
	if pl.plan.Path != PathFiles {
		return nil
	}
	why, err := rawHazard(pl.tbl.Metadata(), pl.schema, pl.tasks, pl.maker)
	switch {
	case err != nil:
		return err
	case why != "" && req.Mode == ModeFiles:
		return fmt.Errorf("%w: mode=files refused: Druid's Parquet reader would not read the data files of %s "+
			"as Iceberg reads them: %s; use mode=auto or mode=rows", ErrConflict, req.Table, why)
	case why != "":
		pl.plan.Path = PathRows
		pl.plan.Warnings = append(pl.plan.Warnings, "served on the row path although no delete file applies, "+
			"because Druid's Parquet reader would not read the raw files as Iceberg reads them: "+why)
		return nil
	}
	if err := pl.rawFilesAtScale(); err != nil {
		return err
	}
	if pl.plan.Path == PathFiles {
		pl.plan.Warnings = append(pl.plan.Warnings, rawVersionWarnings(pl.schema)...)
	}
	return nil
}

// The raw-file path hands Druid one URI per data file, and Druid runs a
// subtask (a task JVM) per URI, where its own cloud input sources pack up
// to 1000 small files into one (see packing.go). So mode=auto takes the
// packed row path when raw files would be many small ones: more than
// autoRawFiles of them, at least autoPackRatio times as many as the row
// path's packed splits. A table of large files keeps its raw files however
// many there are, up to the most URIs a plan hands out (--max-splits).
const (
	autoRawFiles  = 64
	autoPackRatio = 4
)

// rawFilesAtScale applies the bound on URIs, and auto mode's choice of the
// row path for many small files, to a plan on the raw-file path.
func (pl *planning) rawFilesAtScale() error {
	req, n := pl.req, len(pl.tasks)
	if pl.pk.maxSplits > 0 && n > pl.pk.maxSplits {
		if req.Mode == ModeFiles {
			return fmt.Errorf("%w: mode=files: %s plans %d data files, one URI each, more than the %d one answer may hold "+
				"(%s): use mode=auto or mode=rows (packed splits), narrow it with icebergFilter or fromSnapshot, "+
				"or raise the limit", ErrTooManySplits, req.Table, n, pl.pk.maxSplits, pl.pk.bound)
		}
		pl.plan.Path = PathRows
		pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("served on the row path although no delete file applies: "+
			"its %d data files are more URIs than one answer may hold (%s: %d); the row path packs them", n, pl.pk.bound, pl.pk.maxSplits))
		return nil
	}
	if req.Mode != ModeAuto || n <= autoRawFiles {
		return nil
	}
	sizes := make([]int64, n)
	var total int64
	for i, t := range pl.tasks {
		sizes[i] = t.File.FileSizeBytes()
		total += sizes[i]
	}
	packed := len(packEnds(sizes, pl.pk.packTarget(req.MinSplits, pl.tasks), max(pl.pk.maxFiles, 1)))
	if n < autoPackRatio*packed {
		return nil
	}
	pl.plan.Path = PathRows
	pl.plan.Warnings = append(pl.plan.Warnings, fmt.Sprintf("served on the row path although no delete file applies: "+
		"its %d data files average %s, and Druid runs one subtask per URI; packed, they are %d splits "+
		"(mode=files hands out the raw files)", n, byteCount(total/int64(n)), packed))
	return nil
}
