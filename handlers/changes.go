package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
)

// changesParams are the query parameters of GET /changes besides the
// plan parameters it shares (planParams): its fromSnapshot and toSnapshot
// are the two snapshots diffed.
var changesParams = map[string]bool{
	"fromSnapshot": true, "toSnapshot": true, "timeColumn": true, "granularity": true, "dataSource": true, "include": true,
	"maxNumConcurrentSubTasks": true,
}

// changesResponse is the answer of GET /changes.
type changesResponse struct {
	Table      string `json:"table"`
	DataSource string `json:"dataSource"`
	// FromSnapshot is null for an initial load.
	FromSnapshot *int64 `json:"fromSnapshot"`
	// ToSnapshot is null for a table without snapshots.
	ToSnapshot  *int64           `json:"toSnapshot"`
	TimeColumn  string           `json:"timeColumn"`
	Granularity string           `json:"granularity"`
	Changes     []changeResponse `json:"changes"`
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
// re-ingest exactly that interval from the target snapshot.
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
	p, err := planQuery(shared, nil)
	if err != nil {
		return err
	}
	base, err := p.request()
	if err != nil {
		return err
	}
	req := changes.Request{Table: base.Table, TimeColumn: q.Get("timeColumn")}
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
	if p.minSplits == nil {
		// As many splits as each task runs subtasks at once.
		base.MinSplits = subTasks
	}
	dataSource := q.Get("dataSource")
	if dataSource == "" {
		// The table's own name, without its namespace.
		dataSource = base.Table[strings.LastIndex(base.Table, ".")+1:]
	}
	cat, err := s.catalogs.forRequest(r)
	if err != nil {
		return err
	}
	ch, err := cat.Changes.Changes(r.Context(), req)
	if err != nil {
		return err
	}
	resp := changesResponse{
		Table: ch.Table, DataSource: dataSource, FromSnapshot: ch.FromSnapshot, ToSnapshot: ch.ToSnapshot,
		TimeColumn: ch.TimeField.Name, Granularity: string(ch.Granularity),
		Changes: []changeResponse{}, Statements: []statementResponse{}, Warnings: append([]string{}, ch.Warnings...),
	}
	// The target snapshot is planned once, by the diff when it needed it:
	// the work of each change is cut from that one scan.
	target := base
	target.SnapshotID = ch.ToSnapshot
	scan, err := cat.Changes.Target(r.Context(), ch, target)
	if err != nil {
		return err
	}
	var parts []druid.Part
	for _, c := range ch.Changes {
		cr, part, warnings, err := s.changeWork(r, cat, scan, target, ch, c, dataSource, subTasks)
		if err != nil {
			return err
		}
		resp.Changes = append(resp.Changes, cr)
		parts = append(parts, part)
		for _, w := range warnings {
			if !slices.Contains(resp.Warnings, w) {
				resp.Warnings = append(resp.Warnings, w)
			}
		}
	}
	st := druid.Statement{Replace: true, DataSource: dataSource, PartitionedBy: ch.Granularity, AllowEmpty: true}
	batches, err := st.Batches(parts)
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

// changeWork cuts the splits of one changed interval from the scan of the
// target snapshot (the interval holds row by row, since Druid rejects rows
// outside an OVERWRITE range) and renders the statement and task that
// replace the interval with those rows, packing more per split when they
// would be larger than Druid's task runners take. The part is what the
// merged statements read for the interval.
func (s *server) changeWork(r *http.Request, cat Catalog, scan *splits.Scan, req splits.Request, ch changes.Result, c changes.Change,
	dataSource string, subTasks int) (changeResponse, druid.Part, []string, error) {
	iv := druid.Interval{Start: c.Start, End: c.End}
	var cut *splits.TimeInterval
	if !c.All {
		cut = &splits.TimeInterval{Column: ch.TimeField.Name, Start: c.Start, End: c.End}
	}
	req.Interval = cut
	plan := func(req splits.Request) (druid.Source, splitsResponse, error) {
		sc := scan
		if req.MaxSplits > 0 {
			// Fewer, larger splits: the target scanned again with the
			// bound, from the files the diff planned.
			var err error
			if sc, err = cat.Changes.Target(r.Context(), ch, req); err != nil {
				return druid.Source{}, splitsResponse{}, err
			}
		}
		// Without a target snapshot the plan is empty: nothing to read.
		return sourceOf(req, ch.TimeField.Name, "timeColumn", func() (splits.Plan, splitsResponse, error) {
			return s.answer(r, req, nil, func() (splits.Plan, error) { return cat.Changes.Cut(r.Context(), sc, cut) })
		})
	}
	type work struct {
		cr       changeResponse
		part     druid.Part
		warnings []string
	}
	wk, err := withinPayload(req, plan, func(src druid.Source, resp splitsResponse) (work, error) {
		cr := changeResponse{Interval: c.String(), Splits: len(src.InputSource.URIs)}
		for _, reason := range c.Reasons {
			cr.Reasons = append(cr.Reasons, string(reason))
		}
		var warnings []string
		for _, w := range resp.Warnings {
			if !strings.HasPrefix(w, "no data file to read") {
				warnings = append(warnings, w)
			}
		}
		if len(src.InputSource.URIs) == 0 {
			// The interval is replaced with nothing.
			src = src.EmptySource(iv.Start)
		}
		st := druid.Statement{Replace: true, DataSource: dataSource, Overwrite: iv, PartitionedBy: ch.Granularity, AllowEmpty: true}
		query, err := st.SQL(src)
		if err != nil {
			return work{}, err
		}
		task, err := druid.Task{DataSource: dataSource, SegmentGranularity: ch.Granularity, SubTasks: subTasks, Interval: iv}.Spec(src)
		switch {
		case errors.Is(err, druid.ErrNothingToRead):
			// A native task without an interval replaces only the time
			// chunks its rows fall into: with no row, nothing.
			warnings = append(warnings, "the table has no row to ingest: only the statement can replace ALL with nothing (the change has no task)")
		case err != nil:
			return work{}, err
		}
		cr.SQL = sqlTask{Query: query, Context: st.Context(src)}
		cr.Task = task
		return work{cr: cr, part: druid.Part{Interval: iv, Source: src}, warnings: warnings}, nil
	})
	return wk.cr, wk.part, wk.warnings, err
}
