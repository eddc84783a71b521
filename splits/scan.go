package splits

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// The scan step of Plan: turn the request's filter into an Iceberg
// expression, plan the snapshot's files with iceberg-go (which matches
// delete files to data files and prunes by partition and column metrics),
// and put the tasks in a stable order.

// scan plans pl's snapshot and fills in pl's filter and tasks, and the
// warnings of an empty scan and of residuals under residualFilterMode=warn.
func (p *Planner) scan(ctx context.Context, pl *planning) error {
	req := pl.req
	if req.Filter != nil {
		now := req.Now
		if now.IsZero() {
			now = time.Now()
		}
		expr, err := req.Filter.Expression(pl.schema, now)
		if err != nil {
			return err
		}
		bound, err := iceberg.BindExpr(pl.schema, expr, true)
		if err != nil {
			return fmt.Errorf("%w: icebergFilter: %w", fault.ErrBadRequest, err)
		}
		// The scan runs on the filter as its JSON form reads back, which
		// is what a plan-reference token pins: a replica that plans the
		// token's snapshot again scans with the very same expression. A
		// filter without a JSON form that reads back is scanned as it is,
		// and the plan hands out no reference.
		pl.filter = expr
		if raw, err := json.Marshal(bound); err == nil {
			if back, err := iceberg.ParseExpr(raw, pl.schema); err == nil {
				pl.filter, pl.filterJSON = back, raw
			}
		}
	}
	return p.scanWith(ctx, pl)
}

// scanWith plans pl's snapshot under pl's filter (nil: every file).
func (p *Planner) scanWith(ctx context.Context, pl *planning) error {
	req := pl.req
	opts := []table.ScanOption{table.WithSnapshotID(pl.snap.SnapshotID)}
	if pl.filter != nil {
		opts = append(opts, table.WithRowFilter(pl.filter))
		var err error
		if pl.filterBound, err = iceberg.BindExpr(pl.schema, pl.filter, true); err != nil {
			return fmt.Errorf("%w: icebergFilter: %w", fault.ErrBadRequest, err)
		}
	}
	rp, err := p.remoteScan(ctx, req)
	if err != nil {
		return err
	}
	if rp != nil {
		if pl.tasks, err = p.planRemote(ctx, rp, pl.tbl, req.Table, pl.snap, pl.schema, pl.filter, pl.columns); err != nil {
			return err
		}
		pl.orderTasks()
		return checkResiduals(req.ResidualMode, pl.filter, pl.tasks, &pl.plan)
	}
	a, err := p.admitPlan(ctx, pl.tbl, req.Table, pl.snap)
	if err != nil {
		return err
	}
	defer a.done(ctx)
	var tasks []table.FileScanTask
	if req.FromSnapshot != nil {
		if err := appendsOnly(pl.tbl, req.Table, *req.FromSnapshot, pl.snap); err != nil {
			return err
		}
		// From a snapshot to itself nothing was appended: an empty plan,
		// which iceberg-go's incremental scan refuses to make.
		if *req.FromSnapshot != pl.snap.SnapshotID {
			tasks, err = a.tbl.NewIncrementalAppendScan(opts...).
				FromSnapshotExclusive(*req.FromSnapshot).ToSnapshot(pl.snap.SnapshotID).PlanFiles(ctx)
		}
	} else {
		tasks, err = a.tbl.Scan(opts...).PlanFiles(ctx)
	}
	if err != nil {
		if refusal := a.refused(req.Table, pl.snap); refusal != nil {
			return refusal
		}
		return fmt.Errorf("plan %s at snapshot %d in catalog %q: %w", req.Table, pl.snap.SnapshotID, p.cat.Name(), err)
	}

	p.planned(false)
	pl.tasks = tasks
	pl.orderTasks()
	return checkResiduals(req.ResidualMode, pl.filter, pl.tasks, &pl.plan)
}

// orderTasks takes pl's tasks whole (see wholeFiles) and in path order, each
// with its delete files in path order, and marks the plan empty when there
// is none.
func (pl *planning) orderTasks() {
	pl.tasks = wholeFiles(pl.tasks)
	for i := range pl.tasks {
		t := &pl.tasks[i]
		t.DeleteFiles = byPath(t.DeleteFiles)
		t.EqualityDeleteFiles = byPath(t.EqualityDeleteFiles)
		t.DeletionVectorFiles = byPath(t.DeletionVectorFiles)
	}
	// PlanFiles returns tasks in no promised order; a stable order makes
	// the answer, and the spec pasted from it, the same on every call.
	slices.SortFunc(pl.tasks, func(a, b table.FileScanTask) int {
		if c := strings.Compare(a.File.FilePath(), b.File.FilePath()); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
	if len(pl.tasks) == 0 {
		pl.plan.Empty = true
	}
}

// residualOf is what the row path applies to task t row by row, bound to
// the schema: the part of the filter its partition left undecided when the
// request asks for it (ApplyResidual), and the time interval's filter
// unless the file lies within the interval (see interval.go); nil when
// neither. whole says that it is the whole filter (filterBound) alone.
func (pl *planning) residualOf(t table.FileScanTask) (r iceberg.BooleanExpression, whole bool) {
	if pl.req.ApplyResidual && pl.filter != nil {
		r = t.Residual
		if r == nil {
			// iceberg-go leaves it nil when the partition decided
			// nothing: the whole filter remains.
			r, whole = pl.filterBound, true
		}
		if r.Equals(iceberg.AlwaysTrue{}) {
			r, whole = nil, false
		}
	}
	if iv := pl.interval; iv != nil && !iv.within[t.File.FilePath()] {
		if r == nil {
			return iv.filter, false
		}
		return iceberg.NewAnd(r, iv.filter), false
	}
	return r, whole
}

// byPath is files in path order (then by offset: deletion vectors share
// a Puffin file), sorted in a copy when they are not: the order a planner
// gives the delete files of a data file is no promise (Iceberg Java's
// server, planning asynchronously, reads the delete manifests in parallel
// and gives them in the order the reads end), and the splits, their
// tokens and the fingerprint of a plan reference spell them in order.
func byPath(files []iceberg.DataFile) []iceberg.DataFile {
	cmpFiles := func(a, b iceberg.DataFile) int {
		if c := strings.Compare(a.FilePath(), b.FilePath()); c != 0 {
			return c
		}
		return cmp.Compare(offsetOf(a), offsetOf(b))
	}
	if slices.IsSortedFunc(files, cmpFiles) {
		return files
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, cmpFiles)
	return files
}

// offsetOf is where a deletion vector starts in its Puffin file; 0 for
// every other file.
func offsetOf(f iceberg.DataFile) int64 {
	if o := f.ContentOffset(); o != nil {
		return *o
	}
	return 0
}

// wholeFiles merges the byte-range tasks that iceberg-go plans for one data
// file back into one task for the whole file, keeping the first-seen order.
// iceberg-go splits a Parquet file larger than the table's
// read.split.target-size (default 128 MiB) at its split offsets, and every
// range carries the same delete files and residual. The sidecar plans its
// own ranges (fileRanges, WithTargetSplitSize), and a token that ignored
// iceberg-go's range would serve the whole file once per range.
func wholeFiles(tasks []table.FileScanTask) []table.FileScanTask {
	seen := make(map[string]bool, len(tasks))
	out := tasks[:0]
	for _, t := range tasks {
		path := t.File.FilePath()
		if seen[path] {
			continue
		}
		seen[path] = true
		t.Start, t.Length = 0, t.File.FileSizeBytes()
		out = append(out, t)
	}
	return out
}

// checkResiduals applies the residual mode: the residual of a task is what
// of the filter its file's partition values could not decide, so the file
// may hold rows that do not match.
func checkResiduals(mode ResidualMode, filter iceberg.BooleanExpression, tasks []table.FileScanTask, plan *Plan) error {
	if filter == nil || mode == ResidualIgnore || mode == "" {
		return nil
	}
	residuals := map[string]int{}
	for _, t := range tasks {
		r := t.Residual
		if r == nil {
			// iceberg-go leaves it nil when the partition could not
			// simplify the filter at all: the whole filter remains.
			r = filter
		}
		if r.Equals(iceberg.AlwaysTrue{}) {
			continue
		}
		residuals[r.String()]++
	}
	if len(residuals) == 0 {
		return nil
	}
	keys := make([]string, 0, len(residuals))
	n := 0
	for k, c := range residuals {
		keys = append(keys, k)
		n += c
	}
	slices.Sort(keys)
	if mode == ResidualFail {
		return fmt.Errorf("%w: residualFilterMode=fail: the filter leaves a residual on %d of %d files (%s): "+
			"files would hold rows that do not match", ErrConflict, n, len(tasks), strings.Join(keys, "; "))
	}
	for _, k := range keys {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("residual filter on %d file(s), rows that do not match are ingested: %s", residuals[k], k))
	}
	return nil
}
