//go:build integration

package handlers_test

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/servetest"
	"github.com/druidiceberg/sidecar/internal/tablegen"

	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"rest_seaweedfs", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return seaweedREST(t, startSeaweed(t))
		}},
		catalogUnderTest{"sql_postgres_seaweedfs_s3", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			w := startSeaweed(t)
			pg := startPostgres(t)
			return sqlCatalog(t, pg.uri(pg.Password), "s3://"+w.PlainBucket+"/warehouse", w.s3Props())
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
	sc := scenarioNamed(t, "positional_and_equality")
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

// seaweedREST opens SeaweedFS's REST catalog with iceberg-go, and says how the
// sidecar reaches it.
func seaweedREST(t *testing.T, w *seaweed) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	cfg := sidecatalog.Config{Type: "rest", Name: "seaweed", URI: w.RESTURL, Warehouse: "s3://" + w.Bucket, Props: w.props()}
	all := maps.Clone(cfg.Props)
	all["type"], all["uri"], all["warehouse"] = "rest", cfg.URI, cfg.Warehouse
	cat, err := catalog.Load(context.Background(), cfg.Name, all)
	if err != nil {
		t.Fatalf("open SeaweedFS's REST catalog: %v", err)
	}
	return cat, cfg
}

// sqlCatalog opens iceberg-go's SQL catalog on the database at uri (SQLite
// or PostgreSQL), and says how the sidecar reaches it (it infers driver and
// dialect from the URI).
func sqlCatalog(t *testing.T, uri, warehouse string, props map[string]string) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	all := maps.Clone(props)
	all["type"], all["uri"], all["warehouse"] = "sql", uri, warehouse
	all["sql.driver"], all["sql.dialect"] = "sqlite", "sqlite"
	if strings.HasPrefix(uri, "postgres://") {
		all["sql.driver"], all["sql.dialect"] = "pgx", "postgres"
	}
	cat, err := catalog.Load(context.Background(), "test", all)
	if err != nil {
		t.Fatalf("open the SQL catalog: %v", err)
	}
	// The sidecar names the catalog otherwise than the writers (its
	// IcebergName): the SQL catalog keys its rows by the writers' name.
	return cat, sidecatalog.Config{Type: "sql", Name: "lake", IcebergName: "test", URI: uri, Warehouse: warehouse, Props: props}
}
