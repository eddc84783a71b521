package splits

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// PlanBytesPerFile is the sizing rule of planning: the memory a plan holds
// at its peak for each data file of the snapshot it plans (and what a plan
// reserves for each manifest entry it declares or reads; see
// WithMemoryBudget). Most of it is
// iceberg-go's PlanFiles, which returns every file with its column
// statistics; the planner's tasks, splits and tokens, and the rendered
// answer, hold the rest. BenchmarkPlanMemory (handlers) measures it, GET
// /splits of a 10,000-file table end to end; this is that figure rounded
// up:
//
//	go test -run '^$' -bench PlanMemory -benchtime 1x ./handlers/
const PlanBytesPerFile = 4 << 10

// WithMemoryBudget admits plans by the sizing rule: before iceberg-go plans
// a snapshot, the plan reserves PlanBytesPerFile for each entry its
// snapshot declares (the larger of the summary's total-data-files and what
// its manifest list says its manifests hold: data and delete files, added,
// existing and deleted), from b, and holds that until the request's memory
// scope ends (memory.WithScope; without a scope it only admits). As
// planning reads the manifests, the entries it really reads are counted
// (entryCounter), and what passes the declared is reserved before it is
// decoded, so a snapshot that declares less than it holds is refused at
// the bound as one that declares it. A plan that does not fit while others
// hold the memory fails with memory.ErrBusy, one larger than the whole
// budget with a *memory.ExceedsError that names what it needs. A nil b
// admits every plan.
func WithMemoryBudget(b *memory.Budget) PlannerOption {
	return func(p *Planner) { p.budget = b }
}

// admitted is a plan admitted by the sizing rule: the table to plan with,
// whose manifest reads are counted against the plan's reservation.
type admitted struct {
	tbl *table.Table
	c   *entryCounter
}

// done hands the plan's reservation, which planning holds, to the
// request's memory scope (memory.Hold): held until the request ends, or
// given back at once without a scope.
func (a admitted) done(ctx context.Context) {
	if a.c != nil {
		memory.Hold(ctx, a.c.r)
	}
}

// refused is the refusal that ended planning with a.tbl, if its reads
// were refused (the error iceberg-go returns then may not wrap it); nil
// otherwise.
func (a admitted) refused(name string, snap *table.Snapshot) error {
	if a.c == nil {
		return nil
	}
	if refusal := a.c.refused(); refusal != nil {
		return fmt.Errorf("plan %s at snapshot %d: %w", name, snap.SnapshotID, refusal)
	}
	return nil
}

// admitPlan reserves the memory that planning snap of tbl needs, and
// returns the table to plan it with; the caller calls done once it has
// planned.
func (p *Planner) admitPlan(ctx context.Context, tbl *table.Table, name string, snap *table.Snapshot) (_ admitted, err error) {
	if p.budget == nil || p.budget.Capacity() <= 0 {
		return admitted{tbl: tbl}, nil
	}
	files := summaryFiles(snap)
	// Bounded by the whole budget, so that growing past it is a
	// *memory.ExceedsError as reserving past it at once is.
	r, err := p.budget.Reserve(memory.Plan, entryBytes(files), p.budget.Capacity(), p.budget.Origin())
	if err != nil {
		return admitted{}, p.refusal(name, snap, "data files", files, err)
	}
	defer func() {
		if err != nil {
			r.Release()
		}
	}()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return admitted{}, fmt.Errorf("plan %s at snapshot %d: read its manifest list: %w", name, snap.SnapshotID, err)
	}
	// The manifest list is counted as it is read (a list of millions of
	// manifests is refused as it streams), then what it declares is
	// reserved before iceberg-go reads it again and sizes its slices by
	// its counts.
	c := &entryCounter{r: r, paid: files}
	manifests, err := snap.Manifests(countingIO{IO: fsys, c: c})
	if err != nil {
		if refusal := c.refused(); refusal != nil {
			return admitted{}, fmt.Errorf("plan %s at snapshot %d: %w", name, snap.SnapshotID, refusal)
		}
		return admitted{}, fmt.Errorf("plan %s at snapshot %d: read its manifest list: %w", name, snap.SnapshotID, err)
	}
	declared := c.read
	for _, m := range manifests {
		// Each count is an int32, so the sum stays within an int64 for
		// any list the budget let through; entryBytes saturates it.
		declared += max(int64(m.AddedDataFiles()), 0) + max(int64(m.ExistingDataFiles()), 0) + max(int64(m.DeletedDataFiles()), 0)
	}
	if err := c.pay(declared); err != nil {
		return admitted{}, p.refusal(name, snap, "manifest entries", declared, err)
	}
	c.list = snap.ManifestList
	return admitted{tbl: table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(ctx context.Context) (icebergio.IO, error) {
			fsys, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			return countingIO{IO: fsys, c: c}, nil
		}, nil), c: c}, nil
}

// refusal is the error of a plan whose n entries (what) do not fit.
func (p *Planner) refusal(name string, snap *table.Snapshot, what string, n int64, err error) error {
	if ex := (*memory.ExceedsError)(nil); errors.As(err, &ex) {
		return fmt.Errorf("plan %s at snapshot %d: %w: its %d %s need %s to plan (%s each), more than %s, %s",
			name, snap.SnapshotID, memory.ErrTooLarge, n, what, memory.Bytes(ex.Need), memory.Bytes(PlanBytesPerFile),
			memory.Bytes(ex.Bound), ex.BoundName)
	}
	return fmt.Errorf("plan %s at snapshot %d (%d %s, %s): %w", name, snap.SnapshotID, n, what,
		memory.Bytes(entryBytes(n)), err)
}

// summaryFiles is the number of data files snap's summary declares
// (total-data-files), 0 when it declares none.
func summaryFiles(snap *table.Snapshot) int64 { return summaryCount(snap, "total-data-files") }

// summaryCount is the count snap's summary declares under key, 0 when it
// declares none.
func summaryCount(snap *table.Snapshot, key string) int64 {
	if snap.Summary != nil {
		if v, ok := snap.Summary.Properties[key]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				return n
			}
		}
	}
	return 0
}
