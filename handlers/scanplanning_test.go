package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/splits"
	sidecatalog "github.com/druidiceberg/sidecar/splits/catalog"
)

// Scan planning on the catalog's server, against Iceberg Java's own REST
// catalog server (internal/icebergrest: Iceberg 1.11's RESTCatalogAdapter,
// which plans scans as the REST spec says).

// planningSidecar is one sidecar over a catalog (startSidecar), with the
// metrics its planner counts the scans it plans on.
type planningSidecar struct {
	*testServer
	m *metrics.Metrics
}

func newPlanningSidecar(t *testing.T, cfg sidecatalog.Config, opts ...splits.PlannerOption) *planningSidecar {
	t.Helper()
	srv, m := startSidecar(t, cfg, opts, nil)
	return &planningSidecar{testServer: srv, m: m}
}

// scans is what s counted of the scans it planned: by itself, and on the
// catalog's server.
func (s *planningSidecar) scans() (local, remote float64) {
	return testutil.ToFloat64(s.m.ScansPlanned.WithLabelValues("lake", "local")),
		testutil.ToFloat64(s.m.ScansPlanned.WithLabelValues("lake", "remote"))
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

// planningQueries are the plans asked of every snapshot: the whole
// snapshot, a filter that leaves residuals (applied by the reader), and a
// projection.
func planningQueries(snapshotID int64) []url.Values {
	id := strconv.FormatInt(snapshotID, 10)
	filter := `{"type":"or","filters":[{"type":"interval","filterColumn":"ts","intervals":["2024-03-01/P1D"]},` +
		`{"type":"range","filterColumn":"id","lower":10,"upper":18}]}`
	return []url.Values{
		q("table", "hist.t", "snapshotId", id, "mode", "rows"),
		q("table", "hist.t", "snapshotId", id, "mode", "rows", "icebergFilter", filter, "applyResidual", "true"),
		q("table", "hist.t", "snapshotId", id, "mode", "rows", "columns", "v,id"),
	}
}

// TestRemotePlanningMatchesLocal: against Iceberg's REST catalog server
// planning synchronously (with plan tasks of two files to fetch) and
// asynchronously (a plan id to poll), a sidecar that plans on the server
// (--scan-planning remote) hands out exactly the tokens of one that plans
// the same table itself (local), for every snapshot of a table with
// positional and equality deletes, with and without a filter and a
// projection, and by time and by ref; the rows are the same, and the
// oracle's (iceberg-go's ReadTasks) for the whole snapshot; a sidecar
// that never planned serves every token of the remote plan (planning a
// reference token's plan again on the server); the metric tells the two
// planners apart.
func TestRemotePlanningMatchesLocal(t *testing.T) {
	testenv.SkipShort(t, "starts Iceberg's REST catalog server, a JVM")
	for _, tc := range []struct {
		name string
		opts []icebergrest.Option
	}{
		{"sync", []icebergrest.Option{icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(2)}},
		{"async", []icebergrest.Option{icebergrest.WithPlanning(icebergrest.AsyncPlanning)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			srv := icebergrest.Start(t, dir, tc.opts...)
			tbl := planningTable(t, srv)
			cfg := func(mode string) sidecatalog.Config {
				return sidecatalog.Config{Type: "rest", Name: "lake", URI: srv, DataRoots: []string{dir}, ScanPlanning: mode}
			}
			local, remote, other := newPlanningSidecar(t, cfg("local")), newPlanningSidecar(t, cfg("remote")), newPlanningSidecar(t, cfg("remote"))

			var queries []url.Values
			var oracles [][]string
			for _, snap := range tbl.Metadata().Snapshots() {
				want, err := tablegen.OracleRows(ctx, tbl, snap.SnapshotID)
				if err != nil {
					t.Fatal(err)
				}
				for i, qq := range planningQueries(snap.SnapshotID) {
					queries = append(queries, qq)
					if i == 0 {
						oracles = append(oracles, want)
					} else {
						oracles = append(oracles, nil)
					}
				}
			}
			// The version 3 table, with a deletion vector and row ids,
			// which a server's plan carries.
			lin := lineageTable(t, srv)
			for _, snap := range lin.Metadata().Snapshots() {
				id := strconv.FormatInt(snap.SnapshotID, 10)
				queries = append(queries, q("table", "lin.t", "snapshotId", id, "mode", "rows"),
					q("table", "lin.t", "snapshotId", id, "metadataColumns", "_row_id,_file,_pos"))
				oracles = append(oracles, nil, nil)
			}
			// By time (the first snapshot's commit, which the sidecar
			// resolves to it) and by ref (the main branch).
			first := tbl.Metadata().Snapshots()[0]
			queries = append(queries,
				q("table", "hist.t", "mode", "rows", "snapshotTime", time.UnixMilli(first.TimestampMs).UTC().Format(time.RFC3339Nano)),
				q("table", "hist.t", "mode", "rows", "ref", "main"))
			oracles = append(oracles, nil, nil)

			var posDeletes, eqDeletes, dvs int
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
			if posDeletes == 0 || eqDeletes == 0 || dvs == 0 {
				t.Fatalf("the plans held %d positional and %d equality delete files and %d deletion vectors: the tables lack what the test is for",
					posDeletes, eqDeletes, dvs)
			}

			n := float64(len(queries))
			if l, r := local.scans(); l != n || r != 0 {
				t.Errorf("the local sidecar counted %v local and %v remote scans, want %v and 0", l, r, n)
			}
			if l, r := remote.scans(); l != 0 || r != n {
				t.Errorf("the remote sidecar counted %v local and %v remote scans, want 0 and %v", l, r, n)
			}
			// The sidecar that only read planned again the plans its
			// reference tokens name (design.md#tokens): on the server too.
			if l, _ := other.scans(); l != 0 {
				t.Errorf("the sidecar that only read planned %v scans locally, want none: a reference token is planned again on the server", l)
			}

			// What only the sidecar plans is refused by name when the
			// catalog plans on its server only, and planned locally by
			// auto, which plans the rest on the server.
			auto := newPlanningSidecar(t, cfg("auto"))
			for _, only := range []struct{ name, value, says string }{
				{"fromSnapshot", strconv.FormatInt(first.SnapshotID, 10), "(fromSnapshot)"},
				{"metadataColumns", "_last_updated_sequence_number", "_last_updated_sequence_number"},
			} {
				// The second snapshot of each appends to the first; row
				// lineage is the version 3 table's.
				tb := tbl
				if only.name == "metadataColumns" {
					tb = lin
				}
				qq := q("table", strings.Join(tb.Identifier(), "."), "mode", "rows",
					"snapshotId", strconv.FormatInt(tb.Metadata().Snapshots()[1].SnapshotID, 10), only.name, only.value)
				resp, body := remote.get(t, "/splits?"+qq.Encode())
				if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unsupported" || !strings.Contains(string(body), only.says) {
					t.Fatalf("%s planned remotely: %d %s, want 422 unsupported naming it", only.name, resp.StatusCode, body)
				}
				assertSameRows(t, auto.rows(t, auto.plan(t, qq)), local.rows(t, local.plan(t, qq)))
			}
			auto.plan(t, q("table", "hist.t"))
			if l, r := auto.scans(); l != 2 || r != 1 {
				t.Errorf("auto counted %v local and %v remote scans, want 2 (fromSnapshot, the sequence numbers) and 1", l, r)
			}
		})
	}
}

// TestRemotePlanningRefusals: a catalog configured to plan remotely whose
// server does not plan (Iceberg's server with planning off, which leaves
// the endpoints out of /v1/config) refuses every plan with a 422 that names
// the catalog and the endpoints it lacks, while auto plans the same table
// locally; and a remote plan is bound by the memory budget as a local one
// is: the snapshot's files that do not fit are a 422 memory_exceeded
// before the server is asked.
func TestRemotePlanningRefusals(t *testing.T) {
	testenv.SkipShort(t, "starts Iceberg's REST catalog server, a JVM")
	ctx := context.Background()
	dir := t.TempDir()
	off := icebergrest.Start(t, dir, icebergrest.WithPlanning(icebergrest.NoPlanning))
	tbl := planningTable(t, off)
	cfg := func(mode string) sidecatalog.Config {
		return sidecatalog.Config{Type: "rest", Name: "lake", URI: off, DataRoots: []string{dir}, ScanPlanning: mode}
	}

	remote := newPlanningSidecar(t, cfg("remote"))
	resp, body := remote.get(t, "/splits?"+q("table", "hist.t").Encode())
	if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unsupported" ||
		!strings.Contains(string(body), `catalog \"lake\"`) || !strings.Contains(string(body), "/plan/{plan-id}") {
		t.Fatalf("remote planning on a server that does not plan: %d %s, want 422 unsupported naming the catalog and the endpoints",
			resp.StatusCode, body)
	}

	auto := newPlanningSidecar(t, cfg("auto"))
	want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	assertSameRows(t, auto.rows(t, auto.plan(t, q("table", "hist.t", "mode", "rows"))), want)
	if l, r := auto.scans(); l != 1 || r != 0 {
		t.Fatalf("auto on a server that does not plan counted %v local and %v remote scans, want 1 and 0", l, r)
	}

	// A budget smaller than one file's share (splits.PlanBytesPerFile)
	// admits no plan of a snapshot that holds any: refused before the
	// server is asked. One that fits the data and delete files the
	// snapshot declares, but not what the server answers with (here a
	// plan task for each data file, and in each the delete files it
	// needs), is refused as the answers come, before they are decoded.
	planning := t.TempDir()
	sync := icebergrest.Start(t, planning, icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(1))
	synced := planningTable(t, sync)
	summary := synced.CurrentSnapshot().Summary.Properties
	declared := int64(0)
	for _, key := range []string{"total-data-files", "total-delete-files"} {
		n, err := strconv.ParseInt(summary[key], 10, 64)
		if err != nil {
			t.Fatalf("summary %s: %v", key, err)
		}
		declared += n
	}
	for _, tc := range []struct {
		name     string
		capacity int64
		message  string
	}{
		{"less than a file", splits.PlanBytesPerFile - 1, "need"},
		{"what the snapshot declares", declared*splits.PlanBytesPerFile + splits.PlanBytesPerFile/2, "the server's answers hold more than the snapshot declares"},
	} {
		small := newPlanningSidecar(t, sidecatalog.Config{Type: "rest", Name: "lake", URI: sync, DataRoots: []string{planning}, ScanPlanning: "remote"},
			splits.WithMemoryBudget(memory.NewBudget(tc.capacity, "a test's budget", nil)))
		resp, body = small.get(t, "/splits?"+q("table", "hist.t").Encode())
		if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "memory_exceeded" || !strings.Contains(string(body), tc.message) {
			t.Fatalf("%s: a remote plan past the memory budget: %d %s, want 422 memory_exceeded saying %q", tc.name, resp.StatusCode, body, tc.message)
		}
		if l, r := small.scans(); l != 0 || r != 0 {
			t.Fatalf("%s: a plan refused by the budget counted %v local and %v remote scans, want none", tc.name, l, r)
		}
	}
}
