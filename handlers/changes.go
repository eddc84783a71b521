package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// changesParams are the query parameters of GET /changes besides the
// plan parameters it shares (planParams): its fromSnapshot and toSnapshot
// are the two snapshots diffed.
var changesParams = map[string]bool{
	"fromSnapshot": true, "toSnapshot": true, "timeColumn": true, "constantTime": true, "granularity": true, "dataSource": true, "include": true,
	"maxNumConcurrentSubTasks": true,
	"clusteredBy":              true, "partitionsSpec": true, "targetRowsPerSegment": true, "maxRowsPerSegment": true, "numShards": true,
}

// changesResponse is the answer of GET /changes.
type changesResponse struct {
	Table      string `json:"table"`
	DataSource string `json:"dataSource"`
	// FromSnapshot is null for an initial load.
	FromSnapshot *int64 `json:"fromSnapshot"`
	// ToSnapshot is null for a table without snapshots.
	ToSnapshot *int64 `json:"toSnapshot"`
	// TimeColumn is empty with ConstantTime, every row's __time for a
	// table without a time column.
	TimeColumn   string           `json:"timeColumn"`
	ConstantTime string           `json:"constantTime,omitempty"`
	Granularity  string           `json:"granularity"`
	Changes      []changeResponse `json:"changes"`
	// Statements are the changes' REPLACEs merged into as few statements
	// as Druid takes (druid.Statement.Batches): what sync submits.
	Statements []statementResponse `json:"statements"`
	Warnings   []string            `json:"warnings"`
}

// statementResponse is one REPLACE that overwrites the intervals of
// several changes.
type statementResponse struct {
	// Intervals are ISO 8601 START/END, or ALL.
	Intervals []string `json:"intervals"`
	// SQL is the body of POST /druid/v2/sql/task.
	SQL sqlTask `json:"sql"`
}

// changeResponse is one changed interval with the Druid work that brings
// it to the target snapshot.
type changeResponse struct {
	// Interval is ISO 8601 START/END, or ALL.
	Interval string   `json:"interval"`
	Reasons  []string `json:"reasons"`
	// Splits counts the URIs the statements read; 0 means the interval is
	// empty at the target snapshot, and the statements replace it with
	// nothing.
	Splits int `json:"splits"`
	// SQL is the body of POST /druid/v2/sql/task.
	SQL sqlTask `json:"sql"`
	// Task is the equivalent index_parallel task, for POST
	// /druid/indexer/v1/task; absent for an ALL change with no row to
	// read, which only the statement can apply.
	Task map[string]any `json:"task,omitempty"`
}

// getChanges answers the time intervals whose rows differ between two
// snapshots, each with an MSQ REPLACE and an index_parallel task that
// re-ingest exactly that interval from the target snapshot. With
// constantTime (a table without a time column) the one interval is the
// bucket of that instant, re-ingested from the whole table.
func (s *server) getChanges(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkQuery(q, func(k string) bool { return changesParams[k] || planParams[k] }); err != nil {
		return err
	}
	// The parameters that shape the rows are those of GET /splits.
	shared := url.Values{}
	for k, v := range q {
		if planParams[k] && !changesParams[k] {
			shared[k] = v
		}
	}
	p, rows, err := queryRequest(shared, nil)
	if err != nil {
		return err
	}
	tm, err := readTime(q, "timeColumn")
	if err != nil {
		return err
	}
	req := changes.Request{Table: rows.Table, TimeColumn: tm.column, ConstantTime: tm.constant}
	if req.FromSnapshot, err = queryID(q, "fromSnapshot"); err != nil {
		return err
	}
	if req.ToSnapshot, err = queryID(q, "toSnapshot"); err != nil {
		return err
	}
	if req.Granularity, err = druid.ParseGranularity(q.Get("granularity")); err != nil {
		return err
	}
	if v := q.Get("include"); v != "" {
		if n := strings.Count(v, ",") + 1; n > maxIncludeIntervals {
			return fmt.Errorf("%w: include names %d intervals, more than the %d allowed", errBadRequest, n, maxIncludeIntervals)
		}
		for _, one := range strings.Split(v, ",") {
			c, err := changes.ParseChangeInterval(strings.TrimSpace(one))
			if err != nil {
				return fmt.Errorf("include: %w", err)
			}
			req.Include = append(req.Include, c)
		}
	}
	subTasks, err := maxSubTasks(q)
	if err != nil {
		return err
	}
	parts, err := partitioning(q)
	if err != nil {
		return err
	}
	if p.minSplits == nil {
		// As many splits as each task runs subtasks at once.
		rows.MinSplits = subTasks
	}
	dataSource := q.Get("dataSource")
	if dataSource == "" {
		// The table's own name, without its namespace: a table name that
		// is not one is refused as such first.
		if _, err := token.ParseIdentifier(rows.Table); err != nil {
			return err
		}
		dataSource = rows.Table[strings.LastIndex(rows.Table, ".")+1:]
	}
	if err := druid.CheckDataSource(dataSource); err != nil {
		return err
	}
	cat, err := s.catalogs.forRequest(r)
	if err != nil {
		return err
	}
	rows.TimeColumn = req.TimeColumn
	req.Rows = rows
	ch, err := cat.Changes.Changes(r.Context(), req)
	if err != nil {
		return err
	}
	resp := changesResponse{
		Table: ch.Table, DataSource: dataSource, FromSnapshot: ch.FromSnapshot, ToSnapshot: ch.ToSnapshot,
		TimeColumn: ch.TimeField.Name, Granularity: string(ch.Granularity),
		Changes: []changeResponse{}, Statements: []statementResponse{}, Warnings: append([]string{}, ch.Warnings...),
	}
	if !ch.ConstantTime.IsZero() {
		src := druid.Source{ConstantTime: ch.ConstantTime}
		resp.ConstantTime = ch.ConstantTime.Format("2006-01-02T15:04:05.000Z")
		resp.Warnings = append(resp.Warnings, src.ConstantTimeWarning())
	}
	at, err := s.uriBase(r)
	if err != nil {
		return err
	}
	task := druid.Task{DataSource: dataSource, SegmentGranularity: ch.Granularity, SubTasks: subTasks, Partitioning: parts}
	var reads []druid.Part
	for _, c := range ch.Changes {
		work, err := s.changeWork(r, ch, c, rows, at, task)
		if err != nil {
			return err
		}
		resp.Changes = append(resp.Changes, work.resp)
		reads = append(reads, work.part)
		for _, w := range work.warnings {
			if !slices.Contains(resp.Warnings, w) {
				resp.Warnings = append(resp.Warnings, w)
			}
		}
	}
	st := druid.Statement{Replace: true, DataSource: dataSource, PartitionedBy: ch.Granularity, AllowEmpty: true, ClusteredBy: parts.ClusteredBy}
	batches, err := st.Batches(reads)
	if err != nil {
		return err
	}
	for _, b := range batches {
		sr := statementResponse{SQL: sqlTask{Query: b.Query, Context: b.Context}}
		for _, iv := range b.Intervals {
			sr.Intervals = append(sr.Intervals, iv.String())
		}
		resp.Statements = append(resp.Statements, sr)
	}
	return writeJSON(w, resp)
}

// changeWork plans the rows of one changed interval (ch.Plan, with the
// options of rows) and renders the statement and task that replace the
// interval with them, packing more per split when they would be larger
// than Druid's task runners take.
func (s *server) changeWork(r *http.Request, ch changes.Result, c changes.Change, rows splits.Request, at uriBase,
	task druid.Task) (changeWork, error) {
	return withinPayload(rows, func(req splits.Request) (changeWork, druid.Source, error) {
		start := time.Now()
		p, err := ch.Plan(r.Context(), c, req.MaxSplits)
		if err != nil {
			return changeWork{}, druid.Source{}, err
		}
		pl, err := s.planned(req, p, at, start)
		if err != nil {
			return changeWork{}, druid.Source{}, err
		}
		var src druid.Source
		if ch.ConstantTime.IsZero() {
			if src, err = pl.source(ch.TimeField.Name, "timeColumn"); err != nil {
				return changeWork{}, src, err
			}
		} else {
			src = pl.constantSource(ch.ConstantTime)
		}
		work, err := renderChange(c, src, pl.Warnings, task)
		return work, src, err
	})
}

// changeWork is the Druid work of one change: its answer, the part the
// merged statements read for it, and what the client should know of it.
type changeWork struct {
	resp     changeResponse
	part     druid.Part
	warnings []string
}

// renderChange renders the statement and the task (task gives the
// datasource, granularity and subtasks) that replace change c's interval
// with the rows of src; an empty plan's replaces it with nothing.
func renderChange(c changes.Change, src druid.Source, warnings []string, task druid.Task) (changeWork, error) {
	iv := druid.Interval{Start: c.Start, End: c.End}
	cr := changeResponse{Interval: c.String(), Splits: len(src.InputSource.URIs)}
	for _, reason := range c.Reasons {
		cr.Reasons = append(cr.Reasons, string(reason))
	}
	warnings = append(slices.Clone(warnings), druid.TypeWarnings(src.Fields)...)
	if len(src.InputSource.URIs) == 0 {
		// The interval is replaced with nothing.
		src = src.EmptySource(iv.Start)
	}
	st := druid.Statement{Replace: true, DataSource: task.DataSource, Overwrite: iv, PartitionedBy: task.SegmentGranularity, AllowEmpty: true,
		ClusteredBy: task.Partitioning.ClusteredBy}
	query, err := st.SQL(src)
	if err != nil {
		return changeWork{}, err
	}
	task.Interval = iv
	spec, err := task.Spec(src)
	switch {
	case errors.Is(err, druid.ErrNothingToRead):
		// A native task without an interval replaces only the time
		// chunks its rows fall into: with no row, nothing.
		warnings = append(warnings, "the table has no row to ingest: only the statement can replace ALL with nothing (the change has no task)")
	case err != nil:
		return changeWork{}, err
	}
	cr.SQL = sqlTask{Query: query, Context: st.Context(src)}
	cr.Task = spec
	return changeWork{resp: cr, part: druid.Part{Interval: iv, Source: src}, warnings: warnings}, nil
}
