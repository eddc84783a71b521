//go:build integration

package handlers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"rest_iceberg", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return icebergREST(t)
		}},
		catalogUnderTest{"rest_iceberg_server_planning", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return icebergREST(t, icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(1))
		}},
	)
}

// icebergREST starts Iceberg's own REST catalog server over a new local
// warehouse, opens it with iceberg-go's REST client to write with, and
// says how the sidecar reaches it.
func icebergREST(t *testing.T, opts ...icebergrest.Option) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	warehouse := t.TempDir()
	url := icebergrest.Start(t, warehouse, opts...)
	cat, err := rest.NewCatalog(context.Background(), "writer", url)
	if err != nil {
		t.Fatalf("open Iceberg's REST catalog server: %v", err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat, sidecatalog.Config{Type: "rest", Name: "iceberg", URI: url, DataRoots: []string{warehouse}}
}

// TestRealIcebergRESTHistories commits random tablegen histories (appends,
// position and equality deletes, overwrites, schema changes) through
// Iceberg's own REST catalog server, which validates every commit's
// requirements and writes its metadata, and holds the sidecar's rows at
// every snapshot to iceberg-go's Scan.ReadTasks: against a server that
// leaves planning to the client, and against one that plans scans itself
// (one file scan task per plan task, so that a plan comes in plan tasks),
// which the sidecar plans on (scan planning auto, the default).
func TestRealIcebergRESTHistories(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		opts []icebergrest.Option
	}{
		{"client_planning", nil},
		{"server_planning", []icebergrest.Option{icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(1)}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			cat, cfg := icebergREST(t, mode.opts...)
			srv := newServer(t, cfg, nil)
			for i := range testenv.Histories(6, 6) {
				ident := table.Identifier{"hist", fmt.Sprintf("t%d", i)}
				h, err := tablegen.NewHistory(ctx, cat, ident, historyOptions(i))
				if err != nil {
					t.Fatalf("history %d: %v", i, err)
				}
				for range 10 {
					if _, err := h.Step(ctx); err != nil {
						t.Fatalf("history %d, through Iceberg's REST catalog server: %v", i, err)
					}
				}
				tbl := h.Table()
				for _, s := range tbl.Metadata().Snapshots() {
					assertSnapshotRows(t, srv, "hist."+ident[1], tbl, s.SnapshotID)
				}
			}
		})
	}
}

// TestRealIcebergRESTJavaHistories is TestIcebergJavaHistories through
// Iceberg's own REST catalog server: every commit of every random history
// Iceberg Java writes is registered with the server as a table of its own
// (namespace hSEED), and the sidecar loads each through the server and must
// give Iceberg Java's rows at every commit and every snapshot.
func TestRealIcebergRESTJavaHistories(t *testing.T) {
	dir := t.TempDir()
	histories := javaoracle.Write(t, dir, *javaFirstSeed, testenv.Histories(8, 8))
	url := icebergrest.Start(t, t.TempDir())
	for _, h := range histories {
		registerTables(t, url, table.Identifier{fmt.Sprintf("h%d", h.Seed)}, javaCommits(h))
	}
	srv := newServer(t, sidecatalog.Config{Type: "rest", Name: "iceberg", URI: url, DataRoots: []string{dir}}, nil)
	for _, h := range histories {
		t.Run(fmt.Sprintf("seed%d_v%d", h.Seed, h.FormatVersion), func(t *testing.T) {
			checkJavaHistory(t, h, srv, fmt.Sprintf("h%d", h.Seed))
		})
	}
}
