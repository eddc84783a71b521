//go:build integration

package splits_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// TestRealRemotePlanningMatchesLocal: the full matrix of scan planning on
// the server (the suite's TestRemotePlanning has one case of it). Against
// Iceberg's REST catalog server planning synchronously (with plan tasks of
// two files to fetch) and asynchronously (a plan id to poll), a replica
// that plans on the server (--scan-planning remote) hands out exactly the
// tokens of one that plans the same table itself (local), for every
// snapshot of a table with positional and equality deletes, with and
// without a filter and a projection, for every snapshot of a version 3
// table with a deletion vector and row ids, and by time and by ref; the
// rows are the same, and the oracle's for the whole snapshot; a replica
// that never planned reads every token of the remote plans; the metric
// tells the two planners apart; what only the sidecar plans is refused by
// remote (fault.ErrUnsupported, a 422) and planned locally by auto.
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
			cfg := func(mode string) catalog.Config {
				return catalog.Config{Type: "rest", Name: "lake", URI: srv, DataRoots: []string{dir}, ScanPlanning: mode}
			}
			local, remote, other := newPlanningReplica(t, cfg("local")), newPlanningReplica(t, cfg("remote")), newPlanningReplica(t, cfg("remote"))

			queries := historyQueries(t, tbl, true)
			// The version 3 table, with a deletion vector and row ids,
			// which a server's plan carries.
			lin := lineageTable(t, srv)
			meta, err := token.ParseMetaColumns([]string{"_row_id", "_file", "_pos"})
			if err != nil {
				t.Fatal(err)
			}
			for _, snap := range lin.Metadata().Snapshots() {
				id := snap.SnapshotID
				queries = append(queries,
					planningQuery{fmt.Sprintf("lin.t at %d", id), splits.Request{Table: "lin.t", SnapshotID: &id, Mode: splits.ModeRows}, nil},
					planningQuery{fmt.Sprintf("lin.t at %d with row ids", id), splits.Request{Table: "lin.t", SnapshotID: &id, MetaColumns: meta}, nil})
			}
			// By time (the first snapshot's commit, which the sidecar
			// resolves to it) and by ref (the main branch).
			first := tbl.Metadata().Snapshots()[0]
			at := time.UnixMilli(first.TimestampMs).UTC()
			queries = append(queries,
				planningQuery{"hist.t by time", splits.Request{Table: "hist.t", Mode: splits.ModeRows, SnapshotTime: &at}, nil},
				planningQuery{"hist.t by ref", splits.Request{Table: "hist.t", Mode: splits.ModeRows, Ref: "main"}, nil})

			pos, eq, dvs := remoteVersusLocal(t, local, remote, other, queries)
			if pos == 0 || eq == 0 || dvs == 0 {
				t.Fatalf("the plans held %d positional and %d equality delete files and %d deletion vectors: the tables lack what the test is for",
					pos, eq, dvs)
			}

			// What only the sidecar plans is refused by name when the
			// catalog plans on its server only, and planned locally by
			// auto, which plans the rest on the server.
			auto := newPlanningReplica(t, cfg("auto"))
			sequence, err := token.ParseMetaColumns([]string{"_last_updated_sequence_number"})
			if err != nil {
				t.Fatal(err)
			}
			for _, only := range []struct {
				name string
				req  func(second int64) splits.Request
				says string
			}{
				// The second snapshot of each appends to the first; row
				// lineage is the version 3 table's.
				{"fromSnapshot", func(second int64) splits.Request {
					return splits.Request{Table: "hist.t", Mode: splits.ModeRows, SnapshotID: &second, FromSnapshot: &first.SnapshotID}
				}, "(fromSnapshot)"},
				{"metadataColumns", func(second int64) splits.Request {
					return splits.Request{Table: "lin.t", Mode: splits.ModeRows, SnapshotID: &second, MetaColumns: sequence}
				}, "_last_updated_sequence_number"},
			} {
				tb := tbl
				if only.name == "metadataColumns" {
					tb = lin
				}
				req := only.req(tb.Metadata().Snapshots()[1].SnapshotID)
				_, err := remote.Planner.Plan(t.Context(), req)
				if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), only.says) {
					t.Fatalf("%s planned remotely: %v, want fault.ErrUnsupported naming it", only.name, err)
				}
				servetest.SameRows(t, auto.Rows(t, auto.Plan(t, req)), local.Rows(t, local.Plan(t, req)))
			}
			auto.Plan(t, splits.Request{Table: "hist.t"})
			if l, r := auto.scans(t); l != 2 || r != 1 {
				t.Errorf("auto counted %v local and %v remote scans, want 2 (fromSnapshot, the sequence numbers) and 1", l, r)
			}
		})
	}
}

// TestRealRemotePlanningRefusals: a catalog configured to plan remotely
// whose server does not plan (Iceberg's server with planning off, which
// leaves the endpoints out of /v1/config) refuses every plan with
// fault.ErrUnsupported (a 422) naming the catalog and the endpoints it
// lacks, while auto plans the same table locally with the oracle's rows.
func TestRealRemotePlanningRefusals(t *testing.T) {
	dir := t.TempDir()
	off := icebergrest.Start(t, dir, icebergrest.WithPlanning(icebergrest.NoPlanning))
	tbl := planningTable(t, off)
	cfg := func(mode string) catalog.Config {
		return catalog.Config{Type: "rest", Name: "lake", URI: off, DataRoots: []string{dir}, ScanPlanning: mode}
	}

	remote := newPlanningReplica(t, cfg("remote"))
	_, err := remote.Planner.Plan(t.Context(), splits.Request{Table: "hist.t"})
	if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), `catalog "lake"`) || !strings.Contains(err.Error(), "/plan/{plan-id}") {
		t.Fatalf("remote planning on a server that does not plan: %v, want fault.ErrUnsupported naming the catalog and the endpoints", err)
	}

	auto := newPlanningReplica(t, cfg("auto"))
	want, err := tablegen.OracleRows(t.Context(), tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	servetest.SameRows(t, auto.Rows(t, auto.Plan(t, splits.Request{Table: "hist.t", Mode: splits.ModeRows})), want)
	if l, r := auto.scans(t); l != 1 || r != 0 {
		t.Fatalf("auto on a server that does not plan counted %v local and %v remote scans, want 1 and 0", l, r)
	}
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
