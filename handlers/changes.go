package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/splits"
)

// changesParams are the query parameters of GET /changes.
var changesParams = map[string]bool{
	"table": true, "catalog": true, "fromSnapshot": true, "toSnapshot": true, "timeColumn": true,
	"granularity": true, "dataSource": true, "include": true, "mode": true, "columns": true,
	"timestamps": true, "binaryAsString": true, "maxNumConcurrentSubTasks": true, "minSplits": true,
	"compression": true,
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
	Warnings    []string         `json:"warnings"`
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
	// /druid/indexer/v1/task.
	Task map[string]any `json:"task"`
}

// changesContext is the MSQ query context of every /changes statement:
// an empty REPLACE deletes the interval instead of failing, and TIMESTAMP
// literals are UTC.
func changesContext() map[string]any {
	return map[string]any{"maxNumTasks": 2, "failOnEmptyInsert": false, "sqlTimeZone": "UTC"}
}

// getChanges answers the time intervals whose rows differ between two
// snapshots, each with an MSQ REPLACE and an index_parallel task that
// re-ingest exactly that interval from the target snapshot.
func (s *server) getChanges(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var unknown []string
	for k, v := range q {
		if !changesParams[k] {
			unknown = append(unknown, k)
		} else if len(v) > 1 {
			return fmt.Errorf("%w: query parameter %s given %d times", splits.ErrBadRequest, k, len(v))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%w: unknown query parameter %s", splits.ErrBadRequest, strings.Join(unknown, ", "))
	}
	// The parameters that shape the rows are those of GET /splits.
	shared := url.Values{}
	for _, k := range []string{"table", "mode", "columns", "timestamps", "binaryAsString", "minSplits", "compression"} {
		if v, ok := q[k]; ok {
			shared[k] = v
		}
	}
	base, err := parseSplitsQuery(shared, nil)
	if err != nil {
		return err
	}
	req := changes.Request{Table: base.Table, TimeColumn: q.Get("timeColumn")}
	for name, dst := range map[string]**int64{"fromSnapshot": &req.FromSnapshot, "toSnapshot": &req.ToSnapshot} {
		if v := q.Get(name); v != "" {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: %s %q is not an integer", splits.ErrBadRequest, name, v)
			}
			*dst = &id
		}
	}
	if req.Granularity, err = druid.ParseGranularity(q.Get("granularity")); err != nil {
		return err
	}
	if v := q.Get("include"); v != "" {
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
	if q.Get("minSplits") == "" {
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
	ch, err := cat.changes.Changes(r.Context(), req)
	if err != nil {
		return err
	}
	resp := changesResponse{
		Table: ch.Table, DataSource: dataSource, FromSnapshot: ch.FromSnapshot, ToSnapshot: ch.ToSnapshot,
		TimeColumn: ch.TimeField.Name, Granularity: string(ch.Granularity),
		Changes: []changeResponse{}, Warnings: append([]string{}, ch.Warnings...),
	}
	// The target snapshot is planned once, by the diff when it needed it:
	// the work of each change is cut from that one scan.
	target := base
	target.SnapshotID = ch.ToSnapshot
	scan, err := cat.Planner.NewScan(r.Context(), ch.Loaded, target, ch.Target)
	if err != nil {
		return err
	}
	for _, c := range ch.Changes {
		cr, warnings, err := s.changeWork(r, cat, scan, target, ch, c, dataSource, subTasks)
		if err != nil {
			return err
		}
		resp.Changes = append(resp.Changes, cr)
		for _, w := range warnings {
			if !slices.Contains(resp.Warnings, w) {
				resp.Warnings = append(resp.Warnings, w)
			}
		}
	}
	return writeJSON(w, resp)
}

// changeWork cuts the splits of one changed interval from the scan of the
// target snapshot (the interval holds row by row, since Druid rejects rows
// outside an OVERWRITE range) and renders the statement and task that
// replace the interval with those rows.
func (s *server) changeWork(r *http.Request, cat Catalog, scan *splits.Scan, req splits.Request, ch changes.Result, c changes.Change,
	dataSource string, subTasks int) (changeResponse, []string, error) {
	var iv *splits.TimeInterval
	if !c.All {
		iv = &splits.TimeInterval{Column: ch.TimeField.Name, Start: c.Start, End: c.End}
	}
	req.Interval = iv
	// Without a target snapshot the plan is empty: nothing to read.
	t, err := s.targetOf(req, dataSource, ch.TimeField.Name, "timeColumn", func() (splits.Plan, splitsResponse, error) {
		return s.answer(r, req, nil, func() (splits.Plan, error) { return cat.Planner.Cut(r.Context(), scan, iv) })
	})
	if err != nil {
		return changeResponse{}, nil, err
	}
	cr := changeResponse{Interval: c.String(), Splits: len(t.resp.Splits)}
	for _, reason := range c.Reasons {
		cr.Reasons = append(cr.Reasons, string(reason))
	}
	var warnings []string
	for _, w := range t.resp.Warnings {
		if !strings.HasPrefix(w, "no data file to read") {
			warnings = append(warnings, w)
		}
	}
	if len(t.resp.Splits) == 0 {
		// Druid's http inputSource refuses an empty uris list: read one
		// inline row that no interval keeps instead, so that the
		// interval is replaced with nothing.
		row, err := t.emptyRow(c)
		if err != nil {
			return changeResponse{}, nil, err
		}
		t.source = map[string]any{"type": "inline", "data": row}
		t.format = inputFormat{Type: "json"}
	}
	gran := string(ch.Granularity)
	query, err := changeStatement(t, c, gran)
	if err != nil {
		return changeResponse{}, nil, err
	}
	interval := ""
	if !c.All {
		interval = c.String()
	}
	cr.SQL = sqlTask{Query: query, Context: changesContext()}
	cr.Task = indexParallelTask(t, gran, subTasks, interval)
	return cr, warnings, nil
}

// changeStatement is the MSQ REPLACE of one change: OVERWRITE the
// interval (or ALL) with the target's rows, with a WHERE that keeps only
// rows inside the interval (or with a time) as a second guard behind the
// sidecar's own row filter.
func changeStatement(t specTarget, c changes.Change, gran string) (string, error) {
	if c.All {
		return msqStatementWhere("REPLACE INTO "+sqlIdent(t.dataSource)+" OVERWRITE ALL", t, gran,
			sqlIdent(t.timeField.Name)+" IS NOT NULL")
	}
	over, err := overwriteClause(c.String())
	if err != nil {
		return "", err
	}
	where := t.timeExpr() + " >= TIMESTAMP " + sqlString(sqlTime(c.Start)) +
		" AND " + t.timeExpr() + " < TIMESTAMP " + sqlString(sqlTime(c.End))
	return msqStatementWhere("REPLACE INTO "+sqlIdent(t.dataSource)+" "+over, t, gran, where)
}

// sqlTime is a Druid SQL TIMESTAMP literal's text.
func sqlTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") }

// emptyRow is one JSON row that the statements for c drop: its time lies
// just before the interval (thrown away by index_parallel, filtered out by
// the statement's WHERE), or is absent for ALL (a null __time, which the
// WHERE drops and index_parallel counts as unparseable).
func (t specTarget) emptyRow(c changes.Change) (string, error) {
	row := map[string]any{}
	if !c.All {
		before := c.Start.Add(-time.Millisecond)
		if t.timestampFormat() == "iso" {
			row[t.timeField.Name] = before.UTC().Format(time.RFC3339Nano)
		} else {
			row[t.timeField.Name] = before.UnixMilli()
		}
	}
	b, err := json.Marshal(row)
	if err != nil {
		return "", fmt.Errorf("encode inline row: %w", err)
	}
	return string(b) + "\n", nil
}
