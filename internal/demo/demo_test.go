package demo

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

func TestWrite(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	if err := Write(ctx, cat); err != nil {
		t.Fatalf("write: %v", err)
	}

	orders, err := cat.LoadTable(ctx, Orders)
	if err != nil {
		t.Fatalf("load demo.orders: %v", err)
	}
	customers, err := cat.LoadTable(ctx, Customers)
	if err != nil {
		t.Fatalf("load demo.customers: %v", err)
	}

	t.Run("orders live rows", func(t *testing.T) {
		want := []string{
			`{"order_id":1001,"customer_id":501,"amount":"129.99","status":"shipped","order_ts":1709284500000}`,
			`{"order_id":1003,"customer_id":503,"amount":"310.00","status":"delivered","order_ts":1709390832000}`,
			`{"order_id":1007,"customer_id":502,"amount":"240.00","status":"shipped","order_ts":1709753400000}`,
		}
		if got := oracle(t, ctx, orders); !slices.Equal(got, want) {
			t.Errorf("demo.orders rows\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
	})

	t.Run("orders history", func(t *testing.T) {
		snaps := orders.Metadata().Snapshots()
		if len(snaps) != 4 {
			t.Fatalf("demo.orders has %d snapshots, want 4", len(snaps))
		}
		for i, want := range []int{5, 7, 4, 3} {
			rows, err := tablegen.OracleRows(ctx, orders, snaps[i].SnapshotID)
			if err != nil {
				t.Fatalf("oracle at snapshot %d: %v", i+1, err)
			}
			if len(rows) != want {
				t.Errorf("snapshot %d has %d live rows, want %d", i+1, len(rows), want)
			}
		}
	})

	t.Run("orders plan", func(t *testing.T) {
		// B's order_id bounds [1006, 1007] exclude the key 1005, so PlanFiles
		// prunes the equality delete from B.
		want := map[string][]string{
			icewrite.DataFileName(1): {"positional pos-deletes-00001.parquet", "equality [1]"},
			icewrite.DataFileName(2): {"positional pos-deletes-00001.parquet"},
		}
		if got := attached(t, ctx, orders); !reflect.DeepEqual(got, want) {
			t.Errorf("PlanFiles attached\n got: %v\nwant: %v", got, want)
		}
	})

	t.Run("customers", func(t *testing.T) {
		want := []string{
			`{"customer_id":501,"name":"Ana Souza","country":"BR","signup_date":1699920000000}`,
			`{"customer_id":502,"name":"Lukas Meyer","country":"DE","signup_date":1704758400000}`,
			`{"customer_id":503,"name":"Priya Raman","country":"IN","signup_date":1656547200000}`,
			`{"customer_id":504,"name":"Emily Chen","country":"US","signup_date":1708473600000}`,
			`{"customer_id":505,"name":"Kenji Watanabe","country":"JP","signup_date":1690934400000}`,
		}
		if got := oracle(t, ctx, customers); !slices.Equal(got, want) {
			t.Errorf("demo.customers rows\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
		}
		if got, want := attached(t, ctx, customers), map[string][]string{icewrite.DataFileName(1): nil}; !reflect.DeepEqual(got, want) {
			t.Errorf("PlanFiles attached\n got: %v\nwant: %v", got, want)
		}
	})

	t.Run("idempotent", func(t *testing.T) {
		if err := Write(ctx, cat); err != nil {
			t.Fatalf("second write: %v", err)
		}
		for _, before := range []*table.Table{orders, customers} {
			after, err := cat.LoadTable(ctx, before.Identifier())
			if err != nil {
				t.Fatalf("reload %v: %v", before.Identifier(), err)
			}
			if after.MetadataLocation() != before.MetadataLocation() {
				t.Errorf("%v changed: metadata %s, was %s", before.Identifier(), after.MetadataLocation(), before.MetadataLocation())
			}
		}
	})
}

func TestWriteCreatesOnlyWhatIsAbsent(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	// A table of another shape already sits at demo.customers.
	if _, err := icewrite.CreateTable(ctx, cat, Customers, tablegen.MixedSchema(), 2); err != nil {
		t.Fatalf("pre-create demo.customers: %v", err)
	}
	if err := Write(ctx, cat); err != nil {
		t.Fatalf("write: %v", err)
	}
	customers, err := cat.LoadTable(ctx, Customers)
	if err != nil {
		t.Fatalf("load demo.customers: %v", err)
	}
	if customers.CurrentSnapshot() != nil || customers.Schema().NumFields() != tablegen.MixedSchema().NumFields() {
		t.Errorf("demo.customers was rebuilt; Write must leave an existing table alone")
	}
	orders, err := cat.LoadTable(ctx, Orders)
	if err != nil {
		t.Fatalf("load demo.orders: %v", err)
	}
	if got := len(oracle(t, ctx, orders)); got != len(OrdersLive) {
		t.Errorf("demo.orders has %d live rows, want %d", got, len(OrdersLive))
	}
}

// TestWriteWarehouse: the demo tables written into a folder that does not
// exist yet are the local warehouse of that folder, with demo.orders' live
// rows; a folder that cannot be made is an error that names it.
func TestWriteWarehouse(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "warehouse")
	if err := WriteWarehouse(ctx, dir); err != nil {
		t.Fatal(err)
	}
	orders, err := catalogtest.Local(t, dir).LoadTable(ctx, Orders)
	if err != nil {
		t.Fatalf("load demo.orders: %v", err)
	}
	if got := len(oracle(t, ctx, orders)); got != len(OrdersLive) {
		t.Errorf("demo.orders has %d live rows, want %d", got, len(OrdersLive))
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteWarehouse(ctx, filepath.Join(file, "warehouse")); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("a warehouse under a file: %v", err)
	}
}

// newCatalog returns a hadoop catalog over a warehouse in t.TempDir() that
// does not exist yet, as --demo may find it.
func newCatalog(t *testing.T) *hadoop.Catalog {
	t.Helper()
	return catalogtest.Local(t, filepath.Join(t.TempDir(), "warehouse"))
}

// oracle reads the current snapshot of tbl with tablegen.OracleRows, which
// reads with iceberg-go rather than the sidecar's reader.
func oracle(t *testing.T, ctx context.Context, tbl *table.Table) []string {
	t.Helper()
	rows, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatalf("oracle rows of %v: %v", tbl.Identifier(), err)
	}
	return rows
}

// attached lists, by data file base name, the delete files PlanFiles
// attaches to each data file of tbl: positional ones by base name, equality
// ones by field ids.
func attached(t *testing.T, ctx context.Context, tbl *table.Table) map[string][]string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatalf("plan files of %v: %v", tbl.Identifier(), err)
	}
	got := map[string][]string{}
	for _, task := range tasks {
		var files []string
		for _, f := range task.DeleteFiles {
			files = append(files, "positional "+path.Base(f.FilePath()))
		}
		for _, f := range task.EqualityDeleteFiles {
			files = append(files, fmt.Sprintf("equality %v", f.EqualityFieldIDs()))
		}
		for _, f := range task.DeletionVectorFiles {
			files = append(files, "deletion vector "+path.Base(f.FilePath()))
		}
		got[path.Base(task.File.FilePath())] = files
	}
	return got
}
