package splits_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// Scan planning on the catalog's server, against Iceberg Java's own REST
// catalog server (internal/icebergrest: Iceberg 1.11's RESTCatalogAdapter,
// which plans scans as the REST spec says).

// planningReplica is one replica over a catalog that shares nothing with
// another but the token key: the catalog and its planner (with opts)
// report to a registry of its own, as cmd/sidecar wires them.
type planningReplica struct {
	*servetest.Replica
	reg *prometheus.Registry
}

func newPlanningReplica(t *testing.T, cfg catalog.Config, opts ...splits.PlannerOption) *planningReplica {
	t.Helper()
	reg := prometheus.NewRegistry()
	return &planningReplica{servetest.New(t, catalogtest.OpenRegistered(t, cfg, reg), reg, opts...), reg}
}

// scans is what r counted of the scans it planned: by itself, and on the
// catalog's server.
func (r *planningReplica) scans(t *testing.T) (local, remote float64) {
	t.Helper()
	m := servetest.Metrics(t, r.reg)
	return m[`sidecar_scans_planned_total{catalog="lake",planner="local"}`], m[`sidecar_scans_planned_total{catalog="lake",planner="remote"}`]
}

// tokens are the tokens of a plan, each with the route that serves it.
func tokens(p splits.Plan) []string {
	out := make([]string, len(p.Splits))
	for i, ps := range p.Splits {
		out[i] = fmt.Sprintf("%v:%s", ps.Kind, ps.Token)
	}
	return out
}

// restWriter is iceberg-go's REST client of the catalog server at url,
// to write tables with, and the namespace ns created in it.
func restWriter(t *testing.T, url, ns string) *rest.Catalog {
	t.Helper()
	ctx := context.Background()
	writer, err := rest.NewCatalog(ctx, "writer", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = writer.Close() })
	if err := writer.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil {
		t.Fatal(err)
	}
	return writer
}

// planningTable writes a table through the catalog server at url with
// iceberg-go's REST client: a day-partitioned History (format version 2)
// with appends, positional deletes (merge on read), equality deletes on
// id and on (id, ts), and random operations after them, a snapshot each.
func planningTable(t *testing.T, url string) *table.Table {
	t.Helper()
	ctx := context.Background()
	h, err := tablegen.NewHistory(ctx, restWriter(t, url, "hist"), table.Identifier{"hist", "t"},
		tablegen.HistoryOptions{Seed: 11, Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutDay})
	if err != nil {
		t.Fatal(err)
	}
	// 2024-03-01T00:00:00Z, in microseconds, and rows every two hours
	// over two days.
	const day = int64(1_709_251_200) * 1_000_000
	rows := func(from, to int64) []tablegen.HistoryRow {
		var out []tablegen.HistoryRow
		for id := from; id <= to; id++ {
			ts := day + id*2*3600*1_000_000
			out = append(out, tablegen.HistoryRow{ID: id, TS: &ts, Cat: "c" + strconv.FormatInt(id%3, 10), V: id * 10})
		}
		return out
	}
	for _, step := range []func() error{
		func() error { return h.Append(ctx, rows(1, 12)...) },
		func() error { return h.Append(ctx, rows(13, 24)...) },
		func() error { return h.Delete(ctx, table.WriteModeMergeOnRead, 2, 14, 20) },
		func() error { return h.EqualityDelete(ctx, false, 5, 16) },
		func() error { return h.EqualityDelete(ctx, true, 7) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if _, err := h.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return h.Table()
}

// planningQuery is a request asked of every replica, with the oracle's
// rows (iceberg-go's ReadTasks) where the test has them.
type planningQuery struct {
	name   string
	req    splits.Request
	oracle []string
}

// remoteVersusLocal asks each query of local and remote, replicas over
// the same catalog planning locally and on its server: the snapshot and
// the tokens must be the same, the rows of both too, and those of each
// remote plan read by other, a replica that never planned it; where a
// query has the oracle's rows, they are the rows. It returns the
// positional and equality delete files and deletion vectors the remote
// plans' splits held.
func remoteVersusLocal(t *testing.T, local, remote, other *planningReplica, queries []planningQuery) (posDeletes, eqDeletes, dvs int) {
	t.Helper()
	for _, qq := range queries {
		lp, rp := local.Plan(t, qq.req), remote.Plan(t, qq.req)
		if lp.SnapshotID == 0 || lp.SnapshotID != rp.SnapshotID {
			t.Fatalf("%s: snapshots %d (local) and %d (remote)", qq.name, lp.SnapshotID, rp.SnapshotID)
		}
		if l, r := tokens(lp), tokens(rp); !slices.Equal(l, r) {
			t.Fatalf("%s: the tokens differ\nlocal:  %v\nremote: %v", qq.name, l, r)
		}
		for _, s := range rp.Splits {
			for _, part := range s.Parts {
				for _, d := range part.Deletes {
					switch d.Kind {
					case token.DeletePosition:
						posDeletes++
					case token.DeleteEquality:
						eqDeletes++
					case token.DeleteDeletionVector:
						dvs++
					}
				}
			}
		}
		lrows := local.Rows(t, lp)
		servetest.SameRows(t, remote.Rows(t, rp), lrows)
		servetest.SameRows(t, other.Rows(t, rp), lrows)
		if qq.oracle != nil {
			servetest.SameRows(t, lrows, qq.oracle)
		}
	}
	n := float64(len(queries))
	if l, r := local.scans(t); l != n || r != 0 {
		t.Errorf("the local replica counted %v local and %v remote scans, want %v and 0", l, r, n)
	}
	if l, r := remote.scans(t); l != 0 || r != n {
		t.Errorf("the remote replica counted %v local and %v remote scans, want 0 and %v", l, r, n)
	}
	// The replica that only read planned again the plans its reference
	// tokens name (design.md#tokens): on the server too.
	if l, _ := other.scans(t); l != 0 {
		t.Errorf("the replica that only read planned %v scans locally, want none: a reference token is planned again on the server", l)
	}
	return posDeletes, eqDeletes, dvs
}

// planningFilter is an icebergFilter that leaves residuals (applied by the
// reader).
const planningFilter = `{"type":"or","filters":[{"type":"interval","filterColumn":"ts","intervals":["2024-03-01/P1D"]},` +
	`{"type":"range","filterColumn":"id","lower":10,"upper":18}]}`

// historyQueries are the plans asked of every snapshot of planningTable's
// table: the whole snapshot, with the oracle's rows (iceberg-go's
// ReadTasks), and under planningFilter, and with projection two columns of
// it too.
func historyQueries(t *testing.T, tbl *table.Table, projection bool) []planningQuery {
	t.Helper()
	var queries []planningQuery
	for _, snap := range tbl.Metadata().Snapshots() {
		want, err := tablegen.OracleRows(context.Background(), tbl, snap.SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		id := snap.SnapshotID
		queries = append(queries,
			planningQuery{fmt.Sprintf("snapshot %d", id), splits.Request{Table: "hist.t", SnapshotID: &id, Mode: splits.ModeRows}, want},
			planningQuery{fmt.Sprintf("snapshot %d, filtered", id), splits.Request{Table: "hist.t", SnapshotID: &id, Mode: splits.ModeRows,
				Filter: parseFilter(t, planningFilter), ApplyResidual: true}, nil})
		if projection {
			queries = append(queries, planningQuery{fmt.Sprintf("snapshot %d, columns v and id", id),
				splits.Request{Table: "hist.t", SnapshotID: &id, Mode: splits.ModeRows, Columns: []string{"v", "id"}}, nil})
		}
	}
	return queries
}

// TestRemotePlanning: the suite's case of scan planning on the server, on
// one Iceberg REST catalog server (one JVM) planning synchronously with
// plan tasks of two files to fetch. A replica that plans on the server
// (--scan-planning remote) hands out exactly the tokens of one that plans
// the same table itself (local) for every snapshot of a table with
// positional and equality deletes, whole and under a filter that leaves
// residuals; the rows are the same, and the oracle's (iceberg-go's
// ReadTasks) for the whole snapshot; a replica that never planned reads
// every token of the remote plans; the metric tells the planners apart.
// A remote plan is bound by the memory budget as a local one is, and so is
// every answer of the server before iceberg-go parses it. The full matrix
// (asynchronous planning, the version 3 table, projections, time and ref,
// a server that does not plan) is the integration tier's
// (TestRealRemotePlanning*).
func TestRemotePlanning(t *testing.T) {
	testenv.SkipShort(t, "starts Iceberg's REST catalog server, a JVM")
	dir := t.TempDir()
	srv := icebergrest.Start(t, dir, icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(2))
	tbl := planningTable(t, srv)
	cfg := func(uri, mode string) catalog.Config {
		return catalog.Config{Type: "rest", Name: "lake", URI: uri, DataRoots: []string{dir}, ScanPlanning: mode}
	}

	t.Run("matches local", func(t *testing.T) {
		local, remote, other := newPlanningReplica(t, cfg(srv, "local")), newPlanningReplica(t, cfg(srv, "remote")),
			newPlanningReplica(t, cfg(srv, "remote"))
		pos, eq, _ := remoteVersusLocal(t, local, remote, other, historyQueries(t, tbl, false))
		if pos == 0 || eq == 0 {
			t.Fatalf("the plans held %d positional and %d equality delete files: the table lacks what the test is for", pos, eq)
		}
	})

	// A budget smaller than one file's share (splits.PlanBytesPerFile)
	// admits no plan of a snapshot that holds any: refused before the
	// server is asked. One that fits the data and delete files the
	// snapshot declares, but not what the server answers with (here a
	// plan task for every two data files, and in each answer the delete
	// files they need), is refused as the answers come, before they are
	// decoded: by an answer's entries, or by its bytes as they arrive when
	// the entries before it left less room than the answer's bytes need
	// (which comes first depends on how the answers' bytes arrive).
	declared := int64(0)
	for _, key := range []string{"total-data-files", "total-delete-files"} {
		n, err := strconv.ParseInt(tbl.CurrentSnapshot().Summary.Properties[key], 10, 64)
		if err != nil {
			t.Fatalf("summary %s: %v", key, err)
		}
		declared += n
	}
	// refused plans hist.t on r in a request's memory scope (handlers'
	// memoryScope) and wants memory.ErrTooLarge, the budget given back.
	refused := func(t *testing.T, r *planningReplica, budget *memory.Budget) error {
		t.Helper()
		ctx, end := memory.WithScope(context.Background())
		_, err := r.Planner.Plan(ctx, splits.Request{Table: "hist.t"})
		end()
		if !errors.Is(err, memory.ErrTooLarge) {
			t.Fatalf("a remote plan past the memory budget: %v, want memory.ErrTooLarge", err)
		}
		if used := budget.Stats().Used; used != 0 {
			t.Fatalf("the budget holds %d bytes after the refusal, want 0", used)
		}
		return err
	}
	t.Run("memory budget", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			capacity int64
			messages []string
		}{
			{"less than a file", splits.PlanBytesPerFile - 1, []string{"data and delete files need"}},
			{"what the snapshot declares", declared*splits.PlanBytesPerFile + splits.PlanBytesPerFile/2,
				[]string{"the server's answers hold more than the snapshot declares", "an answer of the server has passed"}},
		} {
			budget := memory.NewBudget(tc.capacity, "a test's budget", nil)
			small := newPlanningReplica(t, cfg(srv, "remote"), splits.WithMemoryBudget(budget))
			err := refused(t, small, budget)
			if !slices.ContainsFunc(tc.messages, func(m string) bool { return strings.Contains(err.Error(), m) }) {
				t.Fatalf("%s: a remote plan past the memory budget: %v, want one of %q", tc.name, err, tc.messages)
			}
			if l, r := small.scans(t); l != 0 || r != 0 {
				t.Fatalf("%s: a plan refused by the budget counted %v local and %v remote scans, want none", tc.name, l, r)
			}
		}
	})

	// A server that answers one plan with a million file scan tasks in
	// ONE answer: Iceberg's server cannot be told to misbehave, so a
	// front forwards every request to it and inflates its answer to the
	// plan request (the tasks name no real file: the planner must refuse
	// them before it reads them). The plan is refused at the budget as
	// the answer's bytes arrive, long before the answer is whole.
	t.Run("one answer of a million tasks", func(t *testing.T) {
		front := newInflatingFront(t, srv, 1_000_000)
		// Room for what the snapshot declares and 1 MiB more, which the
		// answer's bytes pass at 256 KiB (splits.PlanAnswerBytesPerByte).
		budget := memory.NewBudget(declared*splits.PlanBytesPerFile+1<<20, "a test's budget", nil)
		s := newPlanningReplica(t, cfg(front.URL, "remote"), splits.WithMemoryBudget(budget))
		if err := refused(t, s, budget); !strings.Contains(err.Error(), "an answer of the server has passed") {
			t.Fatalf("a plan answered with a million tasks: %v, want the refusal to name the answer", err)
		}
		// What the front sent bounds what the planner's transport read:
		// the refusal came at 256 KiB; the rest of the bytes sent sit in
		// the sockets' buffers, and the body was never read whole.
		sent, whole := front.sent.Load(), front.whole()
		if sent >= whole/10 || sent > 16<<20 {
			t.Fatalf("the front sent %s of the %s answer before the planner stopped reading, want far less", memory.Bytes(sent), memory.Bytes(whole))
		}
		t.Logf("the front sent %s of the %s answer", memory.Bytes(sent), memory.Bytes(whole))
	})
}

// inflatingFront is a reverse proxy in front of a REST catalog server that
// answers every plan request with the server's own answer's plan id and
// tasks copies of one file scan task, in one answer.
type inflatingFront struct {
	*httptest.Server
	tasks int
	sent  atomic.Int64
}

// inflatedTask is the file scan task the front repeats.
const inflatedTask = `{"data-file":{"spec-id":0,"partition":[],"content":"data","file-path":"file:/nonexistent/data/f.parquet",` +
	`"file-format":"parquet","file-size-in-bytes":1024,"record-count":10}}`

func newInflatingFront(t *testing.T, upstream string, tasks int) *inflatingFront {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	f := &inflatingFront{tasks: tasks}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodPost || !strings.HasSuffix(resp.Request.URL.Path, "/plan") || resp.StatusCode != http.StatusOK {
			return nil
		}
		var real struct {
			PlanID string `json:"plan-id"`
		}
		err := json.NewDecoder(resp.Body).Decode(&real)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		head := fmt.Sprintf(`{"status":"completed","plan-id":%q,"file-scan-tasks":[`, real.PlanID)
		parts := []io.Reader{strings.NewReader(head), strings.NewReader(inflatedTask)}
		rest := strings.Repeat(","+inflatedTask, 1000)
		for range (tasks - 1) / 1000 {
			parts = append(parts, strings.NewReader(rest))
		}
		parts = append(parts, strings.NewReader("]}"))
		resp.Body = io.NopCloser(&countingReader{r: io.MultiReader(parts...), n: &f.sent})
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return nil
	}
	f.Server = httptest.NewServer(proxy)
	t.Cleanup(f.Close)
	return f
}

// whole is the size of the inflated answer, its plan id aside.
func (f *inflatingFront) whole() int64 {
	return int64(f.tasks) * int64(len(inflatedTask)+1)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
