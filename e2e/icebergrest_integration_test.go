//go:build integration

package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// javaFirstSeed is the first seed of TestRealIcebergRESTJavaHistories:
// with -histories 1, one seed alone, as a failure names it.
var javaFirstSeed = flag.Int64("java-first-seed", 1, "the first seed of the Iceberg Java histories (-histories sets the count)")

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
			cat, cfg := sidecartest.IcebergREST(t, mode.opts...)
			srv := sidecartest.NewServer(t, cfg, nil)
			for i := range testenv.Histories(6, 6) {
				ident := table.Identifier{"hist", fmt.Sprintf("t%d", i)}
				h, err := tablegen.NewHistory(ctx, cat, ident, sidecartest.HistoryOptions(i))
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
					sidecartest.AssertSnapshotRows(t, srv, "hist."+ident[1], tbl, s.SnapshotID)
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
		icebergrest.RegisterTables(t, url, table.Identifier{fmt.Sprintf("h%d", h.Seed)}, sidecartest.JavaCommits(h))
	}
	srv := sidecartest.NewServer(t, sidecatalog.Config{Type: "rest", Name: "iceberg", URI: url, DataRoots: []string{dir}}, nil)
	for _, h := range histories {
		t.Run(fmt.Sprintf("seed%d_v%d", h.Seed, h.FormatVersion), func(t *testing.T) {
			sidecartest.CheckJavaHistory(t, h, srv, fmt.Sprintf("h%d", h.Seed))
		})
	}
}
