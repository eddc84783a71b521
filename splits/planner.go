// Package splits plans Iceberg scans for Druid: it loads a table from the
// configured catalog, selects a snapshot (current, by id, by time or by ref),
// plans the scan with iceberg-go, decides between the raw-file path (v1: no
// delete file applies) and the row path (v2), packs the row path's files
// into splits up to the target split size (cutting a larger file by row
// groups; WithTargetSplitSize), and signs one token per split: the split's
// files, or a reference into the plan that Resolve plans again.
//
// A typical use:
//
//	signer, _ := split.NewSigner(key)
//	p, _ := splits.NewPlanner(cfg, fsys, signer)
//	plan, err := p.Plan(ctx, splits.Request{Table: "demo.orders"})
//	for _, s := range plan.Splits {
//		fmt.Println(s.Kind, s.Token)
//	}
package splits

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/splits/split"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Planner plans tables of one configured catalog.
type Planner struct {
	conn   *catalogConn
	fsys   icebergio.IO
	signer *split.Signer
	// metas caches table metadata by metadata location: a metadata file is
	// immutable, so an entry never goes stale.
	metas *lru.Cache[string, table.Metadata]
	// targetSplitSize and maxSplitFiles bound the splits of the row path
	// (see WithTargetSplitSize). footers caches the row groups of the data
	// files whose manifests record no split offsets, by path.
	targetSplitSize int64
	maxSplitFiles   int
	maxSplits       int
	footers         *lru.Cache[string, footerGroups]
	// plans caches the plans that reference tokens name (see Resolve).
	plans *planCache
}

// NewPlanner returns a planner over the configured catalog. It does not
// contact the catalog: the first plan does, and a catalog that is down gives
// ErrUnavailable until it answers. fsys reads metadata, manifests and data.
func NewPlanner(cfg CatalogConfig, fsys icebergio.IO, signer *split.Signer, opts ...PlannerOption) (*Planner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Name = cmp.Or(cfg.Name, "sidecar")
	fsF := func(context.Context) (icebergio.IO, error) { return fsys, nil }
	cache, err := lru.New[string, table.Metadata](256)
	if err != nil {
		return nil, fmt.Errorf("create metadata cache: %w", err)
	}
	footers, err := lru.New[string, footerGroups](4096)
	if err != nil {
		return nil, fmt.Errorf("create footer cache: %w", err)
	}
	p := &Planner{
		conn:            &catalogConn{cfg: cfg, fsF: fsF, retryAfter: 2 * time.Second},
		fsys:            fsys,
		signer:          signer,
		metas:           cache,
		targetSplitSize: DefaultTargetSplitSize,
		maxSplitFiles:   DefaultMaxSplitFiles,
		maxSplits:       DefaultMaxSplits,
		footers:         footers,
		plans:           newPlanCache(),
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Ping connects to the catalog if it is not connected yet.
//
// Once connected, it reports the catalog's last answer: after a table load
// failed because the catalog did not answer, Ping fails until a load
// succeeds again, so /readyz says whether the catalog answered recently.
func (p *Planner) Ping(ctx context.Context) error {
	if _, err := p.conn.get(ctx); err != nil {
		return err
	}
	return p.conn.health()
}

// maxListedTables bounds Tables, which serves a status page, not a crawler.
const maxListedTables = 500

// tableLister is what iceberg-go's catalogs offer to list tables.
type tableLister interface {
	ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error)
	ListTables(ctx context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error]
}

// Catalog names the configured catalog's type and name.
func (p *Planner) Catalog() (typ, name string) { return p.conn.cfg.Type, p.conn.cfg.Name }

// Tables lists the catalog's tables as NS.NAME, sorted, at most
// maxListedTables of them (truncated reports whether there were more).
func (p *Planner) Tables(ctx context.Context) (names []string, truncated bool, err error) {
	loader, err := p.conn.get(ctx)
	if err != nil {
		return nil, false, err
	}
	switch l := loader.(type) {
	case staticCatalog:
		for n := range l.tables {
			names = append(names, n)
		}
	case tableLister:
		var walk func(parent table.Identifier, depth int) error
		walk = func(parent table.Identifier, depth int) error {
			nss, err := l.ListNamespaces(ctx, parent)
			if err != nil {
				return err
			}
			for _, ns := range nss {
				for ident, err := range l.ListTables(ctx, ns) {
					if err != nil {
						return err
					}
					names = append(names, strings.Join(ident, "."))
					if len(names) > maxListedTables {
						return nil
					}
				}
				if depth < 3 {
					if err := walk(ns, depth+1); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := walk(nil, 0); err != nil {
			return nil, false, redact(storageError(p.conn.cfg.Name, "list tables", err), p.conn.cfg.secrets())
		}
	default:
		return nil, false, fmt.Errorf("%w: the %s catalog cannot list its tables", ErrUnsupported, p.conn.cfg.Type)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) > maxListedTables {
		return names[:maxListedTables], true, nil
	}
	return names, false, nil
}

// LoadTable loads a table by NS.NAME from the catalog. The returned table
// reads its files through the sidecar's FileIO, so the location map applies.
func (p *Planner) LoadTable(ctx context.Context, name string) (*table.Table, error) {
	ident, err := ParseIdentifier(name)
	if err != nil {
		return nil, err
	}
	loader, err := p.conn.get(ctx)
	if err != nil {
		return nil, err
	}
	tbl, err := loader.LoadTable(ctx, ident)
	if err != nil {
		err = redact(classifyLoadError(p.conn.cfg.Name, ident, err), p.conn.cfg.secrets())
		p.conn.observe(err)
		return nil, err
	}
	p.conn.observe(nil)
	fsF := func(context.Context) (icebergio.IO, error) { return p.fsys, nil }
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, nil), nil
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
		pl.plan.Warnings = append(pl.plan.Warnings, noFilesWarning)
		return &Scan{pl: *pl}, nil
	}
	pl.plan.SnapshotID = pl.snap.SnapshotID
	pl.plan.Fields = pl.schema.Fields()
	if len(pl.columns) > 0 {
		pl.plan.Fields = slices.DeleteFunc(pl.plan.Fields, func(f iceberg.NestedField) bool { return !slices.Contains(pl.columns, f.ID) })
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
	pl.maker = newSplitMaker(pl.tbl.Metadata(), pl.tbl.MetadataLocation(), pl.snap.SnapshotID, pl.schema.ID)
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

// TableSchema returns the schema and name mapping of a split's table,
// reading the split's metadata file once per process while it stays cached.
func (p *Planner) TableSchema(ctx context.Context, sp split.Split) (split.TableSchema, error) {
	meta, err := p.metadata(ctx, sp)
	if err != nil {
		return split.TableSchema{}, err
	}
	for _, s := range meta.Schemas() {
		if s.ID == sp.SchemaID {
			return split.TableSchema{Schema: s, NameMapping: meta.NameMapping()}, nil
		}
	}
	return split.TableSchema{}, fmt.Errorf("metadata %s has no schema %d", sp.MetadataLocation, sp.SchemaID)
}

// metadata returns a split's table metadata, from the cache when it can.
func (p *Planner) metadata(ctx context.Context, sp split.Split) (table.Metadata, error) {
	return p.metadataAt(ctx, sp.MetadataLocation)
}

// metadataAt returns the table metadata in the file at location, from the
// cache when it can.
func (p *Planner) metadataAt(ctx context.Context, location string) (table.Metadata, error) {
	meta, ok := p.metas.Get(location)
	if !ok {
		fsF := func(context.Context) (icebergio.IO, error) { return p.fsys, nil }
		tbl, err := table.NewFromLocation(ctx, nil, location, fsF, nil)
		if err != nil {
			return nil, redact(storageError(p.conn.cfg.Name, "read metadata "+location, err), p.conn.cfg.secrets())
		}
		meta = tbl.Metadata()
		p.metas.Add(location, meta)
	}
	return meta, nil
}

// PlanFiles plans a table's snapshot with iceberg-go: every data file with
// the delete files that apply to it. Its errors are classified as Plan's.
func (p *Planner) PlanFiles(ctx context.Context, tbl *table.Table, name string, snapshotID int64) (_ []table.FileScanTask, err error) {
	scan := tbl.Scan(table.WithSnapshotID(snapshotID))
	defer func() {
		if cerr := scan.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close scan of %s: %w", name, cerr)
		}
	}()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		err = redact(storageError(p.conn.cfg.Name, fmt.Sprintf("plan %s at snapshot %d", name, snapshotID), err), p.conn.cfg.secrets())
		p.conn.observe(err)
		return nil, err
	}
	return tasks, nil
}

// String names a plan for logs.
func (p Plan) String() string {
	return fmt.Sprintf("%s@%d %s (%d splits)", p.Table, p.SnapshotID, p.Path, len(p.Splits))
}
