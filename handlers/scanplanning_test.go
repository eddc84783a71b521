package handlers_test

import (
	"context"
	"encoding/json"
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

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/splits"
)

// Scan planning on the catalog's server, against Iceberg Java's own REST
// catalog server (internal/icebergrest: Iceberg 1.11's RESTCatalogAdapter,
// which plans scans as the REST spec says).

// planningSidecar is one sidecar over a catalog (startSidecar), whose
// planner counts the scans it plans on the sidecar's registry.
type planningSidecar struct{ *testServer }

func newPlanningSidecar(t *testing.T, cfg sidecatalog.Config, opts ...splits.PlannerOption) *planningSidecar {
	t.Helper()
	return &planningSidecar{startSidecar(t, cfg, opts, nil)}
}

// scans is what s counted of the scans it planned: by itself, and on the
// catalog's server.
func (s *planningSidecar) scans(t *testing.T) (local, remote float64) {
	t.Helper()
	m := metricsOf(t, s.testServer)
	return m[`sidecar_scans_planned_total{catalog="lake",planner="local"}`], m[`sidecar_scans_planned_total{catalog="lake",planner="remote"}`]
}

// paths are the URIs of a plan without the host that planned it: the
// tokens, and which route serves each.
func (p plan) paths(base string) []string {
	out := make([]string, len(p.InputSource.URIs))
	for i, u := range p.InputSource.URIs {
		out[i] = strings.TrimPrefix(u, base)
	}
	return out
}

// readFrom reads every split of p, planned by another sidecar, from s.
func (s *planningSidecar) readFrom(t *testing.T, p plan, planner string) []string {
	t.Helper()
	var rows []string
	for _, path := range p.paths(planner) {
		resp, body := s.get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s on a sidecar that did not plan it: %d %s", path, resp.StatusCode, body)
		}
		rows = append(rows, ndjsonLines(t, body)...)
	}
	return rows
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

// lineageTable writes tablegen.Lineage (format version 3: row lineage,
// a deletion vector, a partition spec change) through the catalog server
// at url.
func lineageTable(t *testing.T, url string) *table.Table {
	t.Helper()
	built, _, err := tablegen.Lineage(context.Background(), restWriter(t, url, "lin"), table.Identifier{"lin", "t"})
	if err != nil {
		t.Fatal(err)
	}
	return built.Table
}

// remoteVersusLocal asks each query of local and remote, sidecars over
// the same catalog planning locally and on its server: the snapshot and
// the tokens must be the same, the rows of both too, and those of each
// remote plan read from other, a sidecar that never planned it; where
// oracles has rows for a query, they are the rows. It returns the
// positional and equality delete files and deletion vectors the remote
// plans' splits held.
func remoteVersusLocal(t *testing.T, local, remote, other *planningSidecar, queries []url.Values, oracles [][]string) (posDeletes, eqDeletes, dvs int) {
	t.Helper()
	for i, qq := range queries {
		lp, rp := local.plan(t, qq), remote.plan(t, qq)
		if lp.SnapshotID == nil || rp.SnapshotID == nil || *lp.SnapshotID != *rp.SnapshotID {
			t.Fatalf("%s: snapshots %v (local) and %v (remote)", qq.Encode(), lp.SnapshotID, rp.SnapshotID)
		}
		if l, r := lp.paths(local.URL), rp.paths(remote.URL); !slices.Equal(l, r) {
			t.Fatalf("%s: the tokens differ\nlocal:  %v\nremote: %v", qq.Encode(), l, r)
		}
		for _, s := range rp.Splits {
			posDeletes += s.PositionDeleteFiles
			eqDeletes += s.EqualityDeleteFiles
			dvs += s.DeletionVectorFiles
		}
		lrows := local.rows(t, lp)
		assertSameRows(t, remote.rows(t, rp), lrows)
		assertSameRows(t, other.readFrom(t, rp, remote.URL), lrows)
		if oracles[i] != nil {
			assertSameRows(t, lrows, oracles[i])
		}
	}
	n := float64(len(queries))
	if l, r := local.scans(t); l != n || r != 0 {
		t.Errorf("the local sidecar counted %v local and %v remote scans, want %v and 0", l, r, n)
	}
	if l, r := remote.scans(t); l != 0 || r != n {
		t.Errorf("the remote sidecar counted %v local and %v remote scans, want 0 and %v", l, r, n)
	}
	// The sidecar that only read planned again the plans its reference
	// tokens name (design.md#tokens): on the server too.
	if l, _ := other.scans(t); l != 0 {
		t.Errorf("the sidecar that only read planned %v scans locally, want none: a reference token is planned again on the server", l)
	}
	return posDeletes, eqDeletes, dvs
}

// planningFilter is an icebergFilter that leaves residuals (applied by the
// reader).
const planningFilter = `{"type":"or","filters":[{"type":"interval","filterColumn":"ts","intervals":["2024-03-01/P1D"]},` +
	`{"type":"range","filterColumn":"id","lower":10,"upper":18}]}`

// historyQueries are the plans asked of every snapshot of planningTable's
// table: the whole snapshot, and under planningFilter, and with projection
// two columns of it too; with the oracle's rows (iceberg-go's ReadTasks)
// of each whole snapshot, and nil for the others.
func historyQueries(t *testing.T, tbl *table.Table, projection bool) (queries []url.Values, oracles [][]string) {
	t.Helper()
	for _, snap := range tbl.Metadata().Snapshots() {
		want, err := tablegen.OracleRows(context.Background(), tbl, snap.SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		id := strconv.FormatInt(snap.SnapshotID, 10)
		queries = append(queries, q("table", "hist.t", "snapshotId", id, "mode", "rows"),
			q("table", "hist.t", "snapshotId", id, "mode", "rows", "icebergFilter", planningFilter, "applyResidual", "true"))
		oracles = append(oracles, want, nil)
		if projection {
			queries = append(queries, q("table", "hist.t", "snapshotId", id, "mode", "rows", "columns", "v,id"))
			oracles = append(oracles, nil)
		}
	}
	return queries, oracles
}

// TestRemotePlanning: the suite's case of scan planning on the server, on
// one Iceberg REST catalog server (one JVM) planning synchronously with
// plan tasks of two files to fetch. A sidecar that plans on the server
// (--scan-planning remote) hands out exactly the tokens of one that plans
// the same table itself (local) for every snapshot of a table with
// positional and equality deletes, whole and under a filter that leaves
// residuals; the rows are the same, and the oracle's (iceberg-go's
// ReadTasks) for the whole snapshot; a sidecar that never planned serves
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
	cfg := func(uri, mode string) sidecatalog.Config {
		return sidecatalog.Config{Type: "rest", Name: "lake", URI: uri, DataRoots: []string{dir}, ScanPlanning: mode}
	}

	t.Run("matches local", func(t *testing.T) {
		local, remote, other := newPlanningSidecar(t, cfg(srv, "local")), newPlanningSidecar(t, cfg(srv, "remote")),
			newPlanningSidecar(t, cfg(srv, "remote"))
		queries, oracles := historyQueries(t, tbl, false)
		pos, eq, _ := remoteVersusLocal(t, local, remote, other, queries, oracles)
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
			small := newPlanningSidecar(t, cfg(srv, "remote"), splits.WithMemoryBudget(budget))
			resp, body := small.get(t, "/splits?"+q("table", "hist.t").Encode())
			says := slices.ContainsFunc(tc.messages, func(m string) bool { return strings.Contains(string(body), m) })
			if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "memory_exceeded" || !says {
				t.Fatalf("%s: a remote plan past the memory budget: %d %s, want 422 memory_exceeded saying one of %q", tc.name, resp.StatusCode, body, tc.messages)
			}
			if l, r := small.scans(t); l != 0 || r != 0 {
				t.Fatalf("%s: a plan refused by the budget counted %v local and %v remote scans, want none", tc.name, l, r)
			}
			if used := budget.Stats().Used; used != 0 {
				t.Fatalf("%s: the budget holds %d bytes after the refusal, want 0", tc.name, used)
			}
		}
	})

	// A server that answers one plan with a million file scan tasks in
	// ONE answer: Iceberg's server cannot be told to misbehave, so a
	// front forwards every request to it and inflates its answer to the
	// plan request (the tasks name no real file: the sidecar must refuse
	// them before it reads them). The plan is refused at the budget as
	// the answer's bytes arrive, long before the answer is whole.
	t.Run("one answer of a million tasks", func(t *testing.T) {
		front := newInflatingFront(t, srv, 1_000_000)
		// Room for what the snapshot declares and 1 MiB more, which the
		// answer's bytes pass at 256 KiB (splits.PlanAnswerBytesPerByte).
		budget := memory.NewBudget(declared*splits.PlanBytesPerFile+1<<20, "a test's budget", nil)
		s := newPlanningSidecar(t, cfg(front.URL, "remote"), splits.WithMemoryBudget(budget))
		resp, body := s.get(t, "/splits?"+q("table", "hist.t").Encode())
		if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "memory_exceeded" ||
			!strings.Contains(string(body), "an answer of the server has passed") {
			t.Fatalf("a plan answered with a million tasks: %d %s, want 422 memory_exceeded naming the answer", resp.StatusCode, body)
		}
		if used := budget.Stats().Used; used != 0 {
			t.Fatalf("the budget holds %d bytes after the refusal, want 0", used)
		}
		// What the front sent bounds what the sidecar's transport read:
		// the refusal came at 256 KiB; the rest of the bytes sent sit in
		// the sockets' buffers, and the body was never read whole.
		sent, whole := front.sent.Load(), front.whole()
		if sent >= whole/10 || sent > 16<<20 {
			t.Fatalf("the front sent %s of the %s answer before the sidecar stopped reading, want far less", memory.Bytes(sent), memory.Bytes(whole))
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
