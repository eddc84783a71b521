package splits

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// The snapshot step of Plan: load the table, resolve the request's snapshot
// selector, and settle the schema the rows are emitted in and its
// projection.

// selectSnapshot loads the request's table (unless pl has it already) and
// fills in pl's table, snapshot, schema and projected columns; for an
// empty table (no snapshot) it leaves the snapshot nil.
func (p *Planner) selectSnapshot(ctx context.Context, pl *planning) error {
	tbl := pl.tbl
	if tbl == nil {
		var err error
		if tbl, err = p.LoadTable(ctx, pl.req.Table); err != nil {
			return err
		}
	}
	snap, explicit, err := selectSnapshot(tbl, pl.req)
	if err != nil {
		return err
	}
	pl.tbl, pl.snap, pl.schema = tbl, snap, tbl.Schema()
	if snap == nil {
		return nil
	}
	if explicit && snap.SchemaID != nil {
		if s, ok := tbl.Schemas()[*snap.SchemaID]; ok {
			pl.schema = s
		}
	}
	pl.columns, err = projectColumns(pl.schema, pl.req.Columns)
	return err
}

// selectSnapshot resolves the request's snapshot selector. explicit is true
// when the client chose a snapshot, in which case that snapshot's schema is
// used (as iceberg-go does for time travel).
func selectSnapshot(tbl *table.Table, req Request) (snap *table.Snapshot, explicit bool, err error) {
	n := 0
	if req.SnapshotID != nil {
		n++
	}
	if req.SnapshotTime != nil {
		n++
	}
	if req.Ref != "" {
		n++
	}
	if n > 1 {
		return nil, false, fmt.Errorf("%w: give at most one of snapshotId, snapshotTime and ref", fault.ErrBadRequest)
	}
	switch {
	case req.SnapshotID != nil:
		if snap = tbl.SnapshotByID(*req.SnapshotID); snap == nil {
			return nil, false, fmt.Errorf("%w: %s has no snapshot %d", ErrSnapshotNotFound, req.Table, *req.SnapshotID)
		}
		return snap, true, nil
	case req.SnapshotTime != nil:
		ms := req.SnapshotTime.UnixMilli()
		if snap = tbl.SnapshotAsOf(ms, true); snap == nil {
			return nil, false, fmt.Errorf("%w: %s has no snapshot at or before %s",
				ErrSnapshotNotFound, req.Table, req.SnapshotTime.UTC().Format(time.RFC3339Nano))
		}
		return snap, true, nil
	case req.Ref != "":
		var ref table.SnapshotRef
		ok := false
		for name, r := range tbl.Metadata().Refs() {
			if name == req.Ref {
				ref, ok = r, true
				break
			}
		}
		if !ok {
			return nil, false, fmt.Errorf("%w: %s has no branch or tag %s", ErrSnapshotNotFound, req.Table, fault.Quote(req.Ref))
		}
		if snap = tbl.SnapshotByID(ref.SnapshotID); snap == nil {
			return nil, false, fmt.Errorf("%w: ref %q of %s points at missing snapshot %d",
				ErrSnapshotNotFound, req.Ref, req.Table, ref.SnapshotID)
		}
		// A tag pins a snapshot and its schema; a branch reads with the
		// table's current schema.
		return snap, ref.SnapshotRefType == table.TagRef, nil
	}
	return tbl.CurrentSnapshot(), false, nil
}

// appendsOnly checks that from is an ancestor of to and that every snapshot
// after it, up to to, only added data (an append) or rewrote it without
// changing it (a replace, as compaction does). Anything else deleted or
// changed rows that an incremental append would never show Druid.
func appendsOnly(tbl *table.Table, name string, from int64, to *table.Snapshot) error {
	if tbl.SnapshotByID(from) == nil {
		return fmt.Errorf("%w: %s has no snapshot %d (fromSnapshot)", ErrSnapshotNotFound, name, from)
	}
	for s := to; s.SnapshotID != from; {
		if s.Summary == nil {
			return fmt.Errorf("%w: snapshot %d of %s records no operation; plan the whole table", ErrConflict, s.SnapshotID, name)
		}
		switch op := s.Summary.Operation; op {
		case table.OpAppend, table.OpReplace:
		default:
			return fmt.Errorf("%w: snapshot %d of %s is a %s, which deleted or changed rows after fromSnapshot %d; "+
				"appended data alone would leave them wrong in Druid: re-ingest the affected intervals "+
				"(GET /changes?table=%s&fromSnapshot=%d&timeColumn=…) or plan the whole table",
				ErrConflict, s.SnapshotID, name, op, from, name, from)
		}
		if s.ParentSnapshotID == nil {
			return fmt.Errorf("%w: fromSnapshot %d is not an ancestor of snapshot %d of %s", fault.ErrBadRequest, from, to.SnapshotID, name)
		}
		if s = tbl.SnapshotByID(*s.ParentSnapshotID); s == nil {
			return fmt.Errorf("%w: the ancestry of %s is broken above snapshot %d (expired?)", ErrConflict, name, to.SnapshotID)
		}
	}
	return nil
}

// projectColumns resolves column names to field ids in schema order.
func projectColumns(schema *iceberg.Schema, names []string) ([]int, error) {
	if len(names) == 0 {
		return nil, nil
	}
	want := map[int]bool{}
	for _, n := range names {
		f, ok := schema.FindFieldByName(n)
		if !ok || !slices.ContainsFunc(schema.Fields(), func(top iceberg.NestedField) bool { return top.ID == f.ID }) {
			return nil, fmt.Errorf("%w: column %s is not a top-level column of the table", fault.ErrBadRequest, fault.Quote(n))
		}
		want[f.ID] = true
	}
	var ids []int
	for _, f := range schema.Fields() {
		if want[f.ID] {
			ids = append(ids, f.ID)
		}
	}
	return ids, nil
}
