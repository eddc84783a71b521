package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
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
// since it, submits each change's MSQ statement to Druid (POST
// /druid/v2/sql/task), polls the tasks (GET
// /druid/indexer/v1/task/{id}/status), and moves the checkpoint to the
// target snapshot only when every task succeeded. Before submitting, the
// intervals are written to the state file as pending; a failed, lost or
// interrupted run leaves them there and the next run re-ingests them, from
// whatever the table holds then. REPLACE is idempotent: redoing work is
// safe, skipping it never happens.
//
// The first sync of a datasource (no checkpoint, or one made for another
// table, time column or granularity) is an initial load: REPLACE … OVERWRITE
// ALL with the current snapshot, which also drops whatever the datasource
// held before. So is a sync whose checkpoint snapshot has expired from the
// table.

// syncer runs syncs.
type syncer struct {
	cfg    syncConfig
	log    *slog.Logger
	client *http.Client
	out    io.Writer
	now    func() time.Time
	// sleep waits d or until ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
}

func newSyncer(cfg syncConfig, log *slog.Logger, out io.Writer) *syncer {
	return &syncer{cfg: cfg, log: log, client: &http.Client{Timeout: cfg.HTTPTimeout}, out: out, now: time.Now, sleep: sleepCtx}
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
func (s *syncer) once(ctx context.Context) error {
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
		SQL      struct {
			Query   string         `json:"query"`
			Context map[string]any `json:"context"`
		} `json:"sql"`
	} `json:"changes"`
	Warnings []string `json:"warnings"`
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
	done := &checkpoint{Table: p.Table, Catalog: p.Catalog, TimeColumn: p.TimeColumn, Granularity: p.Granularity,
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
	ahead := &checkpoint{Table: p.Table, Catalog: p.Catalog, TimeColumn: p.TimeColumn, Granularity: p.Granularity,
		Updated: s.now().UTC().Format(time.RFC3339)}
	if cp.matches(p) {
		ahead.Loaded, ahead.SnapshotID = cp.Loaded, cp.SnapshotID
	}
	ahead.Pending = union(pending, intervals)
	st.DataSources[p.DataSource] = ahead
	if err := writeState(s.cfg.StateFile, st); err != nil {
		return err
	}

	ids := make([]string, 0, len(ans.Changes))
	for _, c := range ans.Changes {
		qctx := maps.Clone(c.SQL.Context)
		if qctx == nil {
			qctx = map[string]any{}
		}
		maps.Copy(qctx, p.Context)
		id, err := s.submit(ctx, c.SQL.Query, qctx)
		if err != nil {
			return fmt.Errorf("submit %s: %w", c.Interval, err)
		}
		s.log.Info("task submitted", slog.String("data_source", p.DataSource), slog.String("interval", c.Interval),
			slog.String("task_id", id))
		ids = append(ids, id)
	}
	if err := s.wait(ctx, ids); err != nil {
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

// print writes what a dry run would submit: one JSON object per statement.
func (s *syncer) print(p syncPair, ans changesAnswer) error {
	enc := json.NewEncoder(s.out)
	enc.SetEscapeHTML(false)
	for _, c := range ans.Changes {
		qctx := maps.Clone(c.SQL.Context)
		if qctx == nil {
			qctx = map[string]any{}
		}
		maps.Copy(qctx, p.Context)
		if err := enc.Encode(map[string]any{
			"dataSource": p.DataSource, "table": p.Table, "fromSnapshot": ans.FromSnapshot, "toSnapshot": ans.ToSnapshot,
			"interval": c.Interval, "reasons": c.Reasons, "query": c.SQL.Query, "context": qctx,
		}); err != nil {
			return fmt.Errorf("print statement: %w", err)
		}
	}
	return nil
}

// changes asks the sidecar for GET /changes.
func (s *syncer) changes(ctx context.Context, p syncPair, from *int64, include []string) (changesAnswer, error) {
	q := url.Values{"table": {p.Table}, "timeColumn": {p.TimeColumn}, "dataSource": {p.DataSource},
		"granularity": {p.Granularity}, "mode": {p.Mode}}
	if p.Catalog != "" {
		q.Set("catalog", p.Catalog)
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
	status, body, err := s.do(ctx, http.MethodGet, strings.TrimRight(s.cfg.SidecarURL, "/")+"/changes?"+q.Encode(), nil, s.cfg.SidecarAuth)
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

// submit posts an MSQ statement to Druid and returns its task id.
func (s *syncer) submit(ctx context.Context, query string, qctx map[string]any) (string, error) {
	body, err := json.Marshal(map[string]any{"query": query, "context": qctx})
	if err != nil {
		return "", fmt.Errorf("encode SQL task: %w", err)
	}
	status, resp, err := s.do(ctx, http.MethodPost, strings.TrimRight(s.cfg.DruidURL, "/")+"/druid/v2/sql/task", body, s.cfg.DruidAuth)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return "", fmt.Errorf("Druid answered %d: %s", status, strings.TrimSpace(string(resp)))
	}
	var ans struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(resp, &ans); err != nil || ans.TaskID == "" {
		return "", fmt.Errorf("Druid's answer holds no taskId: %s", strings.TrimSpace(string(resp)))
	}
	return ans.TaskID, nil
}

// wait polls the tasks until each has ended; every one must succeed. A
// task Druid no longer knows (404) is lost: it may have done its work or
// not, so it fails the sync, and its interval stays pending.
func (s *syncer) wait(ctx context.Context, ids []string) error {
	deadline := s.now().Add(s.cfg.TaskTimeout)
	running := append([]string(nil), ids...)
	var failed []string
	for {
		var still []string
		for _, id := range running {
			state, msg, err := s.status(ctx, id)
			switch {
			case err != nil:
				if ctx.Err() != nil {
					return fmt.Errorf("wait for task %s: %w", id, ctx.Err())
				}
				// A status request that failed says nothing of the
				// task: ask again.
				s.log.Warn("task status unknown", slog.String("task_id", id), slog.String("error", err.Error()))
				still = append(still, id)
			case state == "SUCCESS":
				s.log.Info("task succeeded", slog.String("task_id", id))
			case state == "FAILED" || state == "LOST":
				s.log.Error("task failed", slog.String("task_id", id), slog.String("state", state), slog.String("error", msg))
				failed = append(failed, fmt.Sprintf("%s %s (%s)", id, state, msg))
			default:
				still = append(still, id)
			}
		}
		running = still
		if len(running) == 0 {
			break
		}
		if !s.now().Before(deadline) {
			return fmt.Errorf("tasks %s did not end within --task-timeout %s", strings.Join(running, ", "), s.cfg.TaskTimeout)
		}
		if err := s.sleep(ctx, s.cfg.PollInterval); err != nil {
			return fmt.Errorf("wait for tasks %s: %w", strings.Join(running, ", "), err)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d tasks did not succeed: %s", len(failed), len(ids), strings.Join(failed, "; "))
	}
	return nil
}

// status is a task's state: SUCCESS, FAILED, RUNNING (or another state
// Druid reports while it runs), or LOST when Druid does not know it.
func (s *syncer) status(ctx context.Context, id string) (state, msg string, err error) {
	status, body, err := s.do(ctx, http.MethodGet,
		strings.TrimRight(s.cfg.DruidURL, "/")+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status", nil, s.cfg.DruidAuth)
	if err != nil {
		return "", "", err
	}
	if status == http.StatusNotFound || status == http.StatusBadRequest && strings.HasPrefix(string(body), "Cannot find any task with id") {
		// The Overlord's TaskResourceFilter refuses a task it does not
		// hold with 400.
		return "LOST", "Druid does not know the task", nil
	}
	if status != http.StatusOK {
		return "", "", fmt.Errorf("task status: Druid answered %d: %s", status, strings.TrimSpace(string(body)))
	}
	var ans struct {
		Status *struct {
			Status     string `json:"status"`
			StatusCode string `json:"statusCode"`
			ErrorMsg   string `json:"errorMsg"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.Status == nil {
		return "", "", fmt.Errorf("task status: no status in %s", strings.TrimSpace(string(body)))
	}
	state = ans.Status.StatusCode
	if state == "" {
		state = ans.Status.Status
	}
	return state, ans.Status.ErrorMsg, nil
}

// do sends one request and reads the answer, at most 64 MiB of it.
func (s *syncer) do(ctx context.Context, method, u string, body []byte, cred *credential) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if cred != nil {
		req.SetBasicAuth(cred.Username, cred.Password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("read answer of %s %s: %w", method, req.URL.Redacted(), err)
	}
	return resp.StatusCode, data, nil
}
