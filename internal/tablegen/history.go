package tablegen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// TimeKind is the Iceberg type of a History table's time column, ts.
type TimeKind string

// The time column types a History can have: what GET /changes and
// /druid/task accept as a time column.
const (
	TimeTimestamp   TimeKind = "timestamp"   // microseconds, no zone
	TimeTimestampTz TimeKind = "timestamptz" // microseconds, UTC
	TimeDate        TimeKind = "date"        // days
	TimeLongMillis  TimeKind = "long"        // epoch milliseconds in a long
)

// Layout is how a History table is partitioned.
type Layout string

// The layouts of a History table.
const (
	LayoutUnpartitioned Layout = "unpartitioned"
	// LayoutDay partitions by day(ts); not for TimeLongMillis.
	LayoutDay Layout = "day"
	// LayoutCategory partitions by identity(cat): partitioned, but not by
	// time, so that every partition spans many days.
	LayoutCategory Layout = "category"
)

// HistoryOptions choose a History's table.
type HistoryOptions struct {
	// Seed makes the history reproducible: the same seed and options give
	// the same operations on the same rows.
	Seed   uint64
	Time   TimeKind
	Layout Layout
	// TimeColumn names the time column; "" is ts.
	TimeColumn string
	// Properties are more table properties, such as
	// write.metadata.metrics.column.ts=none for data files without bounds
	// on the time column.
	Properties iceberg.Properties
}

// Field ids of a History table.
const (
	historyID  = 1
	historyTS  = 2
	historyCat = 3
	historyV   = 4
)

// historyRow is one row of a History table; ts is in the column's own unit
// (microseconds, days or milliseconds), nil for null.
type historyRow struct {
	id  int64
	ts  *int64
	cat string
	v   int64
}

// History is a table that random operations change one commit at a time,
// the way writers change tables: appends, positional deletes (merge on
// read), copy-on-write deletes and overwrites, equality deletes, updates as
// an equality delete plus an append in one snapshot, and updates that move
// rows to another day. Every operation goes through iceberg-go's own
// writers.
//
// Its schema is id long (required), ts (the time column, of opts.Time,
// null in a few rows), cat string, v long. Times fall into a few days, near
// 2024-03-01 or around the Unix epoch (where timestamps before 1970 with
// sub-millisecond parts show how they truncate), and some sit a microsecond
// from midnight.
//
// Rows is its record of the live rows, which TestHistoryTracksItsRows holds
// equal to OracleRows after every step, for every option.
type History struct {
	tbl  *table.Table
	opts HistoryOptions
	rng  *rand.Rand
	// live is the latest version of each live id, what operations pick
	// from; rows is every live row, with the versions a rewrite brought
	// back (see Step).
	live   map[int64]historyRow
	rows   []historyRow
	nextID int64
	// baseDay is the first of the history's days, in days since the epoch.
	baseDay int64
	days    int64
	steps   int
	// ts is the time column's name; mode the table's delete mode.
	ts   string
	mode string
	// reread is set by an operation after which iceberg-go's table is
	// read back rather than the record trusted (see settle).
	reread bool
}

// NewHistory creates the table ident in cat (format version 2) and returns
// it with no snapshot yet.
func NewHistory(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts HistoryOptions) (*History, error) {
	tsType, err := opts.Time.icebergType()
	if err != nil {
		return nil, err
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: historyID, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: historyTS, Name: cmp.Or(opts.TimeColumn, "ts"), Type: tsType},
		iceberg.NestedField{ID: historyCat, Name: "cat", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: historyV, Name: "v", Type: iceberg.PrimitiveTypes.Int64},
	)
	var spec iceberg.PartitionSpec
	switch opts.Layout {
	case LayoutUnpartitioned:
		spec = *iceberg.UnpartitionedSpec
	case LayoutDay:
		if opts.Time == TimeLongMillis {
			return nil, fmt.Errorf("%w: a long column has no day transform", ErrInvalidArgument)
		}
		spec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{historyTS}, FieldID: 1000, Name: "day", Transform: iceberg.DayTransform{}})
	case LayoutCategory:
		spec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{historyCat}, FieldID: 1000, Name: "cat", Transform: iceberg.IdentityTransform{}})
	default:
		return nil, fmt.Errorf("%w: layout %q", ErrInvalidArgument, opts.Layout)
	}
	if err := icewrite.EnsureNamespace(ctx, cat, ident); err != nil {
		return nil, err
	}
	props := iceberg.Properties{formatVersionKey: "2", table.WriteDeleteModeKey: table.WriteModeMergeOnRead}
	for k, v := range opts.Properties {
		props[k] = v
	}
	tbl, err := cat.CreateTable(ctx, ident, sc, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", identString(ident), err)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	h := &History{tbl: tbl, opts: opts, rng: rng, live: map[int64]historyRow{}, nextID: 1, days: 3 + rng.Int64N(4),
		ts: cmp.Or(opts.TimeColumn, "ts"), mode: table.WriteModeMergeOnRead}
	h.baseDay = 19_783 // 2024-03-01
	if rng.IntN(3) == 0 {
		h.baseDay = -2 // around the epoch: negative times with sub-millisecond parts
	}
	return h, nil
}

func (k TimeKind) icebergType() (iceberg.Type, error) {
	switch k {
	case TimeTimestamp:
		return iceberg.PrimitiveTypes.Timestamp, nil
	case TimeTimestampTz:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case TimeDate:
		return iceberg.PrimitiveTypes.Date, nil
	case TimeLongMillis:
		return iceberg.PrimitiveTypes.Int64, nil
	}
	return nil, fmt.Errorf("%w: time kind %q", ErrInvalidArgument, k)
}

// Table is the table as last committed.
func (h *History) Table() *table.Table { return h.tbl }

// Step applies one random operation in one commit (an update through
// iceberg-go's Delete then Append commits two snapshots in that commit) and
// says what it did. The first step is always an append.
func (h *History) Step(ctx context.Context) (string, error) {
	h.steps++
	ids := h.pickLive()
	op := h.rng.IntN(100)
	if h.steps == 1 || len(ids) == 0 {
		op = 0
	}
	var err error
	var what string
	switch {
	case op < 28:
		what, err = h.appendRows(ctx)
	case op < 43:
		what, err = h.deleteRows(ctx, ids, table.WriteModeMergeOnRead)
	case op < 50:
		what, err = h.deleteRows(ctx, ids, table.WriteModeCopyOnWrite)
	case op < 64:
		what, err = h.equalityDelete(ctx, ids, h.rng.IntN(2) == 0, nil)
	case op < 80:
		what, err = h.equalityDelete(ctx, ids, h.rng.IntN(2) == 0, h.moved(ids))
	case op < 86:
		what, err = h.deleteThenAppend(ctx, ids)
	case op < 94:
		what, err = h.overwriteDay(ctx)
	default:
		what, err = h.deleteDay(ctx)
	}
	if err != nil {
		return "", fmt.Errorf("step %d (%s) on %s: %w", h.steps, what, identString(h.tbl.Identifier()), err)
	}
	if err := h.settle(ctx); err != nil {
		return "", fmt.Errorf("step %d (%s) on %s: %w", h.steps, what, identString(h.tbl.Identifier()), err)
	}
	return what, nil
}

// settle reads the table back after an operation that set reread.
//
// Two iceberg-go v0.7.0 bugs make a commit differ from what was asked,
// and the table is what it is: read back what is live rather than guess.
//   - A copy-on-write delete or overwrite rewrites a file without applying
//     the delete files attached to it, and drops them with the file: rows
//     deleted earlier come back.
//   - A delete or overwrite by a filter on the (nullable) time column reads
//     the files with Parquet row-group pruning that takes a row group
//     holding as many nulls as values for one holding only nulls
//     (Statistics.NumValues counts no nulls; containsNullsOnly compares it
//     with NullCount): a delete leaves its matching rows live, an overwrite
//     drops the null rows it should keep.
func (h *History) settle(ctx context.Context) error {
	if !h.reread {
		return nil
	}
	h.reread = false
	return h.refresh(ctx)
}

// refresh reads the live rows of the current snapshot with iceberg-go.
func (h *History) refresh(ctx context.Context) (err error) {
	live := map[int64]historyRow{}
	var rows []historyRow
	if h.tbl.CurrentSnapshot() != nil {
		scan := h.tbl.Scan()
		defer func() {
			if cerr := scan.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close scan: %w", cerr)
			}
		}()
		_, records, err := scan.ToArrowRecords(ctx)
		if err != nil {
			return fmt.Errorf("read live rows: %w", err)
		}
		for rec, err := range records {
			if err != nil {
				return fmt.Errorf("read live rows: %w", err)
			}
			if rows, err = h.collect(rec, live, rows); err != nil {
				rec.Release()
				return err
			}
			rec.Release()
		}
	}
	h.live, h.rows = live, rows
	return nil
}

// collect adds the rows of rec to live and to rows.
func (h *History) collect(rec arrow.RecordBatch, live map[int64]historyRow, rows []historyRow) ([]historyRow, error) {
	col := func(name string) (arrow.Array, error) {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("read live rows: no column %s", name)
		}
		return rec.Column(idx[0]), nil
	}
	ids, err := col("id")
	if err != nil {
		return rows, err
	}
	ts, err := col(h.ts)
	if err != nil {
		return rows, err
	}
	cats, err := col("cat")
	if err != nil {
		return rows, err
	}
	vs, err := col("v")
	if err != nil {
		return rows, err
	}
	for i := range int(rec.NumRows()) {
		r := historyRow{id: ids.(*array.Int64).Value(i), cat: cats.(*array.String).Value(i), v: vs.(*array.Int64).Value(i)}
		if !ts.IsNull(i) {
			var v int64
			switch a := ts.(type) {
			case *array.Timestamp:
				v = int64(a.Value(i))
			case *array.Date32:
				v = int64(a.Value(i))
			case *array.Int64:
				v = a.Value(i)
			default:
				return rows, fmt.Errorf("read live rows: ts is %s", ts.DataType())
			}
			r.ts = &v
		}
		live[r.id] = r
		rows = append(rows, r)
	}
	return rows, nil
}

// pickLive picks one to three live ids.
func (h *History) pickLive() []int64 {
	if len(h.live) == 0 {
		return nil
	}
	all := make([]int64, 0, len(h.live))
	for id := range h.live {
		all = append(all, id)
	}
	slices.Sort(all)
	n := 1 + h.rng.IntN(3)
	var out []int64
	for range n {
		id := all[h.rng.IntN(len(all))]
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// randomTime is a time in one of the history's days, in the column's unit;
// nil (null) now and then.
func (h *History) randomTime(day int64) *int64 {
	if h.rng.IntN(20) == 0 {
		return nil
	}
	const microsPerDay = 86_400_000_000
	var micros int64
	edges := 6
	if h.baseDay < 0 {
		// Around the epoch the edges of days are where truncation to
		// milliseconds moves a time to another day: more of them.
		edges = 3
	}
	switch h.rng.IntN(edges) {
	case 0: // just after midnight
		micros = day*microsPerDay + h.rng.Int64N(2)
	case 1: // just before the next midnight
		micros = (day+1)*microsPerDay - 1 - h.rng.Int64N(2)
	default:
		micros = day*microsPerDay + h.rng.Int64N(microsPerDay)
	}
	var v int64
	switch h.opts.Time {
	case TimeDate:
		v = day
	case TimeLongMillis:
		v = micros / 1000
		if micros < 0 && micros%1000 != 0 {
			v-- // floor, so that the value stays in its day
		}
	default:
		v = micros
	}
	return &v
}

func (h *History) randomDay() int64 { return h.baseDay + h.rng.Int64N(h.days) }

func (h *History) newRows(n int) []historyRow {
	rows := make([]historyRow, n)
	day := h.randomDay()
	for i := range rows {
		if h.rng.IntN(3) == 0 {
			day = h.randomDay()
		}
		rows[i] = historyRow{id: h.nextID, ts: h.randomTime(day), cat: string(rune('a' + h.rng.IntN(3))), v: h.rng.Int64N(1000)}
		h.nextID++
	}
	return rows
}

// moved is the ids' rows with a new value and, for half of them, a time on
// another day: an update that moves rows across days.
func (h *History) moved(ids []int64) []historyRow {
	out := make([]historyRow, 0, len(ids))
	for _, id := range ids {
		r := h.live[id]
		r.v = h.rng.Int64N(1000)
		if r.ts == nil || h.rng.IntN(2) == 0 {
			r.ts = h.randomTime(h.randomDay())
		}
		out = append(out, r)
	}
	return out
}

func (h *History) arrowSchema() (*arrow.Schema, error) { return icewrite.ArrowSchema(h.tbl) }

// batch builds rows in the table's Arrow schema.
func (h *History) batch(sc *arrow.Schema, rows []historyRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		for i, f := range sc.Fields() {
			id, _ := arrowFieldID(f)
			fb := b.Field(i)
			switch id {
			case historyID:
				fb.(*array.Int64Builder).Append(r.id)
			case historyCat:
				fb.(*array.StringBuilder).Append(r.cat)
			case historyV:
				fb.(*array.Int64Builder).Append(r.v)
			case historyTS:
				if r.ts == nil {
					fb.AppendNull()
					continue
				}
				switch tb := fb.(type) {
				case *array.TimestampBuilder:
					tb.Append(arrow.Timestamp(*r.ts))
				case *array.Date32Builder:
					tb.Append(arrow.Date32(*r.ts))
				case *array.Int64Builder:
					tb.Append(*r.ts)
				}
			default:
				// A column AddColumn added: null in every row.
				fb.AppendNull()
			}
		}
	}
	return b.NewRecordBatch()
}

func (h *History) commit(ctx context.Context, tx *table.Transaction) error {
	tbl, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	h.tbl = tbl
	return nil
}

func (h *History) appendRows(ctx context.Context) (string, error) {
	return h.appendThese(ctx, h.newRows(1+h.rng.IntN(6)))
}

// HistoryRow is a row of a History table, for the deterministic
// operations: TS is in the time column's unit (microseconds, days or
// milliseconds), nil for null.
type HistoryRow struct {
	ID  int64
	TS  *int64
	Cat string
	V   int64
}

// Append appends rows in one snapshot (one data file per partition).
func (h *History) Append(ctx context.Context, rows ...HistoryRow) error {
	var hr []historyRow
	for _, r := range rows {
		hr = append(hr, historyRow{id: r.ID, ts: r.TS, cat: r.Cat, v: r.V})
		h.nextID = max(h.nextID, r.ID+1)
	}
	_, err := h.appendThese(ctx, hr)
	return err
}

// Delete deletes rows by id with iceberg-go's Delete, in the delete mode
// given (table.WriteModeMergeOnRead writes positional delete files).
func (h *History) Delete(ctx context.Context, mode string, ids ...int64) error {
	_, err := h.deleteRows(ctx, ids, mode)
	return err
}

// EqualityDelete deletes rows by id with one equality delete file per
// partition, keyed on id, or on (id, time column) with keyTime.
func (h *History) EqualityDelete(ctx context.Context, keyTime bool, ids ...int64) error {
	_, err := h.equalityDelete(ctx, ids, keyTime, nil)
	return err
}

func (h *History) appendThese(ctx context.Context, rows []historyRow) (string, error) {
	sc, err := h.arrowSchema()
	if err != nil {
		return "append", err
	}
	rec := h.batch(sc, rows)
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		return "append", err
	}
	defer rdr.Release()
	tx := h.tbl.NewTransaction()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		return "append", err
	}
	if err := h.commit(ctx, tx); err != nil {
		return "append", err
	}
	for _, r := range rows {
		h.live[r.id] = r
	}
	h.rows = append(h.rows, rows...)
	return fmt.Sprintf("append %d rows", len(rows)), nil
}

// deleteRows deletes rows by id through iceberg-go's Delete: merge on read
// writes positional delete files, copy on write rewrites the data files.
func (h *History) deleteRows(ctx context.Context, ids []int64, mode string) (string, error) {
	what := fmt.Sprintf("delete ids %v (%s)", ids, mode)
	tx := h.tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: mode}); err != nil {
		return what, err
	}
	if err := tx.Delete(ctx, iceberg.IsIn(iceberg.Reference("id"), ids...), nil); err != nil {
		return what, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return what, err
	}
	h.mode = mode
	h.reread = h.reread || mode == table.WriteModeCopyOnWrite
	for _, id := range ids {
		delete(h.live, id)
	}
	h.drop(func(r historyRow) bool { return slices.Contains(ids, r.id) })
	return what, nil
}

// equalityDelete deletes the ids' rows with one equality delete file, keyed
// on id or on (id, ts), and adds replacement rows (an update) in the same
// snapshot, whose sequence number keeps the delete off them.
func (h *History) equalityDelete(ctx context.Context, ids []int64, keyTime bool, replacements []historyRow) (string, error) {
	fieldIDs := []int{historyID}
	if keyTime {
		fieldIDs = append(fieldIDs, historyTS)
	}
	what := fmt.Sprintf("equality delete ids %v on %v", ids, fieldIDs)
	if replacements != nil {
		what = fmt.Sprintf("update ids %v (equality delete on %v and append)", ids, fieldIDs)
	}
	// A partitioned table routes delete rows by the partition source
	// column, so the delete file carries it too.
	names := []string{"id"}
	if keyTime || h.opts.Layout == LayoutDay {
		names = append(names, h.ts)
	}
	if h.opts.Layout == LayoutCategory {
		names = append(names, "cat")
	}
	keySchema, err := h.tbl.Schema().Select(true, names...)
	if err != nil {
		return what, err
	}
	ksc, err := table.SchemaToArrowSchema(keySchema, nil, true, false)
	if err != nil {
		return what, err
	}
	var keys []historyRow
	for _, id := range ids {
		keys = append(keys, h.live[id])
	}
	tx := h.tbl.NewTransaction()
	rec := h.batch(ksc, keys)
	defer rec.Release()
	deletes, err := tx.WriteEqualityDeletes(ctx, fieldIDs, func(yield func(arrow.RecordBatch, error) bool) {
		rec.Retain()
		yield(rec, nil)
	})
	if err != nil {
		return what, err
	}
	var data []iceberg.DataFile
	if replacements != nil {
		sc, err := h.arrowSchema()
		if err != nil {
			return what, err
		}
		newRec := h.batch(sc, replacements)
		for df, err := range table.WriteRecords(ctx, h.tbl, sc, func(yield func(arrow.RecordBatch, error) bool) { yield(newRec, nil) }) {
			if err != nil {
				return what, err
			}
			data = append(data, df)
		}
	}
	if err := tx.NewRowDelta(nil).AddRows(data...).AddDeletes(deletes...).Commit(ctx); err != nil {
		return what, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return what, err
	}
	for _, id := range ids {
		delete(h.live, id)
	}
	// The delete applies to the rows equal on its fields, in its own
	// partition: a version a rewrote brought back elsewhere stays.
	h.drop(func(r historyRow) bool {
		return slices.ContainsFunc(keys, func(k historyRow) bool {
			return r.id == k.id && (!keyTime || equalTime(r.ts, k.ts)) && h.samePartition(r, k)
		})
	})
	for _, r := range replacements {
		h.live[r.id] = r
	}
	h.rows = append(h.rows, replacements...)
	return what, nil
}

// deleteThenAppend updates rows the way engines without equality deletes
// do: a positional delete, then an append of the new versions, in one
// transaction (two snapshots).
func (h *History) deleteThenAppend(ctx context.Context, ids []int64) (string, error) {
	what := fmt.Sprintf("update ids %v (delete, then append)", ids)
	rows := h.moved(ids)
	sc, err := h.arrowSchema()
	if err != nil {
		return what, err
	}
	tx := h.tbl.NewTransaction()
	if err := tx.Delete(ctx, iceberg.IsIn(iceberg.Reference("id"), ids...), nil); err != nil {
		return what, err
	}
	rec := h.batch(sc, rows)
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		return what, err
	}
	defer rdr.Release()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		return what, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return what, err
	}
	h.reread = h.reread || h.mode == table.WriteModeCopyOnWrite
	for _, r := range rows {
		h.live[r.id] = r
	}
	h.drop(func(r historyRow) bool { return slices.Contains(ids, r.id) })
	h.rows = append(h.rows, rows...)
	return what, nil
}

// dayFilter is ts in [day, day+1) in the column's unit.
func (h *History) dayFilter(day int64) iceberg.BooleanExpression {
	ref := iceberg.Reference(h.ts)
	switch h.opts.Time {
	case TimeDate:
		return iceberg.EqualTo(ref, iceberg.Date(day))
	case TimeLongMillis:
		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, day*86_400_000), iceberg.LessThan(ref, (day+1)*86_400_000))
	}
	return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, iceberg.Timestamp(day*86_400_000_000)),
		iceberg.LessThan(ref, iceberg.Timestamp((day+1)*86_400_000_000)))
}

// inDay says whether a row's time lies in day, as dayFilter has it.
func (h *History) inDay(r historyRow, day int64) bool {
	if r.ts == nil {
		return false
	}
	switch h.opts.Time {
	case TimeDate:
		return *r.ts == day
	case TimeLongMillis:
		return *r.ts >= day*86_400_000 && *r.ts < (day+1)*86_400_000
	}
	return *r.ts >= day*86_400_000_000 && *r.ts < (day+1)*86_400_000_000
}

// overwriteDay replaces a random day's rows with new ones (copy on write).
func (h *History) overwriteDay(ctx context.Context) (string, error) {
	day := h.randomDay()
	return h.overwriteDayWith(ctx, day, h.newRows(1+h.rng.IntN(4)))
}

// overwriteDayWith replaces one day's rows, by a filter on the time column,
// with rows.
func (h *History) overwriteDayWith(ctx context.Context, day int64, rows []historyRow) (string, error) {
	what := fmt.Sprintf("overwrite day %d with %d rows", day, len(rows))
	sc, err := h.arrowSchema()
	if err != nil {
		return what, err
	}
	rec := h.batch(sc, rows)
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		return what, err
	}
	defer rdr.Release()
	tx := h.tbl.NewTransaction()
	if err := tx.Overwrite(ctx, rdr, nil, table.WithOverwriteFilter(h.dayFilter(day))); err != nil {
		return what, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return what, err
	}
	h.reread = true
	for id, r := range h.live {
		if h.inDay(r, day) {
			delete(h.live, id)
		}
	}
	for _, r := range rows {
		h.live[r.id] = r
	}
	h.drop(func(r historyRow) bool { return h.inDay(r, day) })
	h.rows = append(h.rows, rows...)
	return what, nil
}

// deleteDay deletes a random day's rows with the table's current delete
// mode.
func (h *History) deleteDay(ctx context.Context) (string, error) {
	return h.deleteDayOf(ctx, h.randomDay())
}

// deleteDayOf deletes one day's rows, by a filter on the time column, with
// the table's current delete mode.
func (h *History) deleteDayOf(ctx context.Context, day int64) (string, error) {
	what := fmt.Sprintf("delete day %d", day)
	tx := h.tbl.NewTransaction()
	if err := tx.Delete(ctx, h.dayFilter(day), nil); err != nil {
		if errors.Is(err, table.ErrInvalidOperation) {
			return what + " (nothing to delete)", nil
		}
		return what, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return what, err
	}
	h.reread = true
	for id, r := range h.live {
		if h.inDay(r, day) {
			delete(h.live, id)
		}
	}
	h.drop(func(r historyRow) bool { return h.inDay(r, day) })
	return what, nil
}

// drop removes the recorded rows gone says are deleted.
func (h *History) drop(gone func(historyRow) bool) { h.rows = slices.DeleteFunc(h.rows, gone) }

func equalTime(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// samePartition says whether two rows fall in one partition of the table.
func (h *History) samePartition(a, b historyRow) bool {
	switch h.opts.Layout {
	case LayoutDay:
		return equalTime(h.day(a.ts), h.day(b.ts))
	case LayoutCategory:
		return a.cat == b.cat
	}
	return true
}

// day is the day(ts) partition value of a time in the column's unit.
func (h *History) day(ts *int64) *int64 {
	if ts == nil || h.opts.Time == TimeDate {
		return ts
	}
	perDay := int64(86_400_000_000)
	if h.opts.Time == TimeLongMillis {
		perDay = 86_400_000
	}
	d := *ts / perDay
	if *ts%perDay < 0 {
		d--
	}
	return &d
}

// AddColumn adds the optional string column name to the table's schema,
// in a commit of its own that makes no snapshot: the next operation's
// snapshot is the first of the new schema. Every row holds null in it, and
// Rows leaves it out.
func (h *History) AddColumn(ctx context.Context, name string) error {
	tbl, err := updateSchema(ctx, h.tbl, func(u *table.UpdateSchema) {
		u.AddColumn([]string{name}, iceberg.PrimitiveTypes.String, "", false, nil)
	})
	if err != nil {
		return err
	}
	h.tbl = tbl
	return nil
}

// Rows are the live rows of the current snapshot as OracleRows spells them,
// in no particular order.
func (h *History) Rows() []string {
	out := make([]string, 0, len(h.rows))
	var buf []byte
	for _, r := range h.rows {
		buf = append(strconv.AppendInt(append(buf[:0], `{"id":`...), r.id, 10), ',')
		buf = append(appendJSONString(buf, h.ts), ':')
		switch {
		case r.ts == nil:
			buf = append(buf, "null"...)
		case h.opts.Time == TimeDate:
			buf = strconv.AppendInt(buf, *r.ts*86_400_000, 10)
		case h.opts.Time == TimeLongMillis:
			buf = strconv.AppendInt(buf, *r.ts, 10)
		default:
			buf = strconv.AppendInt(buf, toMillis(*r.ts, arrow.Microsecond), 10)
		}
		buf = appendJSONString(append(buf, `,"cat":`...), r.cat)
		buf = strconv.AppendInt(append(buf, `,"v":`...), r.v, 10)
		out = append(out, string(append(buf, '}')))
	}
	return out
}
