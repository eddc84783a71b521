package tablegen

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/testenv"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
)

// TestMain runs the package's tests with the garbage collector of the
// packages that write many tables (testenv.CollectLess).
func TestMain(m *testing.M) {
	testenv.CollectLess()
	os.Exit(m.Run())
}

// newCatalog returns a hadoop catalog over a fresh warehouse in t.TempDir(),
// whose tables write Snappy data and delete files: what the builders' tests
// check does not depend on the codec (catalogtest.SnappyWrites).
func newCatalog(tb testing.TB) catalog.Catalog {
	tb.Helper()
	return catalogtest.SnappyWrites(localCatalog(tb))
}

// localCatalog is newCatalog with iceberg-go's default codec, for the
// benchmarks, which measure writing and reading as the sidecar's tables are.
func localCatalog(tb testing.TB) *hadoop.Catalog {
	tb.Helper()
	return catalogtest.Local(tb, filepath.Join(tb.TempDir(), "warehouse"))
}

// planned is what PlanFiles attached, keyed by data file base name.
func planned(t *testing.T, ctx context.Context, tbl *table.Table) map[string]Attached {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatalf("plan files: %v", err)
	}
	got := map[string]Attached{}
	for _, task := range tasks {
		name := path.Base(task.File.FilePath())
		if _, dup := got[name]; dup {
			t.Fatalf("data file %s planned as more than one task", name)
		}
		var a Attached
		for _, f := range task.DeleteFiles {
			a.Positional = append(a.Positional, path.Base(f.FilePath()))
		}
		for _, f := range task.EqualityDeleteFiles {
			ids := slices.Clone(f.EqualityFieldIDs())
			slices.Sort(ids)
			a.Equality = append(a.Equality, ids)
		}
		for _, f := range task.DeletionVectorFiles {
			a.DeletionVectors = append(a.DeletionVectors, path.Base(f.FilePath()))
		}
		got[name] = normalizeAttached(a)
	}
	return got
}

// normalizeAttached sorts every list so attachments compare as sets.
func normalizeAttached(a Attached) Attached {
	a.Positional = slices.Sorted(slices.Values(a.Positional))
	a.DeletionVectors = slices.Sorted(slices.Values(a.DeletionVectors))
	eq := make([][]int, 0, len(a.Equality))
	for _, ids := range a.Equality {
		eq = append(eq, slices.Sorted(slices.Values(ids)))
	}
	slices.SortFunc(eq, slices.Compare)
	a.Equality = nil
	if len(eq) > 0 {
		a.Equality = eq
	}
	return a
}

// wantPlan renders a scenario's Plan keyed by data file base name.
func wantPlan(plan map[int]Attached) map[string]Attached {
	out := map[string]Attached{}
	for n, a := range plan {
		out[DataFileName(n)] = normalizeAttached(a)
	}
	return out
}

// oracle reads the current snapshot of tbl with OracleRows.
func oracle(t *testing.T, ctx context.Context, tbl *table.Table) []string {
	t.Helper()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		t.Fatalf("table %v has no snapshot", tbl.Identifier())
	}
	rows, err := OracleRows(ctx, tbl, snap.SnapshotID)
	if err != nil {
		t.Fatalf("oracle rows: %v", err)
	}
	return rows
}
