// Package changes finds the Druid time intervals whose rows differ between
// two snapshots of an Iceberg table, from metadata first: what /changes and
// sidecar sync re-ingest.
package changes

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
)

// Planner is what a Differ needs of the planner: the table, and a
// snapshot's scan tasks planned by iceberg-go.
type Planner interface {
	LoadTable(ctx context.Context, name string) (*table.Table, error)
	PlanFiles(ctx context.Context, tbl *table.Table, name string, snapshotID int64) ([]table.FileScanTask, error)
}

// Differ finds changed intervals in the tables of one catalog.
type Differ struct {
	planner Planner
	// fsys reads delete files when their metadata does not tell where
	// their rows lie.
	fsys icebergio.IO
}

// New returns a Differ that plans with planner and reads files with fsys.
func New(planner Planner, fsys icebergio.IO) *Differ {
	return &Differ{planner: planner, fsys: fsys}
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

// Change is one time interval whose rows fileDiff between two snapshots, or,
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
	start, end, err := splits.ParseInterval(s)
	if err != nil {
		return Change{}, fmt.Errorf("%w: %w", splits.ErrBadRequest, err)
	}
	return Change{Start: start.UTC(), End: end.UTC()}, nil
}

// Request asks which time intervals of a table fileDiff between two
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
	TimeColumn  string
	Granularity druid.Granularity
	// Include are intervals to report as changed whatever the snapshots
	// say, such as those of a sync run that did not finish.
	Include []Change
}

// Result is the answer to a Request.
type Result struct {
	Table        string
	FromSnapshot *int64
	// ToSnapshot is the target snapshot; nil for a table without one.
	ToSnapshot  *int64
	TimeField   iceberg.NestedField
	Granularity druid.Granularity
	// Changes are sorted, disjoint and not adjacent; an All change is
	// alone.
	Changes  []Change
	Warnings []string
}

// Changes finds the time intervals whose rows fileDiff between two snapshots,
// from metadata first.
//
// Both snapshots are planned with iceberg-go (PlanFiles, whose
// sequence-number rules decide which delete files apply to which data
// file), and compared data file by data file. A data file's rows at a
// snapshot are its rows minus what the delete files attached to it delete,
// so its rows fileDiff only when it was added or removed, or when the set of
// delete files attached to it changed. The rows that may fileDiff lie within:
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
func (df *Differ) Changes(ctx context.Context, req Request) (Result, error) {
	gran := req.Granularity
	if gran == "" {
		gran = druid.GranularityDay
	}
	tbl, err := df.planner.LoadTable(ctx, req.Table)
	if err != nil {
		return Result{}, err
	}
	to := tbl.CurrentSnapshot()
	if req.ToSnapshot != nil {
		if to = tbl.SnapshotByID(*req.ToSnapshot); to == nil {
			return Result{}, fmt.Errorf("%w: %s has no snapshot %d (toSnapshot)", splits.ErrSnapshotNotFound, req.Table, *req.ToSnapshot)
		}
	}
	field, err := TimeField(snapshotSchema(tbl, to), req.TimeColumn)
	if err != nil {
		return Result{}, err
	}
	out := Result{Table: req.Table, FromSnapshot: req.FromSnapshot, TimeField: field, Granularity: gran}
	if to != nil {
		id := to.SnapshotID
		out.ToSnapshot = &id
	}
	c := &collector{gran: gran}
	for _, in := range req.Include {
		switch {
		case in.All:
			c.everything(ReasonRequested, "")
		case in.End.After(in.Start):
			c.addTime(in.Start, in.End.Add(-time.Millisecond), ReasonRequested)
		}
	}
	if req.FromSnapshot == nil {
		c.everything(ReasonInitialLoad, "")
		return c.finish(out), nil
	}
	from := tbl.SnapshotByID(*req.FromSnapshot)
	if from == nil {
		return Result{}, fmt.Errorf("%w: %s has no snapshot %d (fromSnapshot; expired?): re-ingest the whole table",
			splits.ErrSnapshotNotFound, req.Table, *req.FromSnapshot)
	}
	switch {
	case to == nil:
		// The table had rows and now has no snapshot at all.
		c.everything(ReasonDataRemoved, "")
		return c.finish(out), nil
	case from.SnapshotID == to.SnapshotID:
		return c.finish(out), nil
	case schemaID(from) != schemaID(to):
		c.everything(ReasonSchemaChanged, fmt.Sprintf("the schema changed between snapshots %d and %d: every row may read differently",
			from.SnapshotID, to.SnapshotID))
		return c.finish(out), nil
	}
	before, err := df.plannedFiles(ctx, tbl, req.Table, from.SnapshotID)
	if err != nil {
		return Result{}, err
	}
	after, err := df.plannedFiles(ctx, tbl, req.Table, to.SnapshotID)
	if err != nil {
		return Result{}, err
	}
	d := &fileDiff{meta: tbl.Metadata(), field: field, c: c, deletes: newDeleteReader(df.fsys)}
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
	return c.finish(out), nil
}

// TimeField finds the top-level column Druid's __time comes from and checks
// its type: a timestamp, a date or a long (epoch milliseconds).
func TimeField(schema *iceberg.Schema, name string) (iceberg.NestedField, error) {
	if name == "" {
		return iceberg.NestedField{}, fmt.Errorf("%w: timeColumn is required", splits.ErrBadRequest)
	}
	i := slices.IndexFunc(schema.Fields(), func(f iceberg.NestedField) bool { return f.Name == name })
	if i < 0 {
		return iceberg.NestedField{}, fmt.Errorf("%w: timeColumn %s is not a top-level column of the table", splits.ErrBadRequest, splits.Quote(name))
	}
	f := schema.Fields()[i]
	if _, ok := timeUnit(f.Type); !ok {
		return f, fmt.Errorf("%w: timeColumn %q is %s; want a timestamp, date or long (epoch millis) column",
			splits.ErrBadRequest, name, f.Type)
	}
	return f, nil
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
// by path.
func (df *Differ) plannedFiles(ctx context.Context, tbl *table.Table, name string, snapshotID int64) (map[string]plannedFile, error) {
	tasks, err := df.planner.PlanFiles(ctx, tbl, name, snapshotID)
	if err != nil {
		return nil, err
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
	return out, nil
}

// unit is how a time column's values become Druid milliseconds.
type unit int

const (
	unitMicros unit = iota
	unitNanos
	unitDays
	unitMillis
)

func timeUnit(t iceberg.Type) (unit, bool) {
	switch t.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return unitMicros, true
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return unitNanos, true
	case iceberg.DateType:
		return unitDays, true
	case iceberg.Int64Type:
		return unitMillis, true
	}
	return 0, false
}

// millis converts a value of the column's unit to what the sidecar serves
// Druid: epoch milliseconds, truncated toward zero (so 1 µs before the epoch
// is 0 ms, on 1970-01-01). Truncation is monotonic, so a range of values
// maps to the range of their milliseconds. ok is false when the result
// overflows.
func (u unit) millis(v int64) (ms int64, ok bool) {
	switch u {
	case unitMicros:
		return v / 1000, true
	case unitNanos:
		return v / 1_000_000, true
	case unitDays:
		const perDay = 86_400_000
		if v > (1<<63-1)/perDay || v < -(1<<63-1)/perDay {
			return 0, false
		}
		return v * perDay, true
	}
	return v, true
}

// span is an inclusive range of a time column's values, in its unit.
type span struct{ lo, hi int64 }

func (s span) intersect(o span) (span, bool) {
	r := span{max(s.lo, o.lo), min(s.hi, o.hi)}
	return r, r.lo <= r.hi
}

// extent is what is known of the times a data file holds.
type extent int

const (
	extentKnown   extent = iota // within a span
	extentNone                  // no non-null time: nothing for Druid
	extentUnknown               // anything
)

// collector gathers changed time ranges as aligned intervals.
type collector struct {
	gran     druid.Granularity
	all      []Reason
	changes  []Change
	warnings []string
}

// everything records a change that no interval bounds.
func (c *collector) everything(r Reason, warning string) {
	c.all = append(c.all, r)
	if warning != "" && !slices.Contains(c.warnings, warning) {
		c.warnings = append(c.warnings, warning)
	}
}

// addTime records that rows with times in [lo, hi] (inclusive) changed.
func (c *collector) addTime(lo, hi time.Time, r Reason) {
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
	meta    table.Metadata
	field   iceberg.NestedField
	c       *collector
	deletes *deleteReader
}

// unit is the time column's unit; TimeField checked it has one.
func (d *fileDiff) unit() unit {
	u, _ := timeUnit(d.field.Type)
	return u
}

// addSpan records a changed span of the time column's values.
func (d *fileDiff) addSpan(s span, r Reason) {
	lo, ok1 := d.unit().millis(s.lo)
	hi, ok2 := d.unit().millis(s.hi)
	if !ok1 || !ok2 {
		d.c.everything(r, fmt.Sprintf("a %s value is out of range of epoch milliseconds: every interval is re-ingested", d.field.Name))
		return
	}
	d.c.addMillis(lo, hi, r)
}

// dataFile records an added or removed data file.
func (d *fileDiff) dataFile(f iceberg.DataFile, r Reason) {
	s, ext := d.fileSpan(f)
	switch ext {
	case extentKnown:
		d.addSpan(s, r)
	case extentUnknown:
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
	if !slices.Contains(del.EqualityFieldIDs(), fid) {
		// The deleted rows may lie anywhere in f, unless no key can
		// match f at all.
		if d.deletes.mayMatch(del, f, d.meta.CurrentSchema()) {
			d.dataFile(f, r)
		}
		return
	}
	// The time column is a key: a deleted row's time is one of the
	// delete file's times.
	fs, fext := d.fileSpan(f)
	if fext == extentNone {
		return
	}
	times, dext := d.deleteTimes(del)
	switch dext {
	case extentNone:
		return // only null times: rows Druid never had
	case extentUnknown:
		d.dataFile(f, r)
		return
	}
	for _, t := range times {
		if fext == extentKnown {
			var ok bool
			if t, ok = t.intersect(fs); !ok {
				continue
			}
		}
		d.addSpan(t, r)
	}
}

// deleteTimes are the spans of the time values an equality delete file
// holds: its bounds when they fall into one bucket, else its values.
func (d *fileDiff) deleteTimes(del iceberg.DataFile) ([]span, extent) {
	fid := d.field.ID
	s, ok := d.bounds(del, fid)
	if !ok && allNull(del, fid) {
		return nil, extentNone
	}
	if ok && d.oneBucket(s) {
		return []span{s}, extentKnown
	}
	values, err := d.deletes.int64Column(del, fid, d.field.Name)
	if err != nil {
		if ok {
			return []span{s}, extentKnown
		}
		return nil, extentUnknown
	}
	var out []span
	for _, v := range values {
		if v != nil {
			out = append(out, span{*v, *v})
		}
	}
	if len(out) == 0 {
		return nil, extentNone
	}
	return out, extentKnown
}

// oneBucket says whether a span's times fall into one granularity bucket.
func (d *fileDiff) oneBucket(s span) bool {
	lo, ok1 := d.unit().millis(s.lo)
	hi, ok2 := d.unit().millis(s.hi)
	if !ok1 || !ok2 {
		return false
	}
	g := d.c.gran
	return g == druid.GranularityAll || g.Floor(time.UnixMilli(lo)).Equal(g.Floor(time.UnixMilli(hi)))
}

// fileSpan is what a data file's partition and column metrics say of its
// time values.
func (d *fileDiff) fileSpan(f iceberg.DataFile) (span, extent) {
	fid := d.field.ID
	if f.Count() == 0 || allNull(f, fid) {
		return span{}, extentNone
	}
	s, known := d.bounds(f, fid)
	if ps, ext := d.partitionSpan(f); ext == extentNone {
		return span{}, extentNone
	} else if ext == extentKnown {
		if !known {
			return ps, extentKnown
		}
		both, ok := s.intersect(ps)
		if !ok {
			// Bounds and partition disagree: believe neither alone.
			return span{min(s.lo, ps.lo), max(s.hi, ps.hi)}, extentKnown
		}
		return both, extentKnown
	}
	if !known {
		return span{}, extentUnknown
	}
	return s, extentKnown
}

// allNull says whether the metrics show every value of a column to be null.
func allNull(f iceberg.DataFile, fid int) bool {
	nulls, ok := f.NullValueCounts()[fid]
	if !ok {
		return false
	}
	if nulls == f.Count() {
		return true
	}
	values, ok := f.ValueCounts()[fid]
	return ok && values == nulls
}

// bounds decodes a file's lower and upper bounds of a time column.
func (d *fileDiff) bounds(f iceberg.DataFile, fid int) (span, bool) {
	lo, ok1 := f.LowerBoundValues()[fid]
	hi, ok2 := f.UpperBoundValues()[fid]
	if !ok1 || !ok2 {
		return span{}, false
	}
	a, ok1 := decodeTime(d.unit(), lo)
	b, ok2 := decodeTime(d.unit(), hi)
	if !ok1 || !ok2 || a > b {
		return span{}, false
	}
	return span{a, b}, true
}

// decodeTime decodes an Iceberg single-value binary of a time column: a
// long (8 bytes, little endian) for timestamps and longs, an int (4 bytes)
// for dates and for longs promoted from int.
func decodeTime(u unit, b []byte) (int64, bool) {
	switch {
	case len(b) == 8 && u != unitDays:
		return int64(binary.LittleEndian.Uint64(b)), true
	case len(b) == 4 && (u == unitDays || u == unitMillis):
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	}
	return 0, false
}

// partitionSpan is what the partition of a data file says of its time
// values: the identity, hour, day, month or year transform of the time
// column pins them to a range (a null partition value to null times).
func (d *fileDiff) partitionSpan(f iceberg.DataFile) (span, extent) {
	spec := d.meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return span{}, extentUnknown
	}
	out, ext := span{}, extentUnknown
	for _, pf := range spec.Fields() {
		if pf.SourceID() != d.field.ID {
			continue
		}
		raw, present := f.Partition()[pf.FieldID]
		if !present {
			continue
		}
		if raw == nil {
			switch pf.Transform.(type) {
			case iceberg.IdentityTransform, iceberg.HourTransform, iceberg.DayTransform, iceberg.MonthTransform, iceberg.YearTransform:
				return span{}, extentNone
			}
			continue
		}
		v, ok := asInt64(raw)
		if !ok {
			continue
		}
		s, ok := transformSpan(pf.Transform, d.unit(), v)
		if !ok {
			continue
		}
		if ext == extentKnown {
			if s, ok = s.intersect(out); !ok {
				return span{}, extentUnknown
			}
		}
		out, ext = s, extentKnown
	}
	return out, ext
}

// transformSpan is the range of source values (in the time column's unit)
// that a partition value v of transform t stands for.
func transformSpan(t iceberg.Transform, u unit, v int64) (span, bool) {
	if _, ok := t.(iceberg.IdentityTransform); ok {
		return span{v, v}, true
	}
	var start, end time.Time // [start, end)
	switch t.(type) {
	case iceberg.HourTransform:
		if u == unitDays || u == unitMillis {
			return span{}, false
		}
		start = time.Unix(v*3600, 0)
		end = start.Add(time.Hour)
	case iceberg.DayTransform:
		start = time.Unix(v*86400, 0)
		end = start.AddDate(0, 0, 1)
	case iceberg.MonthTransform:
		start = time.Date(1970, time.January+time.Month(v), 1, 0, 0, 0, 0, time.UTC)
		end = start.AddDate(0, 1, 0)
	case iceberg.YearTransform:
		start = time.Date(1970+int(v), time.January, 1, 0, 0, 0, 0, time.UTC)
		end = start.AddDate(1, 0, 0)
	default:
		return span{}, false
	}
	if u == unitMillis {
		// Time transforms do not apply to a long column.
		return span{}, false
	}
	if start.Year() < 1 || end.Year() > 9999 {
		return span{}, false
	}
	switch u {
	case unitMicros:
		return span{start.UnixMicro(), end.UnixMicro() - 1}, true
	case unitNanos:
		if start.Year() < 1678 || end.Year() > 2261 {
			return span{}, false
		}
		return span{start.UnixNano(), end.UnixNano() - 1}, true
	}
	// Days: midnights are whole days.
	return span{start.Unix() / 86400, end.Unix()/86400 - 1}, true
}

// asInt64 reads a partition value of an integer-like type.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case iceberg.Date:
		return int64(x), true
	case iceberg.Timestamp:
		return int64(x), true
	case iceberg.TimestampNano:
		return int64(x), true
	}
	return 0, false
}

// IntervalFilter is the icebergFilter that keeps exactly the rows whose
// time column the sidecar serves as a Druid time in [start, end): a
// timestamp is served as epoch milliseconds truncated toward zero, so
// before 1970 the bounds move by up to a millisecond less one unit
// (-0.5 ms is served as 0, on 1970-01-01); a long is compared as epoch
// milliseconds.
func IntervalFilter(field iceberg.NestedField, start, end time.Time) (*splits.Filter, error) {
	u, ok := timeUnit(field.Type)
	if !ok {
		return nil, fmt.Errorf("%w: column %q is %s, not a time column", splits.ErrBadRequest, field.Name, field.Type)
	}
	startMs, endMs := start.UnixMilli(), end.UnixMilli()
	raw := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	f := &splits.Filter{FilterColumn: field.Name}
	switch u {
	case unitMillis:
		f.Type, f.Lower, f.Upper, f.UpperOpen = "range", raw(startMs), raw(endMs), true
		return f, nil
	case unitDays:
		// A date is served as the milliseconds of its midnight, exactly.
		f.Type, f.Intervals = "interval", []string{iso(time.UnixMilli(startMs)) + "/" + iso(time.UnixMilli(endMs))}
		return f, nil
	}
	// The first value served as ms: ms×k from 1970 on, ms×k-(k-1) before
	// (truncation toward zero), with k units in a millisecond.
	first := func(ms int64) time.Time {
		if u == unitMicros {
			if ms > 0 {
				return time.UnixMicro(ms * 1000)
			}
			return time.UnixMicro(ms*1000 - 999)
		}
		if ms > 0 {
			return time.Unix(0, ms*1_000_000)
		}
		return time.Unix(0, ms*1_000_000-999_999)
	}
	f.Type, f.Intervals = "interval", []string{iso(first(startMs)) + "/" + iso(first(endMs))}
	return f, nil
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
