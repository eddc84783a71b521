// Package splits plans Iceberg scans for Druid: it loads a table from the
// configured catalog, selects a snapshot (current, by id, by time or by ref),
// plans the scan with iceberg-go, decides between the raw-file path (v1: no
// delete file applies) and the row path (v2), and signs one token per split:
// a data file, or on the row path a range of the row groups of a file larger
// than the target split size (WithTargetSplitSize).
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

// Mode is what a client asks for.
type Mode string

// The request modes.
const (
	// ModeAuto serves raw files when no delete file applies, rows otherwise.
	ModeAuto Mode = "auto"
	// ModeRows serves rows for every table, so a spec stays the same when a
	// table gains its first delete file.
	ModeRows Mode = "rows"
	// ModeFiles serves raw files and is refused when any delete file applies.
	ModeFiles Mode = "files"
)

// ParseMode parses a mode, "" being auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeRows, ModeFiles:
		return m, nil
	}
	return "", fmt.Errorf("%w: mode %s: want auto, rows or files", ErrBadRequest, Quote(s))
}

// Path is the path a plan takes: PathFiles (v1) or PathRows (v2).
type Path string

// The two paths.
const (
	PathFiles Path = "v1"
	PathRows  Path = "v2"
)

// Request selects a table, a snapshot and a mode. At most one of SnapshotID,
// SnapshotTime and Ref may be set; none means the current snapshot.
type Request struct {
	Table        string
	SnapshotID   *int64
	SnapshotTime *time.Time
	Ref          string
	Mode         Mode
	// Columns narrows the rows to these top-level columns (emitted in schema
	// order); empty means all. It applies to the row path only: raw files
	// hold what they hold.
	Columns  []string
	Encoding split.Encoding
	// Filter is Druid's icebergFilter; nil plans every file.
	Filter *Filter
	// ResidualMode is Druid's residualFilterMode: ignore (default), warn
	// or fail.
	ResidualMode ResidualMode
	// Now is the base time of a timeWindow filter without one; zero means
	// the time of planning.
	Now time.Time
	// FromSnapshot, when set, plans only the data appended after that
	// snapshot up to the selected one (the current one by default), for
	// incremental ingestion; every snapshot in between must be an append.
	FromSnapshot *int64
	// ApplyResidual makes the row path drop the rows that do not match
	// the filter, so the filter holds row by row and not only file by
	// file; it takes the row path whenever a residual remains.
	ApplyResidual bool
	// TimeInterval, when set, keeps only the rows whose time column the
	// sidecar serves as a Druid time within it, row by row: its
	// IntervalFilter is joined to Filter and ApplyResidual holds. A Druid
	// REPLACE of an interval needs exactly that (MSQ fails the task when a
	// row falls outside the OVERWRITE range).
	TimeInterval *TimeInterval
}

// TimeInterval is a Druid time interval [Start, End) over a time column.
type TimeInterval struct {
	Column     string
	Start, End time.Time
}

// ResidualMode says what to do when the filter cannot be decided from
// partition values and file statistics alone, so that some planned files
// hold rows that do not match.
type ResidualMode string

// The residual modes, as Druid names them.
const (
	ResidualIgnore ResidualMode = "ignore"
	ResidualWarn   ResidualMode = "warn"
	ResidualFail   ResidualMode = "fail"
)

// ParseResidualMode parses a residualFilterMode, "" being ignore.
func ParseResidualMode(s string) (ResidualMode, error) {
	switch m := ResidualMode(s); m {
	case "":
		return ResidualIgnore, nil
	case ResidualIgnore, ResidualWarn, ResidualFail:
		return m, nil
	}
	return "", fmt.Errorf("%w: residualFilterMode %s: want ignore, warn or fail", ErrBadRequest, Quote(s))
}

// PlannedSplit is one split of a plan with its signed token.
type PlannedSplit struct {
	Split split.Split
	Kind  split.TokenKind
	Token string
	// ID is ID(Token), worked out with the token.
	ID string
}

// Plan is the answer to a Request.
type Plan struct {
	Table      string
	SnapshotID int64
	Path       Path
	Splits     []PlannedSplit
	// Warnings are things the client should know, such as a residual
	// filter under residualFilterMode=warn.
	Warnings []string
	// Fields are the top-level fields the plan serves, in order: the
	// schema's, narrowed by the projection on the row path.
	Fields []iceberg.NestedField
}

// Planner plans tables of one configured catalog.
type Planner struct {
	conn   *catalogConn
	fsys   icebergio.IO
	signer *split.Signer
	// metas caches table metadata by metadata location: a metadata file is
	// immutable, so an entry never goes stale.
	metas *lru.Cache[string, table.Metadata]
	// targetSplitSize is the size above which the row path splits a data
	// file by row groups; 0 never splits. footers caches the row groups of
	// the data files whose manifests record no split offsets, by path.
	targetSplitSize int64
	footers         *lru.Cache[string, footerGroups]
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
		footers:         footers,
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

// Plan plans a request.
func (p *Planner) Plan(ctx context.Context, req Request) (Plan, error) {
	if req.Mode == "" {
		req.Mode = ModeAuto
	}
	tbl, err := p.LoadTable(ctx, req.Table)
	if err != nil {
		return Plan{}, err
	}
	snap, explicit, err := selectSnapshot(tbl, req)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Table: req.Table, Path: PathFiles}
	if req.Mode == ModeRows {
		plan.Path = PathRows
	}
	if snap == nil {
		// An empty table has no snapshot and no rows.
		plan.Fields = tbl.Schema().Fields()
		plan.Warnings = append(plan.Warnings, noFilesWarning)
		return plan, nil
	}
	plan.SnapshotID = snap.SnapshotID

	schema := tbl.Schema()
	if explicit && snap.SchemaID != nil {
		if s, ok := tbl.Schemas()[*snap.SchemaID]; ok {
			schema = s
		}
	}
	columns, err := projectColumns(schema, req.Columns)
	if err != nil {
		return Plan{}, err
	}
	// A projection and ISO timestamps change what is served, which only
	// the row path can do; binaryAsString is also a Druid Parquet option,
	// so it needs no row path.
	if len(columns) > 0 || req.Encoding.ISOTimestamps {
		if req.Mode == ModeFiles {
			return Plan{}, fmt.Errorf("%w: columns and timestamps=iso need the row path, not mode=files", ErrBadRequest)
		}
		plan.Path = PathRows
	}
	plan.Fields = schema.Fields()
	if len(columns) > 0 {
		plan.Fields = slices.DeleteFunc(plan.Fields, func(f iceberg.NestedField) bool { return !slices.Contains(columns, f.ID) })
	}
	opts := []table.ScanOption{table.WithSnapshotID(snap.SnapshotID)}
	if iv := req.TimeInterval; iv != nil {
		field, err := TimeColumn(schema, iv.Column)
		if err != nil {
			return Plan{}, err
		}
		f, err := IntervalFilter(field, iv.Start, iv.End)
		if err != nil {
			return Plan{}, err
		}
		if req.Filter != nil {
			f = &Filter{Type: "and", Filters: []Filter{*req.Filter, *f}}
		}
		req.Filter, req.ApplyResidual = f, true
	}
	var filter iceberg.BooleanExpression
	if req.Filter != nil {
		now := req.Now
		if now.IsZero() {
			now = time.Now()
		}
		expr, err := req.Filter.Expression(schema, now)
		if err != nil {
			return Plan{}, err
		}
		if _, err := iceberg.BindExpr(schema, expr, true); err != nil {
			return Plan{}, fmt.Errorf("%w: icebergFilter: %w", ErrBadRequest, err)
		}
		filter = expr
		opts = append(opts, table.WithRowFilter(expr))
	}
	var tasks []table.FileScanTask
	if req.FromSnapshot != nil {
		if err := appendsOnly(tbl, req.Table, *req.FromSnapshot, snap); err != nil {
			return Plan{}, err
		}
		tasks, err = tbl.NewIncrementalAppendScan(opts...).
			FromSnapshotExclusive(*req.FromSnapshot).ToSnapshot(snap.SnapshotID).PlanFiles(ctx)
	} else {
		tasks, err = tbl.Scan(opts...).PlanFiles(ctx)
	}
	if err != nil {
		err = redact(storageError(p.conn.cfg.Name, fmt.Sprintf("plan %s at snapshot %d", req.Table, snap.SnapshotID), err),
			p.conn.cfg.secrets())
		// Manifests are read from storage: /readyz follows it too.
		p.conn.observe(err)
		return Plan{}, err
	}

	tasks = wholeFiles(tasks)
	// PlanFiles returns tasks in no promised order; a stable order makes
	// the answer, and the spec pasted from it, the same on every call.
	slices.SortFunc(tasks, func(a, b table.FileScanTask) int {
		if c := strings.Compare(a.File.FilePath(), b.File.FilePath()); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
	if len(tasks) == 0 {
		plan.Warnings = append(plan.Warnings, noFilesWarning)
	}
	if err := checkResiduals(req.ResidualMode, filter, tasks, &plan); err != nil {
		return Plan{}, err
	}
	residualOf := func(t table.FileScanTask) iceberg.BooleanExpression {
		if !req.ApplyResidual || filter == nil {
			return nil
		}
		r := t.Residual
		if r == nil {
			// iceberg-go leaves it nil when the partition decided
			// nothing: the whole filter remains.
			r = filter
		}
		if r.Equals(iceberg.AlwaysTrue{}) {
			return nil
		}
		return r
	}
	if req.ApplyResidual && slices.ContainsFunc(tasks, func(t table.FileScanTask) bool { return residualOf(t) != nil }) {
		if req.Mode == ModeFiles {
			return Plan{}, fmt.Errorf("%w: applyResidual needs the row path, and the filter leaves a residual; not mode=files", ErrBadRequest)
		}
		plan.Path = PathRows
	}
	withDeletes := 0
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			withDeletes++
		}
	}
	switch {
	case req.Mode == ModeFiles && withDeletes > 0:
		return Plan{}, fmt.Errorf("%w: mode=files refused: %d of %d data files of %s have delete files, "+
			"and raw files would ingest the deleted rows; use mode=auto or mode=rows",
			ErrConflict, withDeletes, len(tasks), req.Table)
	case withDeletes > 0:
		plan.Path = PathRows
	}
	mk := newSplitMaker(tbl.Metadata(), tbl.MetadataLocation(), snap.SnapshotID, schema.ID)
	if plan.Path == PathFiles {
		why, err := rawHazard(tbl.Metadata(), schema, tasks, mk)
		switch {
		case err != nil:
			return Plan{}, err
		case why != "" && req.Mode == ModeFiles:
			return Plan{}, fmt.Errorf("%w: mode=files refused: Druid's Parquet reader would not read the data files of %s "+
				"as Iceberg reads them: %s; use mode=auto or mode=rows", ErrConflict, req.Table, why)
		case why != "":
			plan.Path = PathRows
			plan.Warnings = append(plan.Warnings, "served on the row path although no delete file applies, "+
				"because Druid's Parquet reader would not read the raw files as Iceberg reads them: "+why)
		default:
			plan.Warnings = append(plan.Warnings, rawVersionWarnings(schema)...)
		}
	}
	kind := split.KindFile
	if plan.Path == PathRows {
		kind = split.KindRows
	}
	plan.Splits = make([]PlannedSplit, 0, len(tasks))
	// wholeFilter is the JSON of the whole filter, the residual of every
	// task whose partition decided nothing: encoded once, not per split.
	var wholeFilter json.RawMessage
	for _, t := range tasks {
		sp, err := mk.split(t)
		if err != nil {
			return Plan{}, err
		}
		sp.Catalog = p.conn.cfg.Name
		if kind == split.KindRows {
			sp.Columns, sp.Encoding = columns, req.Encoding
			if r := residualOf(t); r != nil {
				switch {
				case t.Residual == nil && wholeFilter != nil:
					sp.Filter = wholeFilter
				case t.Residual == nil:
					// The whole filter, still unbound: bind it so that its
					// literals carry their field's type (an unbound
					// timestamp literal has no JSON form). iceberg-go's
					// residuals come bound.
					if r, err = iceberg.BindExpr(schema, r, true); err != nil {
						return Plan{}, fmt.Errorf("bind residual filter: %w", err)
					}
					fallthrough
				default:
					if sp.Filter, err = json.Marshal(r); err != nil {
						return Plan{}, fmt.Errorf("encode residual filter %s: %w", r, err)
					}
					if t.Residual == nil {
						wholeFilter = sp.Filter
					}
				}
				// The residual rides in every row URI of the file.
				if len(sp.Filter) > MaxResidualBytes {
					return Plan{}, fmt.Errorf("%w: applyResidual: the filter left on %s is %d bytes, more than the %d a row URI "+
						"carries; narrow icebergFilter, or plan without applyResidual", ErrBadRequest, t.File.FilePath(),
						len(sp.Filter), MaxResidualBytes)
				}
			}
		}
		// A large file becomes several splits on the row path, each a
		// range of its row groups, in file order.
		ranges := []*split.RowGroupRange{nil}
		if kind == split.KindRows {
			if ranges, err = p.fileRanges(ctx, t.File); err != nil {
				return Plan{}, err
			}
		}
		for _, r := range ranges {
			part := sp
			part.Data.Range = r
			plan.Splits = append(plan.Splits, PlannedSplit{Split: part, Kind: kind})
		}
	}
	if err := signAll(p.signer, plan.Splits); err != nil {
		return Plan{}, err
	}
	return plan, nil
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

// noFilesWarning explains an empty plan: Druid's http input source refuses
// an empty uris list, so there is nothing to submit.
const noFilesWarning = "no data file to read (empty table, or the filter pruned every file): " +
	"Druid's http inputSource needs at least one URI, so there is nothing to ingest"

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
			return fmt.Errorf("%w: fromSnapshot %d is not an ancestor of snapshot %d of %s", ErrBadRequest, from, to.SnapshotID, name)
		}
		if s = tbl.SnapshotByID(*s.ParentSnapshotID); s == nil {
			return fmt.Errorf("%w: the ancestry of %s is broken above snapshot %d (expired?)", ErrConflict, name, to.SnapshotID)
		}
	}
	return nil
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
		return nil, false, fmt.Errorf("%w: give at most one of snapshotId, snapshotTime and ref", ErrBadRequest)
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
			return nil, false, fmt.Errorf("%w: %s has no branch or tag %s", ErrSnapshotNotFound, req.Table, Quote(req.Ref))
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

// projectColumns resolves column names to field ids in schema order.
func projectColumns(schema *iceberg.Schema, names []string) ([]int, error) {
	if len(names) == 0 {
		return nil, nil
	}
	want := map[int]bool{}
	for _, n := range names {
		f, ok := schema.FindFieldByName(n)
		if !ok || !slices.ContainsFunc(schema.Fields(), func(top iceberg.NestedField) bool { return top.ID == f.ID }) {
			return nil, fmt.Errorf("%w: column %s is not a top-level column of the table", ErrBadRequest, Quote(n))
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
	meta, ok := p.metas.Get(sp.MetadataLocation)
	if !ok {
		fsF := func(context.Context) (icebergio.IO, error) { return p.fsys, nil }
		tbl, err := table.NewFromLocation(ctx, nil, sp.MetadataLocation, fsF, nil)
		if err != nil {
			return nil, redact(storageError(p.conn.cfg.Name, "read metadata "+sp.MetadataLocation, err), p.conn.cfg.secrets())
		}
		meta = tbl.Metadata()
		p.metas.Add(sp.MetadataLocation, meta)
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
