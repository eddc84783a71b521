package reader_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// fixtureOracleFailures records the fixtures iceberg-go's own reader cannot
// read, with a piece of its error; the reader must still read them (see
// TestFixtures).
var fixtureOracleFailures = map[string]string{}

// TestFixturesAgainstOracle plans and reads every shared fixture, at the
// current snapshot and at every snapshot of its extra_checks, through the
// static catalog and a location map onto its folder, and holds the rows
// against iceberg-go's Scan.ReadTasks on the same table.
func TestFixturesAgainstOracle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	exps, err := filepath.Glob(filepath.Join(fixturesDir, "*", "expected.json"))
	if err != nil || len(exps) == 0 {
		t.Fatalf("no fixtures under %s: %v", fixturesDir, err)
	}
	for _, exp := range exps {
		dir, err := filepath.Abs(filepath.Dir(exp))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			var fx fixture
			raw, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			tbl, _ := loadFixture(t, ctx, dir, fx)
			var maps []catalog.Mapping
			for _, p := range fx.LocationPrefixes {
				maps = append(maps, catalog.Mapping{From: p, To: dir})
			}
			pr := catalogPlanned(t, catalog.Config{
				Type:        "static",
				Tables:      map[string]string{"fixtures.t": filepath.Join(dir, fx.Metadata)},
				LocationMap: maps,
			}, plannedDeleteCacheSize)
			snaps := []int64{tbl.CurrentSnapshot().SnapshotID}
			for _, c := range fx.ExtraChecks {
				snaps = append(snaps, c.SnapshotID)
			}
			for _, id := range snaps {
				want, err := tablegen.OracleRows(ctx, tbl, id)
				if msg, known := fixtureOracleFailures[name]; known {
					if err == nil || !strings.Contains(err.Error(), msg) {
						t.Fatalf("snapshot %d: iceberg-go read %d rows with error %v; this test records it fails with %q", id, len(want), err, msg)
					}
					continue
				}
				if err != nil {
					t.Fatalf("snapshot %d: oracle: %v", id, err)
				}
				servetest.SameRows(t, pr.Rows(t, pr.Plan(t, rowsRequest("fixtures.t", id))), want)
			}
		})
	}
}
