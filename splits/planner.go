// Package splits plans Iceberg scans for Druid: it loads a table from the
// configured catalog, selects a snapshot (current, by id, by time or by ref),
// plans the scan with iceberg-go, decides between the raw-file path (v1: no
// delete file applies) and the row path (v2), packs the row path's files
// into splits up to the target split size (cutting a larger file by row
// groups; WithTargetSplitSize), and signs one token per split: the split's
// files, or a reference into the plan that Resolve plans again. The package
// example plans a table of a local warehouse.
package splits

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/promreg"
	"github.com/druidiceberg/sidecar/token"
)

// Catalog is what planning needs of the catalog it plans in
// (catalog.Catalog, which cmd/sidecar wires in): tables loaded with
// the FileIO the catalog gives each (vended credentials, location map),
// their metadata files, and errors classified with internal/fault's
// sentinels.
type Catalog interface {
	// Name is the catalog's configured name, which tokens carry.
	Name() string
	// LoadTable loads the table's current metadata from the catalog.
	LoadTable(ctx context.Context, ident []string) (*table.Table, error)
	// TableAt is the table as the metadata file a token pins records it.
	TableAt(ctx context.Context, ident []string, metadataLocation string) (*table.Table, error)
	// ReadMetadata reads a metadata file of the table again, whatever is
	// cached.
	ReadMetadata(ctx context.Context, ident []string, location string) (table.Metadata, error)
}

// Planner plans tables of one configured catalog.
type Planner struct {
	cat    Catalog
	signer *token.Signer
	// targetSplitSize and maxSplitFiles bound the splits of the row path
	// (see WithTargetSplitSize). footers caches the row groups of the data
	// files whose manifests record no split offsets, by path.
	targetSplitSize int64
	maxSplitFiles   int
	maxSplits       int
	footers         *lru.Cache[string, footerGroups]
	// plans caches the plans that reference tokens name (see Resolve).
	plans *planCache
	// budget admits plans by the memory they need (WithMemoryBudget).
	budget *memory.Budget
	// scans counts the scans planned, by catalog and planner.
	scans *prometheus.CounterVec
}

// NewPlanner returns a planner over a catalog. It does not contact the
// catalog: the first plan does. It counts the scans it plans on reg (nil:
// not exported), where the planners of other catalogs count theirs.
func NewPlanner(cat Catalog, signer *token.Signer, reg prometheus.Registerer, opts ...PlannerOption) (*Planner, error) {
	footers, err := lru.New[string, footerGroups](4096)
	if err != nil {
		return nil, fmt.Errorf("create footer cache: %w", err)
	}
	p := &Planner{
		cat:             cat,
		signer:          signer,
		targetSplitSize: DefaultTargetSplitSize,
		maxSplitFiles:   DefaultMaxSplitFiles,
		maxSplits:       DefaultMaxSplits,
		footers:         footers,
		plans:           newPlanCache(),
		scans: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_scans_planned_total",
			Help: "Snapshots' files planned, by catalog and planner: local (the sidecar read the table's manifests) or remote (the REST catalog's server planned them, --scan-planning).",
		}, []string{"catalog", "planner"})),
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// LoadTable loads a table by NS.NAME from the catalog.
func (p *Planner) LoadTable(ctx context.Context, name string) (*table.Table, error) {
	ident, err := token.ParseIdentifier(name)
	if err != nil {
		return nil, err
	}
	return p.cat.LoadTable(ctx, ident)
}

// planning is the state one Plan carries from step to step.
type planning struct {
	req Request
	// Set by the snapshot step: snap is nil for a table without one.
	tbl     *table.Table
	snap    *table.Snapshot
	schema  *iceberg.Schema
	columns []int
	// Set by the scan step: the request's filter as an Iceberg expression
	// (nil without one), and the data files planned, in path order.
	filter iceberg.BooleanExpression
	// filterJSON is filter's JSON form, which a plan reference pins; nil
	// without a filter, or when it has none that reads back.
	filterJSON json.RawMessage
	// filterBound is filter bound to the schema: the residual of a file
	// whose partition decided nothing.
	filterBound iceberg.BooleanExpression
	// wholeResidual is the JSON of filterBound as a residual, encoded once
	// for all the files it is the residual of (rowSplit).
	wholeResidual json.RawMessage
	// interval is the request's time interval as the scan step selected
	// files for it; nil without one.
	interval *intervalSelection
	tasks    []table.FileScanTask
	maker    *splitMaker
	// pk is how the plan packs: the planner's, or a token's.
	pk   packing
	plan Plan
}

// Plan plans a request, in five steps, each in a file of its own:
//
//  1. snapshot (snapshot.go): load the table, select the snapshot and the
//     schema the rows are emitted in;
//  2. scan (scan.go): plan the snapshot's data files with iceberg-go, with
//     the delete files that apply to each, under the request's filter, and
//     keep those that may hold rows of its time interval (interval.go);
//  3. path decision (decide.go): raw files (v1) or rows (v2);
//  4. packing (packing.go): turn the files into splits;
//  5. signing (sign.go): give each split its token.
func (p *Planner) Plan(ctx context.Context, req Request) (Plan, error) {
	sc, err := p.NewScan(ctx, nil, req, nil)
	if err != nil {
		return Plan{}, err
	}
	return p.Cut(ctx, sc, req.Interval)
}

// Scan is a request's table planned once: the snapshot and scan steps of
// Plan, done. Cut plans its splits for one time interval, as many times as
// needed (/changes plans the target snapshot once for all its intervals).
type Scan struct {
	pl planning
}

// NewScan runs the snapshot and scan steps of Plan for req (its Interval
// aside). tbl, when not nil, is req's table already loaded; tasks, when not
// nil, are tbl's files at req's snapshot as iceberg-go's PlanFiles gives
// them without a filter (Planner.PlanFiles), which spares planning them
// again when req has neither filter nor fromSnapshot.
func (p *Planner) NewScan(ctx context.Context, tbl *table.Table, req Request, tasks []table.FileScanTask) (*Scan, error) {
	if req.Mode == "" {
		req.Mode = ModeAuto
	}
	// The splits pin the row encoding they were planned under.
	req.Encoding.Version = token.RowEncoding
	pl := &planning{req: req, tbl: tbl, plan: Plan{Table: req.Table, Path: PathFiles},
		pk: p.packingFor(req)}
	if req.Mode == ModeRows {
		pl.plan.Path = PathRows
	}
	if err := p.selectSnapshot(ctx, pl); err != nil {
		return nil, err
	}
	if pl.snap == nil {
		// An empty table has no snapshot and no rows.
		pl.plan.Fields = pl.tbl.Schema().Fields()
		pl.plan.Empty = true
		if err := pl.addMetaColumns(); err != nil {
			return nil, err
		}
		return &Scan{pl: *pl}, nil
	}
	pl.plan.SnapshotID = pl.snap.SnapshotID
	pl.plan.Fields = pl.schema.Fields()
	if len(pl.columns) > 0 {
		pl.plan.Fields = slices.DeleteFunc(pl.plan.Fields, func(f iceberg.NestedField) bool { return !slices.Contains(pl.columns, f.ID) })
	}
	if err := pl.addMetaColumns(); err != nil {
		return nil, err
	}
	if err := pl.servesChangedValues(); err != nil {
		return nil, err
	}
	if tasks != nil && req.Filter == nil && req.FromSnapshot == nil {
		pl.tasks = slices.Clone(tasks)
		pl.orderTasks()
	} else if err := p.scan(ctx, pl); err != nil {
		return nil, err
	}
	pl.maker = newSplitMaker(pl.tbl.Metadata(), pl.tbl.MetadataLocation(), pl.snap.SnapshotID, pl.schema.ID).
		in(p.cat.Name(), pl.tbl.Identifier()).checking(p.cat)
	return &Scan{pl: *pl}, nil
}

// Snapshot is the snapshot the scan planned (0 for a table without one),
// and Fields the top-level fields its plans serve.
func (sc *Scan) Snapshot() int64               { return sc.pl.plan.SnapshotID }
func (sc *Scan) Fields() []iceberg.NestedField { return sc.pl.plan.Fields }

// Cut plans the splits of sc's files that may hold rows of the time
// interval iv (all of them when iv is nil): the rest of Plan's scan step,
// then the path decision, packing and signing.
func (p *Planner) Cut(ctx context.Context, sc *Scan, iv *TimeInterval) (Plan, error) {
	pl := sc.pl
	pl.plan.Warnings = slices.Clone(pl.plan.Warnings)
	if pl.snap == nil {
		return pl.plan, nil
	}
	pl.req.Interval = iv
	if err := pl.selectInterval(); err != nil {
		return Plan{}, err
	}
	pl.timeRangeWarning()
	if err := pl.decidePath(); err != nil {
		return Plan{}, err
	}
	if err := p.pack(ctx, &pl); err != nil {
		return Plan{}, err
	}
	if err := p.sign(&pl); err != nil {
		return Plan{}, err
	}
	return pl.plan, nil
}

// Source is what reading a split needs of its table.
type Source struct {
	// Schema is the schema the split's rows are emitted in, with the
	// table's name mapping, as the split's pinned metadata file records
	// them.
	Schema token.TableSchema
	// FS is the FileIO the catalog gives the table now (its vended
	// credentials, the location map).
	FS icebergio.IO
}

// Source opens the table of a split, from the catalog's caches when it
// can.
func (p *Planner) Source(ctx context.Context, sp token.Split) (Source, error) {
	tbl, err := p.cat.TableAt(ctx, sp.Table, sp.MetadataLocation)
	if err != nil {
		return Source{}, err
	}
	ts, err := schemaOf(tbl.Metadata(), sp)
	if err != nil {
		return Source{}, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return Source{}, fmt.Errorf("read the files of %s: %w", strings.Join(sp.Table, "."), err)
	}
	return Source{Schema: ts, FS: fsys}, nil
}

// schemaOf is the schema a split's rows are emitted in, with the table's
// name mapping.
func schemaOf(meta table.Metadata, sp token.Split) (token.TableSchema, error) {
	for _, s := range meta.Schemas() {
		if s.ID == sp.SchemaID {
			ts := token.TableSchema{Schema: s, NameMapping: meta.NameMapping()}
			if sp.Meta.Has(token.MetaPartition) {
				ts.PartitionType = PartitionType(meta, s)
			}
			return ts, nil
		}
	}
	// The token was signed for a schema this metadata file holds: the file
	// was rewritten since.
	return token.TableSchema{}, fmt.Errorf("metadata %s has no schema %d: %w", sp.MetadataLocation, sp.SchemaID, table.ErrInvalidMetadata)
}

// PlanFiles plans a table's snapshot with iceberg-go: every data file with
// the delete files that apply to it. Its errors are classified as Plan's.
func (p *Planner) PlanFiles(ctx context.Context, tbl *table.Table, name string, snapshotID int64) (_ []table.FileScanTask, err error) {
	a := admitted{tbl: tbl}
	snap := tbl.Metadata().SnapshotByID(snapshotID)
	if snap != nil {
		rp, err := p.remoteScan(ctx, Request{Table: name})
		if err != nil {
			return nil, err
		}
		if rp != nil {
			schema := tbl.Schema()
			if snap.SchemaID != nil {
				if s, ok := tbl.Schemas()[*snap.SchemaID]; ok {
					schema = s
				}
			}
			return p.planRemote(ctx, rp, tbl, name, snap, schema, nil, nil)
		}
		if a, err = p.admitPlan(ctx, tbl, name, snap); err != nil {
			return nil, err
		}
		defer a.done(ctx)
	}
	scan := a.tbl.Scan(table.WithSnapshotID(snapshotID))
	defer func() {
		if cerr := scan.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close scan of %s: %w", name, cerr)
		}
	}()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		if snap != nil {
			if refusal := a.refused(name, snap); refusal != nil {
				return nil, refusal
			}
		}
		return nil, fmt.Errorf("plan %s at snapshot %d in catalog %q: %w", name, snapshotID, p.cat.Name(), err)
	}
	p.planned(false)
	return tasks, nil
}

// String names a plan for logs.
func (p Plan) String() string {
	return fmt.Sprintf("%s@%d %s (%d splits)", p.Table, p.SnapshotID, p.Path, len(p.Splits))
}
