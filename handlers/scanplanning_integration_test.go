//go:build integration

package handlers_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestRealRemotePlanningMatchesLocal: the full matrix of scan planning on
// the server (the suite's TestRemotePlanning has one case of it). Against
// Iceberg's REST catalog server planning synchronously (with plan tasks of
// two files to fetch) and asynchronously (a plan id to poll), a sidecar
// that plans on the server (--scan-planning remote) hands out exactly the
// tokens of one that plans the same table itself (local), for every
// snapshot of a table with positional and equality deletes, with and
// without a filter and a projection, for every snapshot of a version 3
// table with a deletion vector and row ids, and by time and by ref; the
// rows are the same, and the oracle's for the whole snapshot; a sidecar
// that never planned serves every token of the remote plans; the metric
// tells the two planners apart; what only the sidecar plans is refused by
// remote and planned locally by auto.
func TestRealRemotePlanningMatchesLocal(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []icebergrest.Option
	}{
		{"sync", []icebergrest.Option{icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(2)}},
		{"async", []icebergrest.Option{icebergrest.WithPlanning(icebergrest.AsyncPlanning)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := icebergrest.Start(t, dir, tc.opts...)
			tbl := planningTable(t, srv)
			cfg := func(mode string) sidecatalog.Config {
				return sidecatalog.Config{Type: "rest", Name: "lake", URI: srv, DataRoots: []string{dir}, ScanPlanning: mode}
			}
			local, remote, other := newPlanningSidecar(t, cfg("local")), newPlanningSidecar(t, cfg("remote")), newPlanningSidecar(t, cfg("remote"))

			queries, oracles := historyQueries(t, tbl, true)
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

			pos, eq, dvs := remoteVersusLocal(t, local, remote, other, queries, oracles)
			if pos == 0 || eq == 0 || dvs == 0 {
				t.Fatalf("the plans held %d positional and %d equality delete files and %d deletion vectors: the tables lack what the test is for",
					pos, eq, dvs)
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
			if l, r := auto.scans(t); l != 2 || r != 1 {
				t.Errorf("auto counted %v local and %v remote scans, want 2 (fromSnapshot, the sequence numbers) and 1", l, r)
			}
		})
	}
}

// TestRealRemotePlanningRefusals: a catalog configured to plan remotely
// whose server does not plan (Iceberg's server with planning off, which
// leaves the endpoints out of /v1/config) refuses every plan with a 422
// that names the catalog and the endpoints it lacks, while auto plans the
// same table locally with the oracle's rows.
func TestRealRemotePlanningRefusals(t *testing.T) {
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
	if l, r := auto.scans(t); l != 1 || r != 0 {
		t.Fatalf("auto on a server that does not plan counted %v local and %v remote scans, want 1 and 0", l, r)
	}
}
