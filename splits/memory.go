package splits

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// PlanBytesPerFile is the sizing rule of planning: the memory a plan holds
// at its peak for each data file of the snapshot it plans. Most of it is
// iceberg-go's PlanFiles, which returns every file with its column
// statistics; the planner's tasks, splits and tokens, and the rendered
// answer, hold the rest. BenchmarkPlanMemory (handlers) measures it, GET
// /splits of a 10,000-file table end to end; this is that figure rounded
// up:
//
//	go test -run '^$' -bench PlanMemory -benchtime 1x ./handlers/
const PlanBytesPerFile = 4 << 10

// WithMemoryBudget admits plans by the sizing rule: before iceberg-go plans
// a snapshot, the plan reserves PlanBytesPerFile for each of its data files
// (the snapshot summary's total-data-files, or its manifests' counts) from
// b, and holds that until the request's memory scope ends
// (memory.WithScope; without a scope it only admits). A plan that does not
// fit while others hold the memory fails with memory.ErrBusy, one larger
// than the whole budget with a *memory.ExceedsError that names what it
// needs. A nil b admits every plan.
func WithMemoryBudget(b *memory.Budget) PlannerOption {
	return func(p *Planner) { p.budget = b }
}

// admitPlan reserves the memory that planning snap of tbl needs.
func (p *Planner) admitPlan(ctx context.Context, tbl *table.Table, name string, snap *table.Snapshot) error {
	if p.budget == nil || p.budget.Capacity() <= 0 {
		return nil
	}
	files, err := dataFiles(ctx, tbl, snap)
	if err != nil {
		return fmt.Errorf("plan %s at snapshot %d in catalog %q: %w", name, snap.SnapshotID, p.cat.Name(), err)
	}
	r, err := p.budget.Reserve(memory.Plan, files*PlanBytesPerFile, 0, "")
	if err != nil {
		if ex := (*memory.ExceedsError)(nil); errors.As(err, &ex) {
			return fmt.Errorf("plan %s at snapshot %d: %w: its %d data files need %s to plan (%s each), more than %s, %s",
				name, snap.SnapshotID, memory.ErrTooLarge, files, memory.Bytes(ex.Need), memory.Bytes(PlanBytesPerFile),
				memory.Bytes(ex.Bound), ex.BoundName)
		}
		return fmt.Errorf("plan %s at snapshot %d (%d data files, %s): %w", name, snap.SnapshotID, files,
			memory.Bytes(files*PlanBytesPerFile), err)
	}
	memory.Hold(ctx, r)
	return nil
}

// dataFiles is the number of data files of snap: its summary's
// total-data-files, or, from a writer that left it out, the sum of its
// data manifests' counts.
func dataFiles(ctx context.Context, tbl *table.Table, snap *table.Snapshot) (int64, error) {
	if snap.Summary != nil {
		if v, ok := snap.Summary.Properties["total-data-files"]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, fmt.Errorf("count the data files: %w", err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return 0, fmt.Errorf("count the data files: %w", err)
	}
	var n int64
	for _, m := range manifests {
		if m.ManifestContent() == iceberg.ManifestContentData {
			n += int64(m.AddedDataFiles()) + int64(m.ExistingDataFiles())
		}
	}
	return n, nil
}
