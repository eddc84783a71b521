package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/splits"
)

// taskParams and sqlParams are what /druid/task and /druid/sql take
// besides the plan parameters (planParams).
var (
	taskParams = map[string]bool{"dataSource": true, "timestampColumn": true, "constantTime": true, "segmentGranularity": true, "maxNumConcurrentSubTasks": true,
		"clusteredBy": true, "partitionsSpec": true, "targetRowsPerSegment": true, "maxRowsPerSegment": true, "numShards": true}
	sqlParams = map[string]bool{"dataSource": true, "timestampColumn": true, "constantTime": true, "statement": true, "partitionedBy": true, "overwrite": true,
		"clusteredBy": true}
)

// partitioning reads the secondary partitioning parameters: clusteredBy
// (a comma-separated list of columns) for both engines, and, where a
// native task is generated, partitionsSpec, targetRowsPerSegment,
// maxRowsPerSegment and numShards. The columns are checked against the
// plan when the spec is rendered.
func partitioning(q url.Values) (druid.Partitioning, error) {
	var p druid.Partitioning
	if v := q.Get("clusteredBy"); v != "" {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c == "" {
				return p, fmt.Errorf("%w: clusteredBy %s has an empty name", errBadRequest, fault.Quote(v))
			}
			p.ClusteredBy = append(p.ClusteredBy, c)
		}
		if len(p.ClusteredBy) > maxColumns {
			return p, fmt.Errorf("%w: clusteredBy names %d columns, more than the %d allowed", errBadRequest, len(p.ClusteredBy), maxColumns)
		}
	}
	var err error
	if p.Native, err = druid.ParsePartitions(q.Get("partitionsSpec")); err != nil {
		return p, err
	}
	for _, n := range []struct {
		name string
		dst  *int
	}{{"targetRowsPerSegment", &p.TargetRows}, {"maxRowsPerSegment", &p.MaxRows}, {"numShards", &p.NumShards}} {
		v := q.Get(n.name)
		if v == "" {
			continue
		}
		if *n.dst, err = strconv.Atoi(v); err != nil || *n.dst < 1 {
			return p, fmt.Errorf("%w: %s %s: want a positive integer", errBadRequest, n.name, fault.Quote(v))
		}
	}
	return p, nil
}

// specTime is where a generated spec takes __time from: the column
// timestampColumn names, or, for a table without a time column, the one
// instant constantTime gives every row.
type specTime struct {
	column   string
	constant time.Time
}

// readSpecTime reads timestampColumn or constantTime, one of which a
// generated spec needs.
func readSpecTime(q url.Values) (specTime, error) { return readTime(q, "timestampColumn") }

// readTime reads the time column parameter param (timestampColumn, or
// /changes' timeColumn) or constantTime: exactly one of them.
func readTime(q url.Values, param string) (specTime, error) {
	st := specTime{column: q.Get(param)}
	c := q.Get("constantTime")
	switch {
	case c != "" && st.column != "":
		return st, fmt.Errorf("%w: %s and constantTime exclude each other: give one", errBadRequest, param)
	case c != "":
		t, err := druid.ParseInstant(c)
		if err != nil {
			return st, fmt.Errorf("%w: constantTime: %w", errBadRequest, err)
		}
		st.constant = t.UTC()
	case st.column == "":
		return st, fmt.Errorf("%w: %s is required (or constantTime, for a table without a time column)", errBadRequest, param)
	}
	return st, nil
}

// specSource plans req and makes what a generated spec reads of the plan,
// its __time taken as st says.
func (s *server) specSource(r *http.Request, req splits.Request, st specTime) (planned, druid.Source, error) {
	pl, err := s.plan(r, req)
	if err != nil {
		return pl, druid.Source{}, err
	}
	if !st.constant.IsZero() {
		src := pl.constantSource(st.constant)
		return pl, src, nil
	}
	src, err := pl.source(st.column, "timestampColumn")
	return pl, src, err
}

// getDruidTask answers a complete index_parallel task for the table, ready
// for POST /druid/indexer/v1/task.
func (s *server) getDruidTask(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, req, err := queryRequest(q, taskParams)
	if err != nil {
		return err
	}
	if err := druid.CheckDataSource(q.Get("dataSource")); err != nil {
		return err
	}
	tm, err := readSpecTime(q)
	if err != nil {
		return err
	}
	req.TimeColumn = tm.column
	task := druid.Task{DataSource: q.Get("dataSource")}
	if task.Partitioning, err = partitioning(q); err != nil {
		return err
	}
	if task.SegmentGranularity, err = druid.ParseGranularity(q.Get("segmentGranularity")); err != nil {
		return fmt.Errorf("segmentGranularity: %w", err)
	}
	if task.SubTasks, err = maxSubTasks(q); err != nil {
		return err
	}
	if p.minSplits == nil {
		// As many splits as the task runs subtasks at once.
		req.MinSplits = task.SubTasks
	}
	var warnings []string
	spec, err := withinPayload(req, func(req splits.Request) (map[string]any, druid.Source, error) {
		pl, src, err := s.specSource(r, req, tm)
		if err != nil {
			return nil, src, err
		}
		warnings = specWarnings(pl, src, tm)
		spec, err := task.Spec(src)
		return spec, src, err
	})
	if err != nil {
		return err
	}
	// The task is Druid's own JSON, ready to POST: its warnings travel
	// beside it, one header each.
	for _, warning := range warnings {
		w.Header().Add(warningHeader, warning)
	}
	return writeJSON(w, spec)
}

// warningHeader carries /druid/task's warnings, one per header line.
const warningHeader = "Sidecar-Warning"

// specWarnings are the warnings of a generated spec: the plan's, the
// column types Druid reads differently, and a constant time.
func specWarnings(pl planned, src druid.Source, tm specTime) []string {
	warnings := append(pl.warnings(), druid.TypeWarnings(pl.Fields)...)
	if !tm.constant.IsZero() {
		warnings = append(warnings, src.ConstantTimeWarning())
	}
	return warnings
}

// maxSubTasks reads maxNumConcurrentSubTasks, 2 when absent.
func maxSubTasks(q url.Values) (int, error) {
	v := q.Get("maxNumConcurrentSubTasks")
	if v == "" {
		return 2, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: maxNumConcurrentSubTasks %q: want a positive integer", errBadRequest, v)
	}
	return n, nil
}

// sqlTask is the body of Druid's POST /druid/v2/sql/task.
type sqlTask struct {
	Query    string         `json:"query"`
	Context  map[string]any `json:"context"`
	Warnings []string       `json:"warnings,omitempty"`
}

// getDruidSQL answers an MSQ INSERT or REPLACE statement that reads the
// table through EXTERN, ready for POST /druid/v2/sql/task. A bounded
// OVERWRITE reads only the rows of its interval: the sidecar filters them
// row by row, and the statement's WHERE is a second guard. A REPLACE with
// nothing to read replaces its interval with nothing.
func (s *server) getDruidSQL(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	_, req, err := queryRequest(q, sqlParams)
	if err != nil {
		return err
	}
	if err := druid.CheckDataSource(q.Get("dataSource")); err != nil {
		return err
	}
	tm, err := readSpecTime(q)
	if err != nil {
		return err
	}
	req.TimeColumn = tm.column
	st := druid.Statement{DataSource: q.Get("dataSource")}
	clustering, err := partitioning(q)
	if err != nil {
		return err
	}
	st.ClusteredBy = clustering.ClusteredBy
	switch verb := strings.ToLower(q.Get("statement")); verb {
	case "", "insert":
	case "replace":
		// A REPLACE may read no row although the plan has files (every
		// row deleted or filtered): it then empties its interval.
		st.Replace, st.AllowEmpty = true, true
	default:
		return fmt.Errorf("%w: statement %q: want insert or replace", errBadRequest, verb)
	}
	if st.PartitionedBy, err = druid.ParseGranularity(q.Get("partitionedBy")); err != nil {
		return fmt.Errorf("partitionedBy: %w", err)
	}
	if v := q.Get("overwrite"); v != "" && !strings.EqualFold(v, "all") {
		start, end, err := druid.ParseInterval(v)
		if err != nil {
			return fmt.Errorf("%w: overwrite: %w", errBadRequest, err)
		}
		st.Overwrite = druid.Interval{Start: start.UTC(), End: end.UTC()}
	} else if v != "" && !st.Replace {
		return fmt.Errorf("%w: overwrite goes with statement=replace", errBadRequest)
	}
	if err := st.Check(); err != nil {
		return err
	}
	if !st.Overwrite.All() && tm.constant.IsZero() {
		req.Interval = &splits.TimeInterval{Column: q.Get("timestampColumn"), Start: st.Overwrite.Start, End: st.Overwrite.End}
	}
	task, err := withinPayload(req, func(req splits.Request) (sqlTask, druid.Source, error) {
		pl, src, err := s.specSource(r, req, tm)
		if err != nil {
			return sqlTask{}, src, err
		}
		warnings := specWarnings(pl, src, tm)
		if len(src.InputSource.URIs) == 0 && st.Replace {
			src = src.EmptySource(st.Overwrite.Start)
			warnings = append(warnings, st.Warnings(src)...)
		}
		query, err := st.SQL(src)
		return sqlTask{Query: query, Context: st.Context(src), Warnings: warnings}, src, err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, task)
}
