package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// druidTarget is the goal of the Druid end-to-end measurement: the
// sidecar's generated task against Druid reading the same rows from local
// files, in task wall time and in the Indexer's CPU time.
const druidTarget = 1.1

// druidCluster is the Druid the end-to-end measurement ingests into:
// tools/druid/druid.sh's, either already running (DRUID_OVERLORD) or
// started here.
type druidCluster struct {
	overlord string
	client   *http.Client
	// indexer is the pid of the Indexer, which runs every task as threads
	// of its own JVM: its CPU time is what the tasks cost Druid.
	indexer int
	// script is tools/druid/druid.sh, and started says that this process
	// started the cluster and stops it.
	script  string
	started bool
}

// druidRun is one ingestion measured: the task's wall time from submit to
// success, Druid's own duration of it, the Indexer's and the sidecar's CPU
// time meanwhile, and the rows Druid says it ingested.
type druidRun struct {
	wall, duration, indexerCPU, sidecarCPU time.Duration
	processed                              int64
}

// druidVariant is one way of ingesting the main table: a task and what
// tells it apart.
type druidVariant struct {
	name string
	// params are added to /druid/task's query (compression, ...); nil
	// for the raw-file path, whose task is the generated one reading the
	// cached NDJSON files instead.
	params url.Values
	raw    bool
}

// druidVariants are what each round ingests: the raw-file path first,
// then the generated task with each of compressions (none, gzip, zstd:
// /druid/task's compression parameter).
func druidVariants(compressions string) ([]druidVariant, error) {
	vs := []druidVariant{{name: "raw files (local NDJSON)", raw: true}}
	for _, c := range strings.Split(compressions, ",") {
		switch c = strings.TrimSpace(c); c {
		case "none", "gzip", "zstd":
			vs = append(vs, druidVariant{name: "sidecar, compression=" + c, params: url.Values{"compression": {c}}})
		default:
			return nil, fmt.Errorf("-druid-compressions %q: want a comma-separated list of none, gzip and zstd", compressions)
		}
	}
	if vs[1].params.Get("compression") != "none" {
		return nil, fmt.Errorf("-druid-compressions %q: want none first, the default the target holds", compressions)
	}
	return vs, nil
}

// druidEndToEnd ingests the main table into a real Druid through the
// sidecar's generated /druid/task, and the same live rows as NDJSON files
// from local disk (Druid's local inputSource, the rest of the task the
// same), in interleaved rounds, and reports the ratios of the two in task
// wall time and in the Indexer's CPU time.
func (b *bench) druidEndToEnd(ctx context.Context, granularity, compressions string) (err error) {
	variants, err := druidVariants(compressions)
	if err != nil {
		return err
	}
	d, err := b.druid(ctx)
	if err != nil {
		return err
	}
	defer d.stop()
	wh := filepath.Join(b.dir, fmt.Sprintf("main-%d", b.rows))
	tbl, err := b.table(ctx, wh, b.rows, 8, 0.05, 0.01)
	if err != nil {
		return err
	}
	srv, err := b.serve(ctx, wh)
	if err != nil {
		return err
	}
	defer srv.stop()
	run := strconv.FormatInt(time.Now().Unix(), 10)
	taskQuery := func(ds string, extra url.Values) url.Values {
		q := url.Values{"table": {"bench.orders"}, "mode": {"rows"}, "dataSource": {ds},
			"timestampColumn": {"event_ts"}, "segmentGranularity": {granularity}}
		maps.Copy(q, extra)
		return q
	}
	probe, err := srv.druidTask(taskQuery("bench_probe", nil))
	if err != nil {
		return err
	}
	files, live, err := b.ndjsonFiles(tbl.CurrentSnapshot().SnapshotID, probe)
	if err != nil {
		return err
	}
	if pos, eq := tablegen.BenchDeletes(b.rows, 0.05, 0.01); live != int64(b.rows)-pos-eq {
		return fmt.Errorf("the sidecar serves %d rows of the main table, which has %d live rows", live, int64(b.rows)-pos-eq)
	}
	fmt.Fprintf(b.out, "Druid end to end: %d live rows of the %d-row main table, %d splits, segmentGranularity %s; "+
		"raw-file path: the same rows as %d NDJSON files in %s\n",
		live, b.rows, len(uris(probe)), granularity, len(uris(probe)), files)

	runs := make([][]druidRun, len(variants))
	var datasources []string
	// The datasources go when the measurement ends, also when it fails.
	defer func() { err = errors.Join(err, d.kill(ctx, datasources)) }()
	if d.started {
		// A freshly started Indexer compiles its code during its first
		// task, which would cost whichever variant ran first.
		ds := "bench_" + run + "_warmup"
		datasources = append(datasources, ds)
		task, err := srv.druidTask(taskQuery(ds, nil))
		if err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "a first task, not measured, warms up the Druid just started…")
		if _, err := d.ingest(ctx, task, srv); err != nil {
			return fmt.Errorf("the warm-up task: %w", err)
		}
		if err := d.markUnused(ds); err != nil {
			return err
		}
	}
	for round := range b.rounds {
		// Each round starts at another variant, so none always runs
		// first (or right after the other's segments were pushed).
		for k := range variants {
			i := (round + k) % len(variants)
			v := variants[i]
			ds := fmt.Sprintf("bench_%s_%d_%d", run, round, i)
			datasources = append(datasources, ds)
			var task map[string]any
			if v.raw {
				if task, err = srv.druidTask(taskQuery(ds, nil)); err == nil {
					err = localTask(task, files)
				}
			} else {
				task, err = srv.druidTask(taskQuery(ds, v.params))
			}
			if err != nil {
				return err
			}
			r, err := d.ingest(ctx, task, srv)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if r.processed != live {
				return fmt.Errorf("%s: Druid ingested %d rows, the table has %d live rows", v.name, r.processed, live)
			}
			// Unused at once, so that the Historical does not load the
			// segments while the next task runs.
			if err := d.markUnused(ds); err != nil {
				return err
			}
			runs[i] = append(runs[i], r)
			fmt.Fprintf(b.out, "round %d (load average %s): %-26s wall %6.1f s, Druid's duration %6.1f s, Indexer CPU %6.1f s, sidecar CPU %5.1f s\n",
				round+1, loadAverage(), v.name, r.wall.Seconds(), r.duration.Seconds(), r.indexerCPU.Seconds(), r.sidecarCPU.Seconds())
		}
	}
	return b.druidReport(variants, runs, live)
}

// druidReport prints each variant's figures and its ratios to the raw-file
// path, round by round (median, min, max), and adds the target: the
// generated task as it comes (compression none, the default) within
// druidTarget of the raw-file path in wall time and in Indexer CPU.
func (b *bench) druidReport(variants []druidVariant, runs [][]druidRun, live int64) error {
	fmt.Fprintln(b.out)
	w := tabwriter.NewWriter(b.out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "variant\twall, submit to success (median)\tDruid's duration (median)\tIndexer CPU/row\tsidecar CPU/row\t"+
		"wall ratio (median, min–max)\tIndexer CPU ratio (median, min–max)\t")
	raw := runs[0]
	perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(live) }
	for i, v := range variants {
		rs := runs[i]
		wall := each(rs, func(k int, r druidRun) float64 { return r.wall.Seconds() / raw[k].wall.Seconds() })
		cpu := each(rs, func(k int, r druidRun) float64 { return float64(r.indexerCPU) / float64(raw[k].indexerCPU) })
		medWall, medCPU := median(slices.Clone(wall)), median(slices.Clone(cpu))
		secs := median(each(rs, func(_ int, r druidRun) float64 { return r.wall.Seconds() }))
		indexer := median(each(rs, func(_ int, r druidRun) float64 { return perRow(r.indexerCPU) }))
		fmt.Fprintf(w, "%s\t%.1f s\t%.1f s\t%.0f ns\t%.0f ns\t%.2f (%.2f–%.2f)\t%.2f (%.2f–%.2f)\t\n", v.name, secs,
			median(each(rs, func(_ int, r druidRun) float64 { return r.duration.Seconds() })),
			indexer, median(each(rs, func(_ int, r druidRun) float64 { return perRow(r.sidecarCPU) })),
			medWall, slices.Min(wall), slices.Max(wall), medCPU, slices.Min(cpu), slices.Max(cpu))
		if i != 1 {
			continue
		}
		want := fmt.Sprintf("≤ %.1f", druidTarget)
		b.add(result{target: "Druid: task wall time, sidecar vs raw files", measured: fmt.Sprintf("%.1f s", secs),
			anchor: fmt.Sprintf("%.1f s", median(each(raw, func(_ int, r druidRun) float64 { return r.wall.Seconds() }))),
			ratio:  medWall, want: want, pass: medWall <= druidTarget})
		b.add(result{target: "Druid: Indexer CPU, sidecar vs raw files", measured: fmt.Sprintf("%.0f ns/row", indexer),
			anchor: fmt.Sprintf("%.0f ns/row", median(each(raw, func(_ int, r druidRun) float64 { return perRow(r.indexerCPU) }))),
			ratio:  medCPU, want: want, pass: medCPU <= druidTarget})
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(b.out)
	return nil
}

// each maps every run to a figure.
func each(rs []druidRun, f func(int, druidRun) float64) []float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(i, r)
	}
	return v
}

// druidTask fetches the generated task for query.
func (s *server) druidTask(query url.Values) (map[string]any, error) {
	var task map[string]any
	return task, s.getJSON("/druid/task?"+query.Encode(), &task)
}

// ioConfig is a task's spec.ioConfig.
func ioConfig(task map[string]any) map[string]any {
	spec, _ := task["spec"].(map[string]any)
	ioc, _ := spec["ioConfig"].(map[string]any)
	return ioc
}

// uris are the URIs a generated task reads.
func uris(task map[string]any) []string {
	src, _ := ioConfig(task)["inputSource"].(map[string]any)
	list, _ := src["uris"].([]any)
	out := make([]string, len(list))
	for i, u := range list {
		out[i], _ = u.(string)
	}
	return out
}

// localTask turns a generated task into the raw-file path's: Druid's local
// inputSource over the NDJSON files in dir, everything else the same. The
// http inputSource makes one split of each URI (HttpInputSource
// .createSplits), the local one packs files into splits by its
// splitHintSpec (LocalInputSource, MaxSizeSplitHintSpec: by size and file
// count): one file a split keeps the same subtasks.
func localTask(task map[string]any, dir string) error {
	ioc := ioConfig(task)
	if ioc == nil {
		return errors.New("the generated task has no spec.ioConfig")
	}
	ioc["inputSource"] = map[string]any{"type": "local", "baseDir": dir, "filter": "*.ndjson"}
	spec := task["spec"].(map[string]any)
	tuning, ok := spec["tuningConfig"].(map[string]any)
	if !ok {
		return errors.New("the generated task has no spec.tuningConfig")
	}
	tuning["splitHintSpec"] = map[string]any{"type": "maxSize", "maxNumFiles": 1}
	return nil
}

// ndjsonFiles writes the rows the probe task's URIs serve, one NDJSON file
// each, into a folder of the system temp folder's bench directory, once per
// snapshot and split count, and answers the folder and the rows.
func (b *bench) ndjsonFiles(snapshot int64, probe map[string]any) (string, int64, error) {
	us := uris(probe)
	dir := filepath.Join(b.dir, fmt.Sprintf("druid-ndjson-%d", b.rows))
	key := fmt.Sprintf("snapshot %d, %d files\n", snapshot, len(us))
	manifest := filepath.Join(dir, "manifest")
	if data, err := os.ReadFile(manifest); err == nil {
		if head, rows, ok := strings.Cut(string(data), "rows "); ok && head == key {
			n, err := strconv.ParseInt(strings.TrimSpace(rows), 10, 64)
			return dir, n, err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	fmt.Fprintf(os.Stderr, "writing the rows of %d splits into %s…\n", len(us), dir)
	var total int64
	for i, u := range us {
		n, err := saveRows(u, filepath.Join(dir, fmt.Sprintf("part-%03d.ndjson", i)))
		if err != nil {
			return "", 0, err
		}
		total += n
	}
	return dir, total, os.WriteFile(manifest, []byte(fmt.Sprintf("%srows %d\n", key, total)), 0o644)
}

// saveRows writes a row stream into the file path and counts its rows.
func saveRows(uri, path string) (n int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if n, err = copyRows(http.DefaultClient, uri, w); err != nil {
		return n, fmt.Errorf("write %s from %s: %w", path, uri, err)
	}
	return n, w.Flush()
}

// druid connects to the Druid of DRUID_OVERLORD, or starts one with
// tools/druid/druid.sh (under its DRUID_* environment) and stops it at
// the end. The Indexer's pid is what druid.sh status says, under the same
// environment.
func (b *bench) druid(ctx context.Context) (*druidCluster, error) {
	d := &druidCluster{overlord: os.Getenv("DRUID_OVERLORD"), client: &http.Client{Timeout: time.Minute},
		script: filepath.Join(moduleRoot(), "tools", "druid", "druid.sh")}
	env := os.Environ()
	if d.overlord == "" {
		fmt.Fprintln(os.Stderr, "no DRUID_OVERLORD: starting Druid with tools/druid/druid.sh…")
		cmd := exec.CommandContext(ctx, d.script, "start")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("tools/druid/druid.sh start: %w", err)
		}
		d.started = true
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "DRUID_") {
				env = append(env, line)
				if k == "DRUID_OVERLORD" {
					d.overlord = v
				}
			}
		}
		if d.overlord == "" {
			d.stop()
			return nil, fmt.Errorf("tools/druid/druid.sh start printed no DRUID_OVERLORD: %q", out)
		}
	}
	cmd := exec.CommandContext(ctx, d.script, "status")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		d.stop()
		return nil, fmt.Errorf("tools/druid/druid.sh status: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "indexer: running ("); ok {
			d.indexer, _ = strconv.Atoi(strings.TrimSuffix(rest, ")"))
		}
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d.indexer))
	if d.indexer == 0 || !bytes.Contains(cmdline, []byte("indexer")) {
		d.stop()
		return nil, fmt.Errorf("no Indexer process of the Druid at %s in tools/druid/druid.sh status (%q): "+
			"run the bench with the DRUID_HOME_DIR and DRUID_VERSION the cluster was started with", d.overlord, out)
	}
	return d, nil
}

// stop stops the cluster if this process started it.
func (d *druidCluster) stop() {
	if !d.started {
		return
	}
	cmd := exec.Command(d.script, "stop")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tools/druid/druid.sh stop:", err)
	}
}

// indexerCPU is the Indexer's user and system CPU time so far.
func (d *druidCluster) indexerCPU() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.indexer))
	if err != nil {
		return 0, fmt.Errorf("the Indexer's CPU time: %w", err)
	}
	return statCPU(data), nil
}

// do sends a request to Druid and decodes a 2xx JSON answer into out.
func (d *druidCluster) do(method, u string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, u, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %w in %s", method, u, err, b)
	}
	return nil
}

// submit posts a task to the Overlord and answers its id.
func (d *druidCluster) submit(task any) (string, error) {
	var out struct {
		Task string `json:"task"`
	}
	err := d.do(http.MethodPost, d.overlord+"/druid/indexer/v1/task", task, &out)
	return out.Task, err
}

// taskStatus is the Overlord's status of a task.
type taskStatus struct {
	Status struct {
		StatusCode string `json:"statusCode"`
		ErrorMsg   string `json:"errorMsg"`
		Duration   int64  `json:"duration"`
	} `json:"status"`
}

// wait polls a task's status until it ends, and answers the status of a
// task that succeeded; it gives up after an hour.
func (d *druidCluster) wait(ctx context.Context, id string) (taskStatus, error) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	give := time.Now().Add(time.Hour)
	for {
		var st taskStatus
		if err := d.do(http.MethodGet, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status", nil, &st); err != nil {
			return st, err
		}
		switch st.Status.StatusCode {
		case "SUCCESS":
			return st, nil
		case "FAILED":
			return st, fmt.Errorf("task %s failed: %s", id, st.Status.ErrorMsg)
		}
		if time.Now().After(give) {
			return st, fmt.Errorf("task %s is still %s after an hour", id, st.Status.StatusCode)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-tick.C:
		}
	}
}

// ingest submits a task, waits for it to succeed and measures it: the
// wall time from submit to the status that says success, Druid's own
// duration, the Indexer's and the sidecar's CPU time meanwhile, and the
// rows Druid processed by its report.
func (d *druidCluster) ingest(ctx context.Context, task map[string]any, srv *server) (druidRun, error) {
	var r druidRun
	cpu0, err := d.indexerCPU()
	if err != nil {
		return r, err
	}
	side0 := srv.cpu()
	start := time.Now()
	id, err := d.submit(task)
	if err != nil {
		return r, err
	}
	st, err := d.wait(ctx, id)
	if err != nil {
		return r, err
	}
	r.wall = time.Since(start)
	cpu1, err := d.indexerCPU()
	if err != nil {
		return r, err
	}
	r.indexerCPU, r.sidecarCPU = cpu1-cpu0, srv.cpu()-side0
	r.duration = time.Duration(st.Status.Duration) * time.Millisecond
	r.processed, err = d.processed(id)
	return r, err
}

// processed is the rows a task ingested by its report, and an error when
// Druid counts a row it could not parse or ingest.
func (d *druidCluster) processed(id string) (int64, error) {
	var rep struct {
		Stats struct {
			Payload struct {
				RowStats struct {
					Totals map[string]map[string]int64 `json:"totals"`
				} `json:"rowStats"`
			} `json:"payload"`
		} `json:"ingestionStatsAndErrors"`
	}
	if err := d.do(http.MethodGet, d.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/reports", nil, &rep); err != nil {
		return 0, err
	}
	build, ok := rep.Stats.Payload.RowStats.Totals["buildSegments"]
	if !ok {
		return 0, fmt.Errorf("task %s: no rowStats.totals.buildSegments in its report", id)
	}
	if bad := build["processedWithError"] + build["unparseable"] + build["thrownAway"]; bad != 0 {
		return 0, fmt.Errorf("task %s: %d rows processed with an error, unparseable or thrown away (%v)", id, bad, build)
	}
	return build["processed"], nil
}

// markUnused marks every segment of a datasource unused.
func (d *druidCluster) markUnused(ds string) error {
	return d.do(http.MethodDelete, d.overlord+"/druid/coordinator/v1/datasources/"+url.PathEscape(ds), nil, nil)
}

// kill deletes the bench's datasources' segments from deep storage and
// the metadata store, one kill task each (which kills unused segments
// only), after every measurement.
func (d *druidCluster) kill(ctx context.Context, datasources []string) error {
	for _, ds := range datasources {
		if err := d.markUnused(ds); err != nil {
			return err
		}
		id, err := d.submit(map[string]any{"type": "kill", "dataSource": ds, "interval": "1000-01-01/3000-01-01"})
		if err != nil {
			return err
		}
		if _, err := d.wait(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
