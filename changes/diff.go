// Package changes finds the Druid time intervals whose rows differ between
// two snapshots of an Iceberg table, from metadata first: what /changes and
// sidecar sync re-ingest.
package changes

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/splits"
)

// Planner is what a Differ needs of the planner: the table, a snapshot's
// scan tasks planned by iceberg-go, and the sidecar's scan of them, which
// each changed interval is cut from.
type Planner interface {
	LoadTable(ctx context.Context, name string) (*table.Table, error)
	PlanFiles(ctx context.Context, tbl *table.Table, name string, snapshotID int64) ([]table.FileScanTask, error)
	NewScan(ctx context.Context, tbl *table.Table, req splits.Request, tasks []table.FileScanTask) (*splits.Scan, error)
	Cut(ctx context.Context, sc *splits.Scan, iv *splits.TimeInterval) (splits.Plan, error)
}

// Differ finds changed intervals in the tables of one catalog.
type Differ struct {
	planner Planner
}

// New returns a Differ that plans with planner. It reads delete files,
// when their metadata does not tell where their rows lie, through the
// FileIO of the table the planner loads.
func New(planner Planner) *Differ {
	return &Differ{planner: planner}
}

// Reason says why an interval's content differs between two snapshots.
type Reason string

// The reasons of a change.
const (
	ReasonDataAdded       Reason = "data_added"
	ReasonDataRemoved     Reason = "data_removed"
	ReasonPositionDeletes Reason = "position_deletes" // positional delete files and deletion vectors
	ReasonEqualityDeletes Reason = "equality_deletes"
	ReasonSchemaChanged   Reason = "schema_changed"
	ReasonInitialLoad     Reason = "initial_load"
	ReasonRequested       Reason = "requested"
)

// reasonOrder is the order reasons are listed in.
var reasonOrder = []Reason{ReasonInitialLoad, ReasonSchemaChanged, ReasonDataAdded, ReasonDataRemoved,
	ReasonPositionDeletes, ReasonEqualityDeletes, ReasonRequested}

// Change is one time interval whose rows differ between two snapshots, or,
// with All, the whole time line.
type Change struct {
	// All means every interval: nothing in the metadata bounds the change,
	// so the whole datasource is to be replaced.
	All bool
	// Start and End bound the interval, [Start, End), aligned to the
	// granularity; zero with All.
	Start, End time.Time
	Reasons    []Reason
}

// String is the interval in Druid's ISO 8601 form, or ALL.
func (c Change) String() string {
	if c.All {
		return "ALL"
	}
	const layout = "2006-01-02T15:04:05.000Z"
	return c.Start.UTC().Format(layout) + "/" + c.End.UTC().Format(layout)
}

// ParseChangeInterval parses what Change.String writes: ALL, or an ISO 8601
// START/END interval.
func ParseChangeInterval(s string) (Change, error) {
	if strings.EqualFold(s, "ALL") {
		return Change{All: true}, nil
	}
	start, end, err := druid.ParseInterval(s)
	if err != nil {
		return Change{}, fmt.Errorf("%w: %w", fault.ErrBadRequest, err)
	}
	return Change{Start: start.UTC(), End: end.UTC()}, nil
}

// Request asks which time intervals of a table differ between two
// snapshots.
type Request struct {
	Table string
	// FromSnapshot is the snapshot already applied; nil means none: every
	// row is new (an initial load, which is the change ALL).
	FromSnapshot *int64
	// ToSnapshot is the snapshot to apply; nil means the current one.
	ToSnapshot *int64
	// TimeColumn is the top-level column Druid's __time comes from: a
	// timestamp (micro- or nanoseconds, with or without zone), a date, or a
	// long of epoch milliseconds.
	TimeColumn string
	// ConstantTime, when not zero, stands for TimeColumn, for a table
	// without a time column: every row's Druid time is this instant, so
	// every row lies in the one granularity bucket that holds it, and a
	// change is that bucket or nothing.
	ConstantTime time.Time
	Granularity  druid.Granularity
	// Include are intervals to report as changed whatever the snapshots
	// say, such as those of a sync run that did not finish.
	Include []Change
	// Rows are the options the rows of every change are planned with
	// (Result.Plan): the mode, columns, encoding and packing. Their table
	// and snapshot are the request's table and target snapshot, their
	// interval the change's.
	Rows splits.Request
}

// Result is the answer to a Request.
type Result struct {
	Table        string
	FromSnapshot *int64
	// ToSnapshot is the target snapshot; nil for a table without one.
	ToSnapshot *int64
	// TimeField is the time column; the zero field with ConstantTime.
	TimeField    iceberg.NestedField
	ConstantTime time.Time
	Granularity  druid.Granularity
	// Changes are sorted, disjoint and not adjacent; an All change is
	// alone.
	Changes  []Change
	Warnings []string

	// target is the target snapshot, scanned once for every change.
	target *target
}

// target is the target snapshot of a Result, scanned once: each change is
// planned from it.
type target struct {
	planner Planner
	// tbl is the table as loaded, tasks the data files of its target
	// snapshot as PlanFiles planned them for the diff (nil when the diff
	// did not need them), so that the snapshot is not planned again.
	tbl   *table.Table
	tasks []table.FileScanTask
	rows  splits.Request
	scan  *splits.Scan
}

// Plan plans the rows of change c at the target snapshot, cut from its one
// scan: those whose time lies in c's interval (the interval holds row by
// row), or all of them for an ALL change or a constant time (every row
// lies in the change's bucket); without a target snapshot the
// plan is empty. maxSplits, when positive, bounds the plan's splits
// (splits.Request.MaxSplits): the target is then scanned again with the
// bound, from the files the diff planned.
func (r Result) Plan(ctx context.Context, c Change, maxSplits int) (splits.Plan, error) {
	t := r.target
	sc := t.scan
	if maxSplits > 0 {
		rows := t.rows
		rows.MaxSplits = maxSplits
		var err error
		if sc, err = t.planner.NewScan(ctx, t.tbl, rows, t.tasks); err != nil {
			return splits.Plan{}, err
		}
	}
	var iv *splits.TimeInterval
	if !c.All && r.ConstantTime.IsZero() {
		iv = &splits.TimeInterval{Column: r.TimeField.Name, Start: c.Start, End: c.End}
	}
	return t.planner.Cut(ctx, sc, iv)
}

// Changes finds the time intervals whose rows differ between two snapshots,
// from metadata first.
//
// Both snapshots are planned with iceberg-go (PlanFiles, whose
// sequence-number rules decide which delete files apply to which data
// file), and compared data file by data file. A data file's rows at a
// snapshot are its rows minus what the delete files attached to it delete,
// so its rows differ only when it was added or removed, or when the set of
// delete files attached to it changed. The rows that may differ lie within:
//
//   - an added or removed data file: the file's time range;
//   - a positional delete file or deletion vector attached to one snapshot
//     only: the time range of the data file it is attached to, if it names
//     that file (its file_path column is read when its bounds do not say);
//   - an equality delete file attached to one snapshot only: if the time
//     column is one of its keys, the times it holds (its bounds, or its
//     rows when the bounds span more than one bucket), within the data
//     file's range; otherwise the data file's range, unless none of its keys
//     (read from the file) falls within the data file's column bounds.
//
// A data file's time range is the intersection of what its partition says
// (identity, hour, day, month and year of the time column) and of its
// lower and upper bounds for the column. A file whose time values are all
// null holds nothing Druid ingests. A file whose range is known neither way
// (written without column metrics, and not partitioned by time) may hold
// any time: the change is then ALL, never a guess. So is a change of schema
// between the snapshots (every row may read differently) and a time range
// outside the years 1 to 9999.
//
// With req.ConstantTime (a table without a time column) every row lies in
// the bucket of that instant: whatever would change some interval, or ALL
// (an initial load, a change of schema, a removed snapshot), changes that
// bucket, and the bucket's plan reads the whole table. The files are
// compared as above, so a snapshot whose files differ not (or a replace
// snapshot, skipped as above) is no change.
//
// It then scans the target snapshot with req.Rows, once, for Result.Plan.
func (df *Differ) Changes(ctx context.Context, req Request) (Result, error) {
	out, t, err := df.changes(ctx, req)
	if err != nil {
		return Result{}, err
	}
	t.planner, t.rows = df.planner, req.Rows
	t.rows.Table, t.rows.SnapshotID = req.Table, out.ToSnapshot
	if t.scan, err = df.planner.NewScan(ctx, t.tbl, t.rows, t.tasks); err != nil {
		return Result{}, err
	}
	out.target = t
	return out, nil
}

// changes is Changes but the target's scan: the changes, and the target
// as the diff loaded and planned it.
func (df *Differ) changes(ctx context.Context, req Request) (Result, *target, error) {
	gran := req.Granularity
	if gran == "" {
		gran = druid.GranularityDay
	}
	tbl, err := df.planner.LoadTable(ctx, req.Table)
	if err != nil {
		return Result{}, nil, err
	}
	to := tbl.CurrentSnapshot()
	if req.ToSnapshot != nil {
		if to = tbl.SnapshotByID(*req.ToSnapshot); to == nil {
			return Result{}, nil, fmt.Errorf("%w: %s has no snapshot %d (toSnapshot)", splits.ErrSnapshotNotFound, req.Table, *req.ToSnapshot)
		}
	}
	at := req.ConstantTime.UTC()
	var field iceberg.NestedField
	if at.IsZero() {
		if field, err = TimeField(snapshotSchema(tbl, to), req.TimeColumn); err != nil {
			return Result{}, nil, err
		}
	} else if err := checkConstant(req); err != nil {
		return Result{}, nil, err
	}
	out := Result{Table: req.Table, FromSnapshot: req.FromSnapshot, TimeField: field, Granularity: gran}
	if !at.IsZero() {
		out.ConstantTime = at
	}
	t := &target{tbl: tbl}
	if to != nil {
		id := to.SnapshotID
		out.ToSnapshot = &id
	}
	c := &collector{gran: gran, at: out.ConstantTime}
	for _, in := range req.Include {
		switch {
		case !at.IsZero() && !in.All && !c.holdsConstant(in):
			c.warn(fmt.Sprintf("include %s holds no row: every row's time is constantTime %s; it is left alone",
				in, at.Format(time.RFC3339Nano)))
		case in.All:
			c.everything(ReasonRequested, "")
		case in.End.After(in.Start):
			c.addTime(in.Start, in.End.Add(-time.Millisecond), ReasonRequested)
		}
	}
	if req.FromSnapshot == nil {
		c.everything(ReasonInitialLoad, "")
		return c.finish(out), t, nil
	}
	from := tbl.SnapshotByID(*req.FromSnapshot)
	if from == nil {
		return Result{}, nil, fmt.Errorf("%w: %s has no snapshot %d (fromSnapshot; expired?): re-ingest the whole table",
			splits.ErrSnapshotNotFound, req.Table, *req.FromSnapshot)
	}
	switch {
	case to == nil:
		// The table had rows and now has no snapshot at all.
		c.everything(ReasonDataRemoved, "")
		return c.finish(out), t, nil
	case from.SnapshotID == to.SnapshotID:
		return c.finish(out), t, nil
	case schemaID(from) != schemaID(to):
		c.everything(ReasonSchemaChanged, fmt.Sprintf("the schema changed between snapshots %d and %d: every row may read differently",
			from.SnapshotID, to.SnapshotID))
		return c.finish(out), t, nil
	}
	var col splits.TimeColumn
	if at.IsZero() {
		if col, err = splits.NewTimeColumn(tbl.Metadata(), field); err != nil {
			return Result{}, nil, err
		}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return Result{}, nil, fmt.Errorf("read the files of %s: %w", req.Table, err)
	}
	d := &fileDiff{meta: tbl.Metadata(), field: field, col: col, constant: !at.IsZero(), c: c, deletes: newDeleteReader(fsys, tbl.Metadata())}
	for _, r := range rewritesAside(tbl, from, to) {
		tasks, err := df.diff(ctx, tbl, req.Table, d, r.from, r.to)
		if err != nil {
			return Result{}, nil, err
		}
		if r.to == to.SnapshotID {
			t.tasks = tasks
		}
	}
	return c.finish(out), t, nil
}

// span is a run of snapshots to diff: the one before it and its last.
type span struct{ from, to int64 }

// maxSpans bounds the diffs of one request: past it the snapshots are
// diffed end to end, which is right too, and plans two snapshots only.
const maxSpans = 8

// rewritesAside is what to diff to go from one snapshot to another while
// skipping the snapshots that rewrote files without changing the table's
// rows: a replace snapshot, which by Iceberg's spec "data and delete
// files were added and removed without changing table data"
// (rewrite_data_files, rewrite_position_delete_files: compaction). Its
// files differ, its rows do not, and a diff across it would re-ingest
// every interval it compacted. So the runs of other snapshots between them
// are diffed each on its own, from the snapshot before the run (iceberg-go
// 's incremental changelog scan skips replace snapshots alike). When from
// is not an ancestor of to (a rollback, another branch), a schema changed
// on the way, no replace snapshot lies between them, or the runs are
// many, the diff is from to to.
func rewritesAside(tbl *table.Table, from, to *table.Snapshot) []span {
	whole := []span{{from.SnapshotID, to.SnapshotID}}
	var chain []*table.Snapshot
	for s := to; s.SnapshotID != from.SnapshotID; {
		if s.ParentSnapshotID == nil || schemaID(s) != schemaID(from) {
			return whole
		}
		chain = append(chain, s)
		if s = tbl.SnapshotByID(*s.ParentSnapshotID); s == nil {
			return whole
		}
	}
	slices.Reverse(chain)
	var out []span
	base := from.SnapshotID
	for i, s := range chain {
		if s.Summary != nil && s.Summary.Operation == table.OpReplace {
			base = s.SnapshotID
			continue
		}
		if i+1 == len(chain) || chain[i+1].Summary != nil && chain[i+1].Summary.Operation == table.OpReplace {
			out = append(out, span{base, s.SnapshotID})
		}
	}
	if len(out) > maxSpans || len(out) == 1 && out[0] == whole[0] {
		return whole
	}
	return out
}

// diff records what differs between two snapshots, data file by data
// file, and returns the target's tasks as planned.
func (df *Differ) diff(ctx context.Context, tbl *table.Table, name string, d *fileDiff, fromID, toID int64) ([]table.FileScanTask, error) {
	before, _, err := df.plannedFiles(ctx, tbl, name, fromID)
	if err != nil {
		return nil, err
	}
	after, tasks, err := df.plannedFiles(ctx, tbl, name, toID)
	if err != nil {
		return nil, err
	}
	for _, path := range sortedKeys(after) {
		a := after[path]
		b, ok := before[path]
		if !ok {
			d.dataFile(a.file, ReasonDataAdded)
			continue
		}
		for _, k := range sortedKeys(a.deletes) {
			if _, ok := b.deletes[k]; !ok {
				d.deleteFile(a.file, a.deletes[k])
			}
		}
		for _, k := range sortedKeys(b.deletes) {
			if _, ok := a.deletes[k]; !ok {
				d.deleteFile(b.file, b.deletes[k])
			}
		}
	}
	for _, path := range sortedKeys(before) {
		if _, ok := after[path]; !ok {
			d.dataFile(before[path].file, ReasonDataRemoved)
		}
	}
	if d.deletes.err != nil {
		return nil, d.deletes.err
	}
	return tasks, nil
}

// TimeField finds the top-level column Druid's __time comes from and checks
// its type: a timestamp, a date or a long (epoch milliseconds).
func TimeField(schema *iceberg.Schema, name string) (iceberg.NestedField, error) {
	if name == "" {
		return iceberg.NestedField{}, fmt.Errorf("%w: timeColumn is required", fault.ErrBadRequest)
	}
	i := slices.IndexFunc(schema.Fields(), func(f iceberg.NestedField) bool { return f.Name == name })
	if i < 0 {
		return iceberg.NestedField{}, fmt.Errorf("%w: timeColumn %s is not a top-level column of the table", fault.ErrBadRequest, fault.Quote(name))
	}
	f := schema.Fields()[i]
	if !splits.IsTimeType(f.Type) {
		return f, fmt.Errorf("%w: timeColumn %q is %s; want a timestamp, date or long (epoch millis) column",
			fault.ErrBadRequest, name, f.Type)
	}
	return f, nil
}

// checkConstant refuses a constant time with a time column, or outside
// the years 1 to 9999 (the bucket must have a name in Druid SQL).
func checkConstant(req Request) error {
	if req.TimeColumn != "" {
		return fmt.Errorf("%w: timeColumn and constantTime exclude each other: give one", fault.ErrBadRequest)
	}
	at := req.ConstantTime.UTC()
	if y := at.Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%w: constantTime %s: want a time in the years 1 to 9999", fault.ErrBadRequest, at.Format(time.RFC3339))
	}
	return nil
}

// snapshotSchema is the schema a snapshot was written with, or the table's.
func snapshotSchema(tbl *table.Table, s *table.Snapshot) *iceberg.Schema {
	if s != nil && s.SchemaID != nil {
		if sc, ok := tbl.Schemas()[*s.SchemaID]; ok {
			return sc
		}
	}
	return tbl.Schema()
}

func schemaID(s *table.Snapshot) int {
	if s.SchemaID == nil {
		return -1
	}
	return *s.SchemaID
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// plannedFile is one data file of a snapshot with the delete files that
// apply to it, by deleteKey.
type plannedFile struct {
	file    iceberg.DataFile
	deletes map[string]iceberg.DataFile
}

// deleteKey tells delete files apart: deletion vectors of one puffin file
// share its path.
func deleteKey(f iceberg.DataFile) string {
	if off := f.ContentOffset(); off != nil {
		return fmt.Sprintf("%s#%d", f.FilePath(), *off)
	}
	return f.FilePath()
}

// plannedFiles plans a snapshot with iceberg-go and returns its data files
// by path, and the tasks as planned.
func (df *Differ) plannedFiles(ctx context.Context, tbl *table.Table, name string, snapshotID int64) (map[string]plannedFile, []table.FileScanTask, error) {
	tasks, err := df.planner.PlanFiles(ctx, tbl, name, snapshotID)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]plannedFile{}
	for _, t := range tasks {
		pf, ok := out[t.File.FilePath()]
		if !ok {
			pf = plannedFile{file: t.File, deletes: map[string]iceberg.DataFile{}}
			out[t.File.FilePath()] = pf
		}
		for _, list := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
			for _, d := range list {
				pf.deletes[deleteKey(d)] = d
			}
		}
	}
	return out, tasks, nil
}

// collector gathers changed time ranges as aligned intervals.
type collector struct {
	gran druid.Granularity
	// at, when not zero, is every row's time: any change is its bucket.
	at       time.Time
	all      []Reason
	changes  []Change
	warnings []string
}

// warn records a warning once.
func (c *collector) warn(warning string) {
	if warning != "" && !slices.Contains(c.warnings, warning) {
		c.warnings = append(c.warnings, warning)
	}
}

// everything records a change that no interval bounds: with a constant
// time, its bucket, which holds every row.
func (c *collector) everything(r Reason, warning string) {
	c.warn(warning)
	if !c.at.IsZero() && c.gran != druid.GranularityAll {
		start := c.gran.Floor(c.at)
		c.changes = append(c.changes, Change{Start: start, End: c.gran.Next(start), Reasons: []Reason{r}})
		return
	}
	c.all = append(c.all, r)
}

// holdsConstant says whether change ch's interval holds the constant time.
func (c *collector) holdsConstant(ch Change) bool {
	return !c.at.Before(ch.Start) && c.at.Before(ch.End)
}

// addTime records that rows with times in [lo, hi] (inclusive) changed;
// with a constant time, that the rows at it did, whatever lo and hi.
func (c *collector) addTime(lo, hi time.Time, r Reason) {
	if !c.at.IsZero() {
		c.everything(r, "")
		return
	}
	if c.gran == druid.GranularityAll {
		c.everything(r, "")
		return
	}
	start := c.gran.Floor(lo)
	end := c.gran.Next(c.gran.Floor(hi))
	if start.Year() < 1 || end.Year() > 9999 {
		c.everything(r, "a change lies outside the years 1 to 9999, which Druid SQL's TIMESTAMP cannot name: every interval is re-ingested")
		return
	}
	c.changes = append(c.changes, Change{Start: start, End: end, Reasons: []Reason{r}})
}

// addMillis records a change of the rows with Druid times in [lo, hi] ms.
func (c *collector) addMillis(lo, hi int64, r Reason) {
	c.addTime(time.UnixMilli(lo).UTC(), time.UnixMilli(hi).UTC(), r)
}

// finish merges the intervals: sorted, overlapping and adjacent ones joined
// with their reasons, or one ALL change holding every reason.
func (c *collector) finish(out Result) Result {
	out.Warnings = c.warnings
	if len(c.all) > 0 {
		reasons := slices.Clone(c.all)
		for _, ch := range c.changes {
			reasons = append(reasons, ch.Reasons...)
		}
		out.Changes = []Change{{All: true, Reasons: sortReasons(reasons)}}
		return out
	}
	slices.SortFunc(c.changes, func(a, b Change) int {
		return cmp.Or(a.Start.Compare(b.Start), a.End.Compare(b.End))
	})
	var merged []Change
	for _, ch := range c.changes {
		if n := len(merged); n > 0 && !ch.Start.After(merged[n-1].End) {
			last := &merged[n-1]
			if ch.End.After(last.End) {
				last.End = ch.End
			}
			last.Reasons = append(last.Reasons, ch.Reasons...)
			continue
		}
		merged = append(merged, ch)
	}
	for i := range merged {
		merged[i].Reasons = sortReasons(merged[i].Reasons)
	}
	out.Changes = merged
	return out
}

func sortReasons(rs []Reason) []Reason {
	slices.SortFunc(rs, func(a, b Reason) int {
		return cmp.Compare(slices.Index(reasonOrder, a), slices.Index(reasonOrder, b))
	})
	return slices.Compact(rs)
}

// fileDiff turns changed data and delete files into changed time ranges.
type fileDiff struct {
	meta  table.Metadata
	field iceberg.NestedField
	col   splits.TimeColumn
	// constant says there is no time column: a changed file changes the
	// constant time's bucket, whatever its rows.
	constant bool
	c        *collector
	deletes  *deleteReader
}

// addSpan records a changed span of the time column's values.
func (d *fileDiff) addSpan(s splits.Span, r Reason) {
	lo, ok1 := d.col.Millis(s.Lo)
	hi, ok2 := d.col.Millis(s.Hi)
	if !ok1 || !ok2 {
		d.c.everything(r, fmt.Sprintf("a %s value is out of range of epoch milliseconds: every interval is re-ingested", d.field.Name))
		return
	}
	d.c.addMillis(lo, hi, r)
}

// dataFile records an added or removed data file.
func (d *fileDiff) dataFile(f iceberg.DataFile, r Reason) {
	if d.constant {
		d.c.everything(r, "")
		return
	}
	s, ext := d.col.FileTimes(f)
	switch ext {
	case splits.ExtentKnown:
		d.addSpan(s, r)
	case splits.ExtentUnknown:
		d.unknown(f, r)
	}
}

func (d *fileDiff) unknown(f iceberg.DataFile, r Reason) {
	d.c.everything(r, fmt.Sprintf("data file %s has no bounds for %s and is not partitioned by it: it may hold any time, "+
		"so every interval is re-ingested", f.FilePath(), d.field.Name))
}

// deleteFile records a delete file that applies to data file f at one of
// the two snapshots only.
func (d *fileDiff) deleteFile(f, del iceberg.DataFile) {
	switch del.ContentType() {
	case iceberg.EntryContentEqDeletes:
		d.equalityDeletes(f, del)
	default:
		if !table.IsDeletionVector(del) && !d.deletes.namesFile(del, f.FilePath()) {
			// Attached by its file_path bounds, but names no row of f.
			return
		}
		d.dataFile(f, ReasonPositionDeletes)
	}
}

// equalityDeletes records an equality delete file that applies to f.
func (d *fileDiff) equalityDeletes(f, del iceberg.DataFile) {
	const r = ReasonEqualityDeletes
	fid := d.field.ID
	if d.constant || !slices.Contains(del.EqualityFieldIDs(), fid) {
		// The deleted rows may lie anywhere in f, unless no key can
		// match f at all.
		if d.deletes.mayMatch(del, f) {
			d.dataFile(f, r)
		}
		return
	}
	// The time column is a key: a deleted row's time is one of the
	// delete file's times.
	fs, fext := d.col.FileTimes(f)
	if fext == splits.ExtentNone {
		return
	}
	times, dext := d.deleteTimes(del)
	switch dext {
	case splits.ExtentNone:
		return // only null times: rows Druid never had
	case splits.ExtentUnknown:
		d.dataFile(f, r)
		return
	}
	for _, t := range times {
		if fext == splits.ExtentKnown {
			var ok bool
			if t, ok = t.Intersect(fs); !ok {
				continue
			}
		}
		d.addSpan(t, r)
	}
}

// deleteTimes are the spans of the time values an equality delete file
// holds: its bounds when they fall into one bucket, else its values.
func (d *fileDiff) deleteTimes(del iceberg.DataFile) ([]splits.Span, splits.Extent) {
	fid := d.field.ID
	s, ok := d.col.Bounds(del, fid)
	if !ok && splits.AllNull(del, fid) {
		return nil, splits.ExtentNone
	}
	if ok && d.oneBucket(s) {
		return []splits.Span{s}, splits.ExtentKnown
	}
	values, err := d.deletes.int64Column(del, fid)
	if err != nil {
		if ok {
			return []splits.Span{s}, splits.ExtentKnown
		}
		return nil, splits.ExtentUnknown
	}
	var out []splits.Span
	for _, v := range values {
		if v != nil {
			out = append(out, splits.Span{Lo: *v, Hi: *v})
		}
	}
	if len(out) == 0 {
		return nil, splits.ExtentNone
	}
	return out, splits.ExtentKnown
}

// oneBucket says whether a span's times fall into one granularity bucket.
func (d *fileDiff) oneBucket(s splits.Span) bool {
	lo, ok1 := d.col.Millis(s.Lo)
	hi, ok2 := d.col.Millis(s.Hi)
	if !ok1 || !ok2 {
		return false
	}
	g := d.c.gran
	return g == druid.GranularityAll || g.Floor(time.UnixMilli(lo)).Equal(g.Floor(time.UnixMilli(hi)))
}
