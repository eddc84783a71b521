package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/druid"
)

// `sidecar sync` keeps Druid datasources in step with Iceberg tables.
//
// It plans nothing itself: it asks a running sidecar (--sidecar) for GET
// /changes, so the row URIs handed to Druid are that sidecar's (its
// --public-url: start it with the name Druid's workers reach it by), signed
// with its keys, and sync needs no catalog credentials. For each pair it
// reads the checkpoint (the snapshot Druid holds), asks for the changes
// since it, submits the changes' MSQ statements, merged into few (POST
// /druid/v2/sql/task on a Broker), polls the tasks (GET
// /druid/indexer/v1/task/{id}/status on the Overlord), and moves the
// checkpoint to the target snapshot only when every task succeeded. Before
// submitting, the intervals are written to the state file as pending; a
// failed, lost or interrupted run leaves them there and the next run
// re-ingests them, from whatever the table holds then. REPLACE is
// idempotent: redoing work is safe, skipping it never happens.
//
// The statements are paced: at most --max-tasks Druid tasks in flight,
// each statement counting its maxNumTasks, and none submitted while Druid
// has no free task slot (its worker capacity, or a task of sync's that
// waits for a slot). MSQ controllers that take every slot leave their
// workers none, and fail with TaskStartTimeout; a burst of statements
// does exactly that.
//
// The first sync of a datasource (no checkpoint, or one made for another
// table, time column or granularity) is an initial load: REPLACE … OVERWRITE
// ALL with the current snapshot, which also drops whatever the datasource
// held before. So is a sync whose checkpoint snapshot has expired from the
// table.

// syncer runs syncs.
type syncer struct {
	cfg syncConfig
	log *slog.Logger
	// client asks the sidecar; druid talks to Druid.
	client *http.Client
	druid  *druidAPI
	out    io.Writer
	now    func() time.Time
	// sleep waits d or until ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
	// probed says Druid's endpoints were checked; emptyReplace that
	// Druid empties an interval with a REPLACE that reads no row (Druid
	// 29, apache/druid#15495).
	probed, emptyReplace bool
	// submitted, when set, is called after each statement Druid took.
	submitted func(taskID string)
}

func newSyncer(cfg syncConfig, log *slog.Logger, out io.Writer) *syncer {
	return &syncer{cfg: cfg, log: log, client: &http.Client{Timeout: cfg.HTTPTimeout}, druid: newDruidAPI(cfg, log),
		out: out, now: time.Now, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// runSync is the sync command.
func runSync(ctx context.Context, cfg syncConfig, logOut, out io.Writer) error {
	return newSyncer(cfg, newLogger(cfg.LogFormat, logOut), out).run(ctx)
}

// run syncs once (--once, --dry-run), or in a loop until ctx ends.
func (s *syncer) run(ctx context.Context) error {
	for {
		err := s.once(ctx)
		if s.cfg.Once || s.cfg.DryRun {
			return err
		}
		if err != nil {
			// Logged per pair; the next round redoes the work.
			s.log.Warn("sync round failed", slog.String("error", err.Error()))
		}
		if err := s.sleep(ctx, s.cfg.Interval); err != nil {
			return nil
		}
	}
}

// once syncs every pair; a pair that fails does not stop the others.
// Druid's endpoints are checked first, once.
func (s *syncer) once(ctx context.Context) error {
	if !s.cfg.DryRun && !s.probed {
		if err := s.druid.probe(ctx); err != nil {
			return err
		}
		v := s.druid.version(ctx)
		s.emptyReplace = druid.AtLeast(v, druid.VersionEmptyReplace)
		if !s.emptyReplace {
			s.log.Info("druid before "+druid.VersionEmptyReplace+" (or of a version it does not tell): an interval that lost its "+
				"last row is dropped through the Coordinator", slog.String("druid_version", v))
		}
		s.probed = true
	}
	var errs []error
	for _, p := range s.cfg.Pairs {
		if err := s.pair(ctx, p); err != nil {
			s.log.Error("sync failed", slog.String("data_source", p.DataSource), slog.String("table", p.Table),
				slog.String("error", err.Error()))
			errs = append(errs, fmt.Errorf("%s ← %s: %w", p.DataSource, p.Table, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// changesAnswer is the part of GET /changes' answer sync reads.
type changesAnswer struct {
	FromSnapshot *int64 `json:"fromSnapshot"`
	ToSnapshot   *int64 `json:"toSnapshot"`
	Changes      []struct {
		Interval string   `json:"interval"`
		Reasons  []string `json:"reasons"`
		// Splits is 0 when the interval has no row at the target.
		Splits int     `json:"splits"`
		SQL    sqlBody `json:"sql"`
	} `json:"changes"`
	// Statements are the changes' REPLACEs merged into few (a sidecar of
	// an older release answers none: then each change's is one).
	Statements []statement `json:"statements"`
	Warnings   []string    `json:"warnings"`
}

// sqlBody is the body of POST /druid/v2/sql/task.
type sqlBody struct {
	Query   string         `json:"query"`
	Context map[string]any `json:"context"`
}

// statement is one REPLACE of the intervals of one or more changes.
type statement struct {
	Intervals []string `json:"intervals"`
	SQL       sqlBody  `json:"sql"`
	// queryID is the sqlQueryId sync submits it under; empty says the
	// intervals have no row and are dropped instead.
	queryID string
}

// statements are the answer's statements, each with the pair's context
// merged over its own.
func (a changesAnswer) statements(p syncPair) []statement {
	out := slices.Clone(a.Statements)
	if len(out) == 0 {
		for _, c := range a.Changes {
			out = append(out, statement{Intervals: []string{c.Interval}, SQL: c.SQL})
		}
	}
	for i := range out {
		qctx := maps.Clone(out[i].SQL.Context)
		if qctx == nil {
			qctx = map[string]any{}
		}
		maps.Copy(qctx, p.Context)
		out[i].SQL.Context = qctx
	}
	return out
}

// errSnapshotGone is a checkpoint snapshot the table no longer has.
var errSnapshotGone = errors.New("the checkpoint snapshot is gone from the table")

// pair syncs one pair: it first finishes the work a killed sync left
// with task ids, then brings Druid to the table's current snapshot.
func (s *syncer) pair(ctx context.Context, p syncPair) error {
	st, err := readState(s.cfg.StateFile)
	if err != nil {
		return err
	}
	cp := st.DataSources[p.DataSource]
	if cp.matches(p) && len(cp.Tasks) > 0 && !s.cfg.DryRun {
		if err := s.resume(ctx, p, st); err != nil {
			return err
		}
		cp = st.DataSources[p.DataSource]
	}
	var from *int64
	var pending []string
	switch {
	case cp.matches(p) && cp.Loaded && cp.SnapshotID != nil:
		from, pending = cp.SnapshotID, cp.Pending
	case cp != nil && !cp.matches(p):
		s.log.Info("checkpoint was made for another table, time column or granularity: full load",
			slog.String("data_source", p.DataSource))
	}
	ans, err := s.changes(ctx, p, from, nil, pending)
	if errors.Is(err, errSnapshotGone) {
		s.log.Warn("checkpoint snapshot expired from the table: full load", slog.String("data_source", p.DataSource),
			slog.Int64("snapshot", *from))
		from, pending = nil, nil
		ans, err = s.changes(ctx, p, nil, nil, nil)
	}
	if err != nil {
		return err
	}
	for _, w := range ans.Warnings {
		s.log.Warn("sidecar warning", slog.String("data_source", p.DataSource), slog.String("warning", w))
	}
	done := &checkpoint{Table: p.Table, Catalog: p.Catalog, TimeColumn: p.TimeColumn, ConstantTime: p.ConstantTime, Granularity: p.Granularity,
		Loaded: true, SnapshotID: ans.ToSnapshot, Updated: s.now().UTC().Format(time.RFC3339)}
	var intervals []string
	for _, c := range ans.Changes {
		intervals = append(intervals, c.Interval)
	}
	s.log.Info("changes", slog.String("data_source", p.DataSource), slog.String("table", p.Table),
		slog.Any("from_snapshot", ptrValue(from)), slog.Any("to_snapshot", ptrValue(ans.ToSnapshot)),
		slog.String("intervals", strings.Join(intervals, " ")))
	if s.cfg.DryRun {
		return s.print(p, ans)
	}
	if from == nil && cp.matches(p) && cp.Loaded && cp.SnapshotID == nil && ans.ToSnapshot == nil && len(cp.Pending) == 0 {
		// Loaded while the table had no snapshot, and it still has none.
		return nil
	}
	if len(ans.Changes) == 0 {
		if cp.matches(p) && cp.Loaded && equalPtr(cp.SnapshotID, ans.ToSnapshot) && len(cp.Pending) == 0 {
			return nil
		}
		// Nothing Druid holds changed (a snapshot that touched no time
		// column value, say): the checkpoint moves on.
		st.DataSources[p.DataSource] = done
		return writeState(s.cfg.StateFile, st)
	}

	// Write-ahead: what is about to be submitted is pending until it all
	// succeeded, whatever happens to this process or to the tasks, with
	// the ids its tasks will have.
	ahead := &checkpoint{Table: p.Table, Catalog: p.Catalog, TimeColumn: p.TimeColumn, ConstantTime: p.ConstantTime, Granularity: p.Granularity,
		Updated: s.now().UTC().Format(time.RFC3339)}
	if cp.matches(p) {
		ahead.Loaded, ahead.SnapshotID = cp.Loaded, cp.SnapshotID
	}
	ahead.Pending = union(pending, intervals)
	stmts := s.plan(p, ans, ahead)
	st.DataSources[p.DataSource] = ahead
	if err := writeState(s.cfg.StateFile, st); err != nil {
		return err
	}
	if err := s.execute(ctx, p, st, stmts, nil); err != nil {
		return err
	}
	st.DataSources[p.DataSource] = done
	if err := writeState(s.cfg.StateFile, st); err != nil {
		return err
	}
	s.log.Info("checkpoint", slog.String("data_source", p.DataSource), slog.Any("snapshot", ptrValue(ans.ToSnapshot)))
	return nil
}

// plan gives each statement of ans the sqlQueryId it is submitted under,
// and records its task id for each of its intervals in cp, whose Target
// it sets; on a Druid that cannot empty an interval with a REPLACE, a
// statement whose intervals all have no row gets none: its intervals are
// dropped.
func (s *syncer) plan(p syncPair, ans changesAnswer, cp *checkpoint) []statement {
	empty := map[string]bool{}
	for _, c := range ans.Changes {
		empty[c.Interval] = c.Splits == 0
	}
	stmts := ans.statements(p)
	cp.Target, cp.Tasks = ans.ToSnapshot, map[string][]string{}
	for i := range stmts {
		if !s.emptyReplace && !slices.Contains(stmts[i].Intervals, "ALL") &&
			!slices.ContainsFunc(stmts[i].Intervals, func(iv string) bool { return !empty[iv] }) {
			continue
		}
		stmts[i].queryID = newQueryID()
		for _, iv := range stmts[i].Intervals {
			cp.Tasks[iv] = append(cp.Tasks[iv], taskID(stmts[i].queryID))
		}
	}
	return stmts
}

// execute drops the intervals of the statements plan gave no id (Druid
// before 29 fails a REPLACE that reads no row, InsertCannotBeEmpty, and
// leaves the interval's segments: the Coordinator marks them unused),
// then submits the others and waits for them and for the tasks adopted.
// A task id Druid answers other than the one recorded is recorded too.
func (s *syncer) execute(ctx context.Context, p syncPair, st syncState, stmts []statement, adopted []*flight) error {
	var submit []statement
	for _, one := range stmts {
		if one.queryID != "" {
			submit = append(submit, one)
			continue
		}
		if err := s.drop(ctx, p, one.Intervals); err != nil {
			return err
		}
	}
	cp := st.DataSources[p.DataSource]
	return s.apply(ctx, p, submit, adopted, func(one statement, id string) error {
		if id == taskID(one.queryID) {
			return nil
		}
		for _, iv := range one.Intervals {
			cp.Tasks[iv] = append(cp.Tasks[iv], id)
		}
		return writeState(s.cfg.StateFile, st)
	})
}

// drop has the Coordinator mark the segments of the intervals unused:
// what a REPLACE that reads no row does from Druid 29.
func (s *syncer) drop(ctx context.Context, p syncPair, intervals []string) error {
	for _, iv := range intervals {
		if err := s.druid.markUnused(ctx, p.DataSource, iv); err != nil {
			return err
		}
		s.log.Info("interval emptied: segments marked unused", slog.String("data_source", p.DataSource), slog.String("interval", iv))
	}
	return nil
}

// emptyInsert says a task failed as MSQ fails a statement that wrote no
// row: InsertCannotBeEmptyFault, on every Druid before 29 (and from 29
// with failOnEmptyInsert true). The statement read every row the target
// snapshot has in its intervals and found none: they are empty.
func emptyInsert(st taskStatus) bool {
	return st.State == "FAILED" && strings.HasPrefix(st.Msg, "InsertCannotBeEmpty")
}

// resume finishes the work of a sync that ended with tasks submitted
// (killed, timed out, or failed): per pending interval it asks the
// Overlord how the latest task recorded for it ended. An interval whose
// task succeeded is done, one whose task still runs is waited for
// (counted against --max-tasks), and the others (failed, or unknown to
// the Overlord) are ingested again from the same target snapshot. When
// all succeeded the checkpoint is the target, and pair goes on from
// there. When no task succeeded or runs, or the target snapshot is
// gone, resume leaves the pending work to pair, which redoes it whole.
func (s *syncer) resume(ctx context.Context, p syncPair, st syncState) error {
	cp := st.DataSources[p.DataSource]
	states := map[string]string{}
	var redo, emptied []string
	var adopted []*flight
	need := maxNumTasks(p.Context)
	for _, iv := range cp.Pending {
		ids := cp.Tasks[iv]
		if len(ids) == 0 {
			redo = append(redo, iv)
			continue
		}
		id := ids[len(ids)-1]
		state, seen := states[id]
		if !seen {
			ts, err := s.druid.status(ctx, id)
			switch {
			case errors.Is(err, errUnknownTask):
				state = "UNKNOWN" // never submitted, or forgotten: redone
			case err != nil:
				return fmt.Errorf("ask how task %s of the last sync ended: %w", id, err)
			case emptyInsert(ts):
				state = "EMPTY"
			default:
				state = ts.State
			}
			states[id] = state
			s.log.Info("task of the last sync", slog.String("data_source", p.DataSource), slog.String("task_id", id),
				slog.String("state", state))
			if state == "RUNNING" {
				adopted = append(adopted, &flight{id: id, need: need, submitted: s.now(), waiting: ts.Runner == "PENDING"})
			}
		}
		switch state {
		case "SUCCESS":
		case "EMPTY":
			emptied = append(emptied, iv)
		case "RUNNING":
			f := adopted[slices.IndexFunc(adopted, func(f *flight) bool { return f.id == id })]
			f.intervals = append(f.intervals, iv)
		default:
			redo = append(redo, iv)
		}
	}
	if len(redo) == len(cp.Pending) {
		return nil
	}
	if cp.Target == nil {
		// The target is a table without a snapshot: what runs is waited
		// for, and pair redoes the rest.
		return s.apply(ctx, p, nil, adopted, nil)
	}
	stmts := []statement{{Intervals: emptied}} // no queryID: dropped
	next := *cp
	next.Tasks = maps.Clone(cp.Tasks)
	if len(redo) > 0 {
		ans, err := s.changes(ctx, p, cp.Target, cp.Target, redo)
		if errors.Is(err, errSnapshotGone) {
			s.log.Warn("the snapshot the last sync ingested is gone from the table: its pending work is redone whole",
				slog.String("data_source", p.DataSource), slog.Int64("snapshot", *cp.Target))
			return s.apply(ctx, p, nil, adopted, nil)
		}
		if err != nil {
			return err
		}
		ids := next.Tasks
		stmts = append(stmts, s.plan(p, ans, &next)...)
		for iv, add := range next.Tasks {
			ids[iv] = append(ids[iv], add...)
		}
		next.Tasks, next.Target = ids, cp.Target
	}
	next.Updated = s.now().UTC().Format(time.RFC3339)
	st.DataSources[p.DataSource] = &next
	if err := writeState(s.cfg.StateFile, st); err != nil {
		return err
	}
	s.log.Info("resuming the last sync", slog.String("data_source", p.DataSource), slog.Any("snapshot", ptrValue(cp.Target)),
		slog.Int("running", len(adopted)), slog.String("emptied", strings.Join(emptied, " ")), slog.String("redone", strings.Join(redo, " ")))
	if err := s.execute(ctx, p, st, stmts, adopted); err != nil {
		return err
	}
	st.DataSources[p.DataSource] = &checkpoint{Table: p.Table, Catalog: p.Catalog, TimeColumn: p.TimeColumn, ConstantTime: p.ConstantTime,
		Granularity: p.Granularity, Loaded: true, SnapshotID: cp.Target, Updated: s.now().UTC().Format(time.RFC3339)}
	return writeState(s.cfg.StateFile, st)
}

func ptrValue(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func equalPtr(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

// print writes what a dry run would submit: one JSON object per
// statement.
func (s *syncer) print(p syncPair, ans changesAnswer) error {
	reasons := map[string][]string{}
	for _, c := range ans.Changes {
		reasons[c.Interval] = c.Reasons
	}
	enc := json.NewEncoder(s.out)
	enc.SetEscapeHTML(false)
	for _, st := range ans.statements(p) {
		var why []string
		for _, iv := range st.Intervals {
			for _, r := range reasons[iv] {
				if !slices.Contains(why, r) {
					why = append(why, r)
				}
			}
		}
		if err := enc.Encode(map[string]any{
			"dataSource": p.DataSource, "table": p.Table, "fromSnapshot": ans.FromSnapshot, "toSnapshot": ans.ToSnapshot,
			"intervals": st.Intervals, "reasons": why, "query": st.SQL.Query, "context": st.SQL.Context,
		}); err != nil {
			return fmt.Errorf("print statement: %w", err)
		}
	}
	return nil
}

// changes asks the sidecar for GET /changes from snapshot from (nil: an
// initial load) to snapshot to (nil: the current one).
func (s *syncer) changes(ctx context.Context, p syncPair, from, to *int64, include []string) (changesAnswer, error) {
	q := url.Values{"table": {p.Table}, "dataSource": {p.DataSource}, "granularity": {p.Granularity}, "mode": {p.Mode}}
	if p.ConstantTime != "" {
		q.Set("constantTime", p.ConstantTime)
	} else {
		q.Set("timeColumn", p.TimeColumn)
	}
	if p.Catalog != "" {
		q.Set("catalog", p.Catalog)
	}
	if len(p.ClusteredBy) > 0 {
		q.Set("clusteredBy", strings.Join(p.ClusteredBy, ","))
	}
	if from != nil {
		q.Set("fromSnapshot", fmt.Sprint(*from))
	}
	if to != nil {
		q.Set("toSnapshot", fmt.Sprint(*to))
	}
	if len(include) > 0 {
		// Pending work of a large change can be more intervals than
		// /changes takes: asked as fewer, wider ones.
		q.Set("include", strings.Join(coalesce(include, maxInclude), ","))
	}
	var ans changesAnswer
	status, body, _, err := send(ctx, s.client, http.MethodGet, strings.TrimRight(s.cfg.SidecarURL, "/")+"/changes?"+q.Encode(), nil, s.cfg.SidecarAuth)
	if err != nil {
		return ans, fmt.Errorf("ask the sidecar for changes: %w", err)
	}
	if status != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(body, &e)
		if status == http.StatusNotFound && e.Error.Code == "snapshot_not_found" && from != nil {
			return ans, fmt.Errorf("%w: %s", errSnapshotGone, e.Error.Message)
		}
		return ans, fmt.Errorf("ask the sidecar for changes: %d %s", status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return ans, fmt.Errorf("read the sidecar's changes: %w", err)
	}
	return ans, nil
}

// flight is a statement Druid runs.
type flight struct {
	id        string
	intervals []string
	need      int
	submitted time.Time
	// unknown and misrouted count the status answers in a row that were
	// no status: the Overlord not knowing the task, a 404 not its own.
	unknown, misrouted int
	// waiting says the task waits for a task slot.
	waiting bool
	// empty says the task failed for having no row to write.
	empty bool
}

// statusRetries is how many status answers in a row that are no status
// sync takes before it gives up on a task: a task the Overlord does not
// know is then lost; a status that only a misrouted 404 answers stays
// unknown (the sync fails, and its work stays pending, as for a lost
// one).
const statusRetries = 5

// maxBackoff bounds the wait between two looks for a free task slot.
const maxBackoff = time.Minute

// apply submits the statements, each under its queryID, at most
// --max-tasks Druid tasks in flight (the adopted ones, running already,
// counted) and none while Druid has no free task slot, and waits until
// every one has ended. Every one must succeed. After a failure nothing
// more is submitted (its work and the rest stay pending for the next
// run), and what runs is waited for, so that the next run starts with its
// slots free. took, when set, is told each statement's task id.
func (s *syncer) apply(ctx context.Context, p syncPair, stmts []statement, adopted []*flight,
	took func(statement, string) error) error {
	running := slices.Clone(adopted)
	inFlight, next := 0, 0
	for _, f := range adopted {
		inFlight += f.need
	}
	var failed []string
	backoff := s.cfg.PollInterval
	var blockedSince time.Time
	for {
		blocked := false
		for next < len(stmts) && len(failed) == 0 {
			st := stmts[next]
			need := maxNumTasks(st.SQL.Context)
			if need > s.cfg.MaxTasks {
				failed = append(failed, fmt.Sprintf("the statement of %s takes maxNumTasks %d, more than --max-tasks %d",
					strings.Join(st.Intervals, " "), need, s.cfg.MaxTasks))
				next++ // counted in failed, not as a statement not submitted
				break
			}
			if inFlight+need > s.cfg.MaxTasks || slices.ContainsFunc(running, func(f *flight) bool { return f.waiting }) {
				break // a slot of sync's own frees first
			}
			if free, known := s.druid.freeSlots(ctx); known && free < need {
				blocked = true
				break
			}
			id, err := s.druid.submit(ctx, st.SQL.Query, st.SQL.Context, st.queryID)
			if err != nil {
				failed = append(failed, fmt.Sprintf("submit %s: %v", strings.Join(st.Intervals, " "), err))
				next++ // counted in failed, not as a statement not submitted
				break
			}
			if took != nil {
				if err := took(st, id); err != nil {
					return err
				}
			}
			if s.submitted != nil {
				s.submitted(id)
			}
			s.log.Info("task submitted", slog.String("data_source", p.DataSource), slog.String("intervals", strings.Join(st.Intervals, " ")),
				slog.String("task_id", id), slog.Int("tasks_in_flight", inFlight+need))
			running = append(running, &flight{id: id, intervals: st.Intervals, need: need, submitted: s.now()})
			inFlight += need
			next++
			blockedSince, backoff = time.Time{}, s.cfg.PollInterval
		}
		if len(running) == 0 && (next == len(stmts) || len(failed) > 0) {
			break
		}
		delay := s.cfg.PollInterval
		if blocked && len(running) == 0 {
			// Druid has no free slot, and none of sync's will free one.
			if blockedSince.IsZero() {
				blockedSince = s.now()
				s.log.Info("no free task slot in Druid: waiting", slog.String("data_source", p.DataSource))
			}
			if !s.now().Before(blockedSince.Add(s.cfg.TaskTimeout)) {
				failed = append(failed, fmt.Sprintf("Druid had no free task slot for --task-timeout %s", s.cfg.TaskTimeout))
				break
			}
			delay, backoff = backoff, min(2*backoff, max(maxBackoff, s.cfg.PollInterval))
		}
		if err := s.sleep(ctx, delay); err != nil {
			return fmt.Errorf("wait for tasks %s: %w", ids(running), err)
		}
		still := running[:0]
		for _, f := range running {
			done, why := s.poll(ctx, f)
			if ctx.Err() != nil {
				return fmt.Errorf("wait for task %s: %w", f.id, ctx.Err())
			}
			switch {
			case !done:
				still = append(still, f)
				continue
			case why != "":
				failed = append(failed, why)
			case f.empty:
				if err := s.drop(ctx, p, f.intervals); err != nil {
					failed = append(failed, err.Error())
				}
			}
			inFlight -= f.need
		}
		running = still
	}
	if len(failed) > 0 {
		if skipped := len(stmts) - next; skipped > 0 {
			failed = append(failed, fmt.Sprintf("%d statements not submitted", skipped))
		}
		return fmt.Errorf("%d of %d statements did not succeed: %s", len(failed), len(stmts)+len(adopted), strings.Join(failed, "; "))
	}
	return nil
}

// poll asks for a flight's status: done says it ended (or sync gave up on
// it), why says how it failed.
func (s *syncer) poll(ctx context.Context, f *flight) (done bool, why string) {
	st, err := s.druid.status(ctx, f.id)
	switch {
	case errors.Is(err, errUnknownTask):
		// Never lost on one answer: an Overlord that just took over, a
		// status asked early; ask again.
		f.unknown++
		s.log.Warn("druid does not know the task (yet)", slog.String("task_id", f.id), slog.Int("times", f.unknown))
		if f.unknown >= statusRetries {
			s.log.Error("task lost", slog.String("task_id", f.id))
			return true, fmt.Sprintf("%s LOST (Druid does not know the task)", f.id)
		}
		return false, ""
	case errors.Is(err, errNotOverlord):
		f.misrouted++
		s.log.Warn("task status answered by something else than the Overlord", slog.String("task_id", f.id), slog.String("error", err.Error()))
		if f.misrouted >= statusRetries {
			return true, fmt.Sprintf("%s unknown: %v; --druid-overlord must be an Overlord, or a Router with "+
				"druid.router.managementProxy.enabled=true", f.id, err)
		}
		return false, ""
	case errors.Is(err, errRedirect):
		s.log.Error("task status unknown", slog.String("task_id", f.id), slog.String("error", err.Error()))
		return true, fmt.Sprintf("%s unknown: %v", f.id, err)
	case err != nil:
		// A status request that failed says nothing of the task: ask
		// again.
		s.log.Warn("task status unknown", slog.String("task_id", f.id), slog.String("error", err.Error()))
	default:
		f.unknown, f.misrouted = 0, 0
		f.waiting = st.Runner == "PENDING"
		switch st.State {
		case "SUCCESS":
			s.log.Info("task succeeded", slog.String("task_id", f.id), slog.String("intervals", strings.Join(f.intervals, " ")))
			return true, ""
		case "FAILED":
			if emptyInsert(st) {
				s.log.Info("task wrote no row: its intervals are empty", slog.String("task_id", f.id),
					slog.String("intervals", strings.Join(f.intervals, " ")))
				f.empty = true
				return true, ""
			}
			s.log.Error("task failed", slog.String("task_id", f.id), slog.String("error", st.Msg))
			return true, fmt.Sprintf("%s FAILED (%s)", f.id, st.Msg)
		}
	}
	if !s.now().Before(f.submitted.Add(s.cfg.TaskTimeout)) {
		return true, fmt.Sprintf("%s did not end within --task-timeout %s", f.id, s.cfg.TaskTimeout)
	}
	return false, ""
}

func ids(fs []*flight) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.id)
	}
	return strings.Join(out, ", ")
}
