package catalog_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// TestIcebergRESTServer serves tables through Iceberg's own REST catalog
// server, the protocol's reference implementation (internal/icebergrest),
// in the role the hand-written REST fakes cannot play: a catalog whose
// answers no test wrote. tablegen's scenarios, written by iceberg-go, are
// registered with it, one of them in a nested namespace as well; the
// sidecar's catalog, which signs in with OAuth2 client credentials, lists
// them (the status page's list) at their current snapshots, and they plan
// through it and read at every snapshot with the rows of iceberg-go's
// Scan.ReadTasks; a table or namespace the server lacks is
// fault.ErrTableNotFound (404 table_not_found).
func TestIcebergRESTServer(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs Iceberg's REST catalog server")
	ctx := context.Background()
	dir := t.TempDir()
	writer := catalogtest.SnappyWrites(catalogtest.Local(t, dir))
	tables, err := tablegen.BuildScenarios(ctx, writer)
	if err != nil {
		t.Fatal(err)
	}
	url := icebergrest.Start(t, t.TempDir())
	icebergrest.RegisterTables(t, url, table.Identifier{"scenarios"}, func(yield func(string, string) bool) {
		for name, tbl := range tables {
			if !yield(name, tbl.MetadataLocation()) {
				return
			}
		}
	})
	// One table in a nested namespace, which the server spells with its
	// own separator (namespace-separator %2E in /v1/config).
	nested := tables["positional_and_equality"]
	icebergrest.RegisterTables(t, url, table.Identifier{"nested", "deeper"}, func(yield func(string, string) bool) {
		yield("t", nested.MetadataLocation())
	})
	s := newServed(t, catalog.Config{Type: "rest", Name: "iceberg", URI: url, DataRoots: []string{dir},
		Props: map[string]string{"credential": "sidecar:sidecar-secret"}})

	names, truncated, err := s.Cat.Tables(ctx)
	if err != nil || truncated {
		t.Fatalf("list the tables: %q (truncated %v), %v", names, truncated, err)
	}
	listed := func(name string, tbl *table.Table) {
		t.Helper()
		if !slices.Contains(names, name) {
			t.Errorf("the catalog does not list %s: %q", name, names)
			return
		}
		loaded, err := s.Cat.LoadTable(ctx, strings.Split(name, "."))
		if err != nil {
			t.Errorf("load %s: %v", name, err)
			return
		}
		if got, want := loaded.CurrentSnapshot().SnapshotID, tbl.CurrentSnapshot().SnapshotID; got != want {
			t.Errorf("%s loads at snapshot %d, want %d", name, got, want)
		}
	}
	for _, sc := range tablegen.Scenarios() {
		listed("scenarios."+sc.Name, tables[sc.Name])
	}
	listed("nested.deeper.t", nested)
	snapshotRows(t, s, "nested.deeper.t", nested, nested.CurrentSnapshot().SnapshotID)

	for _, sc := range tablegen.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			tbl := tables[sc.Name]
			for _, snap := range tbl.Metadata().Snapshots() {
				snapshotRows(t, s, "scenarios."+sc.Name, tbl, snap.SnapshotID)
			}
		})
	}

	for _, name := range []string{"scenarios.absent", "absent.table"} {
		if _, err := s.Planner.Plan(ctx, splits.Request{Table: name}); !errors.Is(err, fault.ErrTableNotFound) {
			t.Errorf("plan %s: %v, want ErrTableNotFound", name, err)
		}
	}
}

// snapshotRows plans the snapshot snapshotID of tbl, which s serves as
// name, on the row path, and holds its rows to iceberg-go's
// Scan.ReadTasks rows.
func snapshotRows(t *testing.T, s served, name string, tbl *table.Table, snapshotID int64) {
	t.Helper()
	want, err := tablegen.OracleRows(context.Background(), tbl, snapshotID)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Plan(t, splits.Request{Table: name, Mode: splits.ModeRows, SnapshotID: &snapshotID})
	servetest.SameRows(t, s.Rows(t, p), want)
}
