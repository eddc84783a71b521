package reader_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// TestOracle plans and reads every table written with iceberg-go's own
// writers (tablegen's scenarios), at every snapshot, and holds the rows
// against iceberg-go's Scan.ReadTasks rows on the same snapshot, and
// against the bytes a reader without a delete cache gives for the same
// splits.
func TestOracle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, tables := sharedScenarios(t)
	pr := localPlanned(t, dir)
	plain := catalogPlanned(t, catalog.Config{Type: "local", Warehouse: dir}, 0)
	for _, sc := range tablegen.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			tbl := tables[sc.Name]
			name := "scenarios." + sc.Name
			snap := tbl.CurrentSnapshot()
			want, err := tablegen.OracleRows(ctx, tbl, snap.SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(sc.LiveIDs) {
				t.Fatalf("oracle gives %d rows, the scenario says %d", len(want), len(sc.LiveIDs))
			}
			p := pr.Plan(t, rowsRequest(name, 0))
			if p.SnapshotID != snap.SnapshotID {
				t.Fatalf("planned snapshot %d, want %d", p.SnapshotID, snap.SnapshotID)
			}
			servetest.SameRows(t, pr.Rows(t, p), want)
			assertSameBodies(t, pr, plain, p)

			auto := pr.Plan(t, splits.Request{Table: name})
			deletes := 0
			for _, a := range sc.Plan {
				deletes += len(a.Positional) + len(a.Equality) + len(a.DeletionVectors)
			}
			if wantPath := map[bool]splits.Path{true: splits.PathRows, false: splits.PathFiles}[deletes > 0]; auto.Path != wantPath {
				t.Fatalf("auto planned %s, want %s", auto.Path, wantPath)
			}

			// Every earlier snapshot too: time travel reads the table as it was.
			for _, s := range tbl.Metadata().Snapshots() {
				want, err := tablegen.OracleRows(ctx, tbl, s.SnapshotID)
				if err != nil {
					t.Fatal(err)
				}
				p := pr.Plan(t, rowsRequest(name, s.SnapshotID))
				servetest.SameRows(t, pr.Rows(t, p), want)
				assertSameBodies(t, pr, plain, p)
			}
		})
	}
	if cs := pr.DeleteCache.Stats(); cs.Hits[token.DeletePosition] == 0 || cs.Hits[token.DeleteEquality] == 0 || cs.Hits[token.DeleteDeletionVector] == 0 {
		t.Errorf("the scenarios share delete files between splits and snapshots, yet the cache says %+v", cs)
	}
}

// assertSameBodies reads every split of p, planned by pr, with pr and with
// other, and holds the two to the same bytes.
func assertSameBodies(t *testing.T, pr, other *servetest.Replica, p splits.Plan) {
	t.Helper()
	for _, s := range p.Splits {
		if body, obody := pr.MustReadToken(t, s.Token), other.MustReadToken(t, s.Token); !bytes.Equal(body, obody) {
			t.Fatalf("split %s: %d bytes; the other reader %d bytes", s.Parts[0].Data.Path, len(body), len(obody))
		}
	}
}
