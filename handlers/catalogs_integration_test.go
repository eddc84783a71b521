//go:build integration

package handlers_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"rest_seaweedfs", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return sidecartest.SeaweedREST(t, sidecartest.StartSeaweed(t))
		}},
		catalogUnderTest{"sql_postgres_seaweedfs_s3", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			w := sidecartest.StartSeaweed(t)
			pg := sidecartest.StartPostgres(t)
			return sidecartest.SQLCatalog(t, pg.URI(pg.Password), "s3://"+w.PlainBucket+"/warehouse", w.S3Props())
		}},
	)
}

// catalogUnderTest opens a catalog to write with and says how the sidecar
// reaches the same catalog.
type catalogUnderTest struct {
	name string
	open func(t *testing.T) (catalog.Catalog, sidecatalog.Config)
}

// integrationCatalogs are the catalogs on servers of their own, which the
// integration tier starts: SeaweedFS's REST catalog, PostgreSQL's SQL
// catalog and Iceberg's own REST catalog server. The catalogs that need
// no server (local, the SQL catalog on SQLite) run the same scenario in
// the catalog package's TestEveryCatalog.
var integrationCatalogs []catalogUnderTest

// TestEveryCatalog runs one scenario through every catalog on a real
// server: create a v2 table through the catalog, append, delete by
// position and by equality; the sidecar's rows equal the expected live
// rows and ReadTasks'; a snapshot-time query returns the earlier state.
func TestEveryCatalog(t *testing.T) {
	sc := tablegen.ScenarioNamed(t, "positional_and_equality")
	ctx := context.Background()
	for _, c := range integrationCatalogs {
		t.Run(c.name, func(t *testing.T) {
			cat, cfg := c.open(t)
			tbl, err := sc.Build(ctx, cat, table.Identifier{"lake", "orders"})
			if err != nil {
				t.Fatalf("build the scenario through the catalog: %v", err)
			}
			srv := newServer(t, cfg, nil)

			want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(sc.LiveIDs) {
				t.Fatalf("ReadTasks gives %d rows, the scenario says %d", len(want), len(sc.LiveIDs))
			}
			p := srv.plan(t, q("table", "lake.orders"))
			if p.Mode != "v2" {
				t.Fatalf("planned %s, want v2", p.Mode)
			}
			servetest.SameRows(t, srv.rows(t, p), want)

			// The first snapshot, by the time it was committed.
			first := tbl.Metadata().Snapshots()[0]
			earlier, err := tablegen.OracleRows(ctx, tbl, first.SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(first.TimestampMs).UTC().Format(time.RFC3339Nano)
			p = srv.plan(t, q("table", "lake.orders", "mode", "rows", "snapshotTime", at))
			if p.SnapshotID == nil || *p.SnapshotID != first.SnapshotID {
				t.Fatalf("snapshotTime %s planned %v, want %s", at, p.SnapshotID, strconv.FormatInt(first.SnapshotID, 10))
			}
			servetest.SameRows(t, srv.rows(t, p), earlier)
		})
	}
}
