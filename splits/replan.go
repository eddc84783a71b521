package splits

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/token"
)

// ErrPlanMismatch: a plan-reference token names a plan that planning its
// snapshot again no longer gives (another release that plans otherwise, or
// a metadata file rewritten in place); the token is refused rather than
// served as other rows.
var ErrPlanMismatch = errors.New("the token's plan no longer matches")

// planOptions are what a plan depends on besides its metadata file and
// snapshot: what a reference token pins so that any replica plans the
// same splits again (see token.PlanRef). Target, MaxFiles and MinSplits
// are the packing of the planner that signed it, so replicas configured
// otherwise still agree.
type planOptions struct {
	Table    string         `json:"t"`
	SchemaID int            `json:"sc"`
	Columns  []int          `json:"c,omitempty"`
	Encoding token.Encoding `json:"e,omitzero"`
	// Meta are the metadata columns the rows carry.
	Meta token.MetaColumns `json:"mc,omitempty"`
	// Filter is the scan's row filter as iceberg's REST JSON expression,
	// bound to the schema (a timeWindow's times already resolved).
	Filter        json.RawMessage `json:"f,omitempty"`
	ApplyResidual bool            `json:"ar,omitempty"`
	FromSnapshot  *int64          `json:"fs,omitempty"`
	Target        int64           `json:"ts"`
	MaxFiles      int             `json:"mf"`
	MaxSplits     int             `json:"mx,omitempty"`
	MinSplits     int             `json:"ms,omitempty"`
	// Interval is the request's time interval: the time column's field
	// id, and the interval's ends in epoch milliseconds.
	Interval *intervalOptions `json:"iv,omitempty"`
}

// intervalOptions pin a time interval (see planOptions).
type intervalOptions struct {
	FieldID int   `json:"c"`
	Start   int64 `json:"s"`
	End     int64 `json:"e"`
}

// refOf returns the options a reference to one of pl's splits pins, and
// whether the plan can be referenced at all (its filter has a JSON form
// that reads back).
func (p *Planner) refOf(pl *planning) (token.PlanRef, bool) {
	if pl.filter != nil && pl.filterJSON == nil {
		return token.PlanRef{}, false
	}
	o := planOptions{
		Table: pl.req.Table, SchemaID: pl.schema.ID, Columns: pl.columns, Encoding: pl.req.Encoding, Meta: pl.req.MetaColumns,
		Filter: pl.filterJSON, ApplyResidual: pl.req.ApplyResidual, FromSnapshot: pl.req.FromSnapshot,
		Target: pl.pk.target, MaxFiles: pl.pk.maxFiles, MaxSplits: pl.pk.maxSplits, MinSplits: pl.req.MinSplits,
	}
	if iv := pl.req.Interval; iv != nil {
		i := slices.IndexFunc(pl.schema.Fields(), func(f iceberg.NestedField) bool { return f.Name == iv.Column })
		if i < 0 {
			return token.PlanRef{}, false
		}
		o.Interval = &intervalOptions{FieldID: pl.schema.Fields()[i].ID, Start: iv.Start.UnixMilli(), End: iv.End.UnixMilli()}
	}
	raw, err := json.Marshal(o)
	if err != nil {
		return token.PlanRef{}, false
	}
	return token.PlanRef{
		Catalog: p.cat.Name(), Table: pl.tbl.Identifier(), MetadataLocation: pl.tbl.MetadataLocation(), SnapshotID: pl.snap.SnapshotID,
		Options: raw, Count: len(pl.plan.Splits),
	}, true
}

// planKey is the identity of a referenced plan in the plan cache.
func planKey(kind token.TokenKind, ref token.PlanRef) string {
	return string(kind) + "\x00" + ref.MetadataLocation + "\x00" + strconv.FormatInt(ref.SnapshotID, 10) + "\x00" + string(ref.Options)
}

// Resolve returns the files of the split a plan-reference token names: it
// plans the referenced snapshot again with the referenced options (once
// for every request that names the plan while it is cached) and checks
// that the plan is the one the token was signed for. A plan that differs
// is ErrPlanMismatch.
func (p *Planner) Resolve(ctx context.Context, kind token.TokenKind, ref token.PlanRef) ([]token.Split, error) {
	var o planOptions
	if err := json.Unmarshal(ref.Options, &o); err != nil {
		return nil, fmt.Errorf("%w: the plan options of the token do not decode: %w", token.ErrMalformedToken, err)
	}
	key := planKey(kind, ref)
	replan := func(ctx context.Context) (*cachedPlan, error) { return p.replan(ctx, kind, ref, o) }
	plan, err := p.plans.load(ctx, key, replan)
	if err != nil {
		return nil, err
	}
	if !plan.matches(ref) && p.metadataChanged(ctx, ref, plan) {
		// The plan was made from a metadata file that has changed since
		// (rewritten in place, then restored): it is made again from the
		// file as it is, rather than kept as the answer for good.
		p.plans.remove(key)
		if plan, err = p.plans.load(ctx, key, replan); err != nil {
			return nil, err
		}
	}
	if !plan.matches(ref) {
		return nil, fmt.Errorf("%w: planning snapshot %d of %s again (from %s) gives %d splits with fingerprint %x, "+
			"the token was signed for %d with %x: it was planned by a release that plans otherwise, or the metadata "+
			"file was rewritten; plan again with GET /splits",
			ErrPlanMismatch, ref.SnapshotID, o.Table, ref.MetadataLocation, len(plan.splits), plan.fingerprint, ref.Count, ref.Fingerprint)
	}
	return plan.splits[ref.Index], nil
}

// matches reports whether the plan is the one ref was signed for.
func (c *cachedPlan) matches(ref token.PlanRef) bool {
	return len(c.splits) == ref.Count && string(c.fingerprint) == string(ref.Fingerprint)
}

// metadataChanged reports whether the metadata file at location differs
// from the one plan was made from. It reads the file again (and keeps it in
// the metadata cache); a plan cached as it was signed, or a file that does
// not read, counts as unchanged. A token whose plan truly differs thus
// costs a read of the metadata file per request, never a plan.
func (p *Planner) metadataChanged(ctx context.Context, ref token.PlanRef, plan *cachedPlan) bool {
	if plan.meta == nil {
		return false
	}
	meta, err := p.cat.ReadMetadata(ctx, ref.Table, ref.MetadataLocation)
	return err == nil && !meta.Equals(plan.meta)
}

// replan plans a referenced plan again: the steps of Plan, from the
// pinned metadata file rather than the catalog, with the path the token's
// kind says and the pinned options.
//
// It is admitted by the rule every plan is (WithMemoryBudget), and holds
// its reservation until it returns, in a memory scope of its own: the
// stream that asked holds no scope (and must not hold a plan's memory for
// as long as it streams; it keeps only its split's files), and the
// requests that share this replan (the plan cache's single flight) share
// its one reservation.
func (p *Planner) replan(ctx context.Context, kind token.TokenKind, ref token.PlanRef, o planOptions) (*cachedPlan, error) {
	ctx, end := memory.WithScope(ctx)
	defer end()
	tbl, err := p.cat.TableAt(ctx, ref.Table, ref.MetadataLocation)
	if err != nil {
		return nil, err
	}
	snap := tbl.SnapshotByID(ref.SnapshotID)
	if snap == nil {
		return nil, fmt.Errorf("%w: metadata %s has no snapshot %d", ErrPlanMismatch, ref.MetadataLocation, ref.SnapshotID)
	}
	schema, ok := tbl.Schemas()[o.SchemaID]
	if !ok {
		return nil, fmt.Errorf("%w: metadata %s has no schema %d", ErrPlanMismatch, ref.MetadataLocation, o.SchemaID)
	}
	req := Request{Table: o.Table, Columns: nil, Encoding: o.Encoding, MetaColumns: o.Meta, ApplyResidual: o.ApplyResidual,
		FromSnapshot: o.FromSnapshot, MinSplits: o.MinSplits, Mode: ModeRows}
	pl := &planning{req: req, tbl: tbl, snap: snap, schema: schema, columns: o.Columns,
		plan: Plan{Table: o.Table, SnapshotID: snap.SnapshotID, Path: PathRows},
		pk:   packing{target: o.Target, maxFiles: o.MaxFiles, maxSplits: o.MaxSplits}}
	if kind == token.KindFile {
		pl.req.Mode, pl.plan.Path = ModeFiles, PathFiles
	}
	if o.Filter != nil {
		if pl.filter, err = iceberg.ParseExpr(o.Filter, schema); err != nil {
			return nil, fmt.Errorf("%w: the token's filter does not read back: %w", ErrPlanMismatch, err)
		}
		pl.filterJSON = o.Filter
	}
	if err := p.scanWith(ctx, pl); err != nil {
		return nil, err
	}
	if iv := o.Interval; iv != nil {
		f, ok := schema.FindFieldByID(iv.FieldID)
		if !ok {
			return nil, fmt.Errorf("%w: schema %d has no field %d", ErrPlanMismatch, o.SchemaID, iv.FieldID)
		}
		pl.req.Interval = &TimeInterval{Column: f.Name, Start: time.UnixMilli(iv.Start).UTC(), End: time.UnixMilli(iv.End).UTC()}
	}
	if err := pl.selectInterval(); err != nil {
		return nil, err
	}
	pl.maker = newSplitMaker(tbl.Metadata(), ref.MetadataLocation, snap.SnapshotID, schema.ID).in(p.cat.Name(), ref.Table).checking(p.cat)
	if err := p.pack(ctx, pl); err != nil {
		return nil, err
	}
	c, err := cachePlanOf(pl.plan.Splits)
	if err != nil {
		return nil, err
	}
	c.meta = tbl.Metadata()
	return c, nil
}
