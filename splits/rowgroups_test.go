package splits

import (
	"context"
	"path"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/storage"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// rowGroupsTable writes tablegen.RowGroups as rg.t into a fresh warehouse
// and returns the table and a planner over the warehouse.
func rowGroupsTable(t *testing.T, formatVersion int, offsets tablegen.SplitOffsets) (*table.Table, *Planner) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat, err := hadoop.NewCatalog("test", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	tbl, err := tablegen.RowGroups(ctx, cat, table.Identifier{"rg", "t"}, formatVersion, offsets)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := NewSigner(key(5))
	p, err := NewPlanner(CatalogConfig{Type: "local", Warehouse: dir}, storage.New(nil, nil), signer)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, p
}

// TestPlanTakesIcebergRangesWhole: iceberg-go splits a file larger than the
// table's read.split.target-size into byte-range tasks; the plan still has
// one split per data file, never the same file twice.
func TestPlanTakesIcebergRangesWhole(t *testing.T) {
	ctx := context.Background()
	tbl, p := rowGroupsTable(t, 2, tablegen.SplitOffsetsKept)
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(map[string]string{table.ReadSplitTargetSizeKey: "4000"}); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) <= 3 {
		t.Fatalf("iceberg-go planned %d tasks for 3 files; the test wants it to split them", len(tasks))
	}
	for _, mode := range []Mode{ModeAuto, ModeRows} {
		plan, err := p.Plan(ctx, Request{Table: "rg.t", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range plan.Splits {
			names = append(names, path.Base(s.Split.Data.Path))
		}
		want := []string{tablegen.DataFileName(1), tablegen.DataFileName(2), tablegen.DataFileName(3)}
		if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
			t.Fatalf("mode %s: splits of %v, want one per data file %v", mode, names, want)
		}
	}
}
