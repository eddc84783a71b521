package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// TestIcebergRESTServer serves tables through Iceberg's own REST catalog
// server, the protocol's reference implementation (internal/icebergrest),
// in the role the hand-written REST fakes cannot play: a catalog whose
// answers no test wrote. tablegen's scenarios, written by iceberg-go, are
// registered with it, one of them in a nested namespace as well; the
// sidecar, which signs in with OAuth2 client credentials, lists them, plans
// them through it and streams every snapshot with the rows of iceberg-go's
// Scan.ReadTasks; a table or namespace the server lacks is the sidecar's
// 404 table_not_found.
func TestIcebergRESTServer(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs Iceberg's REST catalog server")
	dir, tables := sharedScenarios(t)
	url := icebergrest.Start(t, t.TempDir())
	registerTables(t, url, table.Identifier{"scenarios"}, func(yield func(string, string) bool) {
		for name, tbl := range tables {
			if !yield(name, tbl.MetadataLocation()) {
				return
			}
		}
	})
	// One table in a nested namespace, which the server spells with its
	// own separator (namespace-separator %2E in /v1/config).
	nested := tables["positional_and_equality"]
	registerTables(t, url, table.Identifier{"nested", "deeper"}, func(yield func(string, string) bool) {
		yield("t", nested.MetadataLocation())
	})
	srv := newServer(t, sidecatalog.Config{Type: "rest", Name: "iceberg", URI: url, DataRoots: []string{dir},
		Props: map[string]string{"credential": "sidecar:sidecar-secret"}}, nil)

	resp, status := srv.get(t, "/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the status page: %d %s", resp.StatusCode, status)
	}
	for _, sc := range tablegen.Scenarios() {
		snap := strconv.FormatInt(tables[sc.Name].CurrentSnapshot().SnapshotID, 10)
		if !strings.Contains(string(status), "scenarios."+sc.Name) || !strings.Contains(string(status), snap) {
			t.Errorf("the status page does not list scenarios.%s at snapshot %s:\n%s", sc.Name, snap, status)
		}
	}
	if !strings.Contains(string(status), "nested.deeper.t") {
		t.Errorf("the status page does not list nested.deeper.t:\n%s", status)
	}
	assertSnapshotRows(t, srv, "nested.deeper.t", nested, nested.CurrentSnapshot().SnapshotID)

	for _, sc := range tablegen.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			tbl := tables[sc.Name]
			for _, s := range tbl.Metadata().Snapshots() {
				assertSnapshotRows(t, srv, "scenarios."+sc.Name, tbl, s.SnapshotID)
			}
		})
	}

	for _, name := range []string{"scenarios.absent", "absent.table"} {
		resp, body := srv.get(t, "/splits?"+q("table", name).Encode())
		if resp.StatusCode != http.StatusNotFound || errorCode(t, body) != "table_not_found" {
			t.Errorf("/splits?table=%s: %d %s, want 404 table_not_found", name, resp.StatusCode, body)
		}
	}
}

// registerTables registers tables (name to metadata file) in the namespace
// ns of the REST catalog at url, creating the namespace and its parents.
func registerTables(t testing.TB, url string, ns table.Identifier, tables func(yield func(name, metadata string) bool)) {
	t.Helper()
	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "writer", url)
	if err != nil {
		t.Fatalf("open the REST catalog at %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	for i := range ns {
		if err := cat.CreateNamespace(ctx, ns[:i+1], nil); err != nil {
			t.Fatalf("create the namespace %v: %v", ns[:i+1], err)
		}
	}
	for name, metadata := range tables {
		ident := append(slices.Clone(ns), name)
		if _, err := cat.RegisterTable(ctx, ident, metadata); err != nil {
			t.Fatalf("register %v (%s): %v", ident, metadata, err)
		}
	}
}
