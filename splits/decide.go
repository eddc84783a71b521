package splits

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"
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
	// A projection and ISO timestamps change what is served, which only
	// the row path can do; binaryAsString is also a Druid Parquet option,
	// so it needs no row path.
	if len(pl.columns) > 0 || req.Encoding.ISOTimestamps {
		if req.Mode == ModeFiles {
			return fmt.Errorf("%w: columns and timestamps=iso need the row path, not mode=files", ErrBadRequest)
		}
		pl.plan.Path = PathRows
	}
	return nil
}

// decidePath sets pl's path from the scan's files and adds the warnings
// that explain it.
func (pl *planning) decidePath() error {
	req := pl.req
	if req.ApplyResidual && slices.ContainsFunc(pl.tasks, func(t table.FileScanTask) bool { return pl.residualOf(t) != nil }) {
		if req.Mode == ModeFiles {
			return fmt.Errorf("%w: applyResidual needs the row path, and the filter leaves a residual; not mode=files", ErrBadRequest)
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
		return fmt.Errorf("%w: mode=files refused: Druid reads a raw Parquet file's columns by name, "+
			"and the data files of %s would not read as Iceberg reads them: %s; use mode=auto or mode=rows",
			ErrConflict, req.Table, why)
	case why != "":
		pl.plan.Path = PathRows
		pl.plan.Warnings = append(pl.plan.Warnings, "served on the row path although no delete file applies, "+
			"because Druid reads a raw Parquet file's columns by name: "+why)
	}
	return nil
}
