package catalog_test

import (
	"context"
	"testing"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// catalogUnderTest opens a catalog to write with and says how the sidecar
// reaches the same catalog.
type catalogUnderTest struct {
	name string
	open func(t *testing.T) (icecatalog.Catalog, catalog.Config)
}

// integrationCatalogs are the catalogs the integration tier
// (-tags integration) adds: the SQL catalog, which the default build does
// not link.
var integrationCatalogs []catalogUnderTest

func catalogsUnderTest() []catalogUnderTest {
	return append([]catalogUnderTest{
		{"local", func(t *testing.T) (icecatalog.Catalog, catalog.Config) {
			dir := t.TempDir()
			return catalogtest.Local(t, dir), catalog.Config{Type: "local", Warehouse: dir}
		}},
	}, integrationCatalogs...)
}

// TestEveryCatalog runs one scenario through every catalog: create a v2
// table through the catalog, append, delete by position and by equality;
// the sidecar's rows equal the expected live rows and ReadTasks'; a
// snapshot-time query returns the earlier state. The catalogs on servers
// of their own (SeaweedFS's REST catalog, PostgreSQL's SQL catalog,
// Iceberg's REST catalog server) run the same scenario in handlers'
// integration tier, which starts those servers.
func TestEveryCatalog(t *testing.T) {
	sc := tablegen.ScenarioNamed(t, "positional_and_equality")
	ctx := context.Background()
	for _, c := range catalogsUnderTest() {
		t.Run(c.name, func(t *testing.T) {
			cat, cfg := c.open(t)
			tbl, err := sc.Build(ctx, cat, table.Identifier{"lake", "orders"})
			if err != nil {
				t.Fatalf("build the scenario through the catalog: %v", err)
			}
			s := newServed(t, cfg)

			want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(sc.LiveIDs) {
				t.Fatalf("ReadTasks gives %d rows, the scenario says %d", len(want), len(sc.LiveIDs))
			}
			p := s.Plan(t, splits.Request{Table: "lake.orders"})
			if p.Path != splits.PathRows {
				t.Fatalf("planned %s, want %s", p.Path, splits.PathRows)
			}
			servetest.SameRows(t, s.Rows(t, p), want)

			// The first snapshot, by the time it was committed.
			first := tbl.Metadata().Snapshots()[0]
			earlier, err := tablegen.OracleRows(ctx, tbl, first.SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(first.TimestampMs).UTC()
			p = s.Plan(t, splits.Request{Table: "lake.orders", Mode: splits.ModeRows, SnapshotTime: &at})
			if p.SnapshotID != first.SnapshotID {
				t.Fatalf("snapshotTime %s planned %d, want %d", at.Format(time.RFC3339Nano), p.SnapshotID, first.SnapshotID)
			}
			servetest.SameRows(t, s.Rows(t, p), earlier)
		})
	}
}
