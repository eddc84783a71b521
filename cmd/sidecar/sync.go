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
	// probed says Druid's endpoints were checked.
	probed bool
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
		SQL      sqlBody  `json:"sql"`
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

// pair syncs one pair.
func (s *syncer) pair(ctx context.Context, p syncPair) error {
	st, err := readState(s.cfg.StateFile)
	if err != nil {
		return err
	}
	cp := st.DataSources[p.DataSource]
	var from *int64
	var pending []string
	switch {
	case cp.matches(p) && cp.Loaded && cp.SnapshotID != nil:
		from, pending = cp.SnapshotID, cp.Pending
	case cp != nil && !cp.matches(p):
		s.log.Info("checkpoint was made for another table, time column or granularity: full load",
			slog.String("data_source", p.DataSource))
	}
	ans, err := s.changes(ctx, p, from, pending)
	if errors.Is(err, errSnapshotGone) {
		s.log.Warn("checkpoint snapshot expired from the table: full load", slog.String("data_source", p.DataSource),
			slog.Int64("snapshot", *from))
		from, pending = nil, nil
		ans, err = s.changes(ctx, p, nil, nil)
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
		if cp.matches(p) && cp.Loaded && equalPtr(cp.SnapshotID, ans.ToSnapshot) {
			return nil
		}
		// Nothing Druid holds changed (a snapshot that touched no time
		// column value, say): the checkpoint moves on.
		st.DataSources[p.DataSource] = done
		return writeState(s.cfg.StateFile, st)
	}

	// Write-ahead: what is about to be submitted is pending until it all
	// succeeded, whatever happens to this process or to the tasks.
	ahead := &checkpoint{Table: p.Table, Catalog: p.Catalog, TimeColumn: p.TimeColumn, ConstantTime: p.ConstantTime, Granularity: p.Granularity,
		Updated: s.now().UTC().Format(time.RFC3339)}
	if cp.matches(p) {
		ahead.Loaded, ahead.SnapshotID = cp.Loaded, cp.SnapshotID
	}
	ahead.Pending = union(pending, intervals)
	st.DataSources[p.DataSource] = ahead
	if err := writeState(s.cfg.StateFile, st); err != nil {
		return err
	}

	if err := s.apply(ctx, p, ans.statements(p)); err != nil {
		return err
	}
	st.DataSources[p.DataSource] = done
	if err := writeState(s.cfg.StateFile, st); err != nil {
		return err
	}
	s.log.Info("checkpoint", slog.String("data_source", p.DataSource), slog.Any("snapshot", ptrValue(ans.ToSnapshot)))
	return nil
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

// changes asks the sidecar for GET /changes.
func (s *syncer) changes(ctx context.Context, p syncPair, from *int64, include []string) (changesAnswer, error) {
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
}

// statusRetries is how many status answers in a row that are no status
// sync takes before it gives up on a task: a task the Overlord does not
// know is then lost; a status that only a misrouted 404 answers stays
// unknown (the sync fails, and its work stays pending, as for a lost
// one).
const statusRetries = 5

// maxBackoff bounds the wait between two looks for a free task slot.
const maxBackoff = time.Minute

// apply submits the statements, at most --max-tasks Druid tasks in flight
// and none while Druid has no free task slot, and waits until every one
// has ended. Every one must succeed. After a failure nothing more is
// submitted (its work and the rest stay pending for the next run), and
// what runs is waited for, so that the next run starts with its slots
// free.
func (s *syncer) apply(ctx context.Context, p syncPair, stmts []statement) error {
	var running []*flight
	inFlight, next := 0, 0
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
			id, err := s.druid.submit(ctx, st.SQL.Query, st.SQL.Context)
			if err != nil {
				failed = append(failed, fmt.Sprintf("submit %s: %v", strings.Join(st.Intervals, " "), err))
				next++ // counted in failed, not as a statement not submitted
				break
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
			}
			inFlight -= f.need
		}
		running = still
	}
	if len(failed) > 0 {
		if skipped := len(stmts) - next; skipped > 0 {
			failed = append(failed, fmt.Sprintf("%d statements not submitted", skipped))
		}
		return fmt.Errorf("%d of %d statements did not succeed: %s", len(failed), len(stmts), strings.Join(failed, "; "))
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
