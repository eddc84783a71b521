package tablegen

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestKeyedTables holds the keyed tables' expected rows of every snapshot
// against iceberg-go's ReadTasks.
func TestKeyedTables(t *testing.T) {
	ctx := context.Background()
	for name, build := range map[string]func(context.Context, *testing.T, table.Identifier) *Built{
		"spec_change": func(ctx context.Context, t *testing.T, id table.Identifier) *Built {
			b, err := SpecChange(ctx, newCatalog(t), id)
			must(t, err)
			return b
		},
		"lineage": func(ctx context.Context, t *testing.T, id table.Identifier) *Built {
			b, _, err := Lineage(ctx, newCatalog(t), id)
			must(t, err)
			return b
		},
		"upgraded_v1": func(ctx context.Context, t *testing.T, id table.Identifier) *Built {
			b, err := UpgradedV1(ctx, newCatalog(t), id)
			must(t, err)
			return b
		},
		"default_after_delete": func(ctx context.Context, t *testing.T, id table.Identifier) *Built {
			b, err := DefaultAfterDelete(ctx, newCatalog(t), id)
			must(t, err)
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			b := build(ctx, t, table.Identifier{"keyed", name})
			checkSnapshots(t, ctx, b.Table, b)
		})
	}
}

// TestUpgradedV1 holds what the upgrade left: format version 2, the v1
// files with every delete committed after it attached, and the equality
// delete committed with C not attached to C.
func TestUpgradedV1(t *testing.T) {
	ctx := context.Background()
	ident := table.Identifier{"keyed", "upgraded"}
	cat := newCatalog(t)
	b, err := UpgradedV1(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if v := loaded.Metadata().Version(); v != 2 {
		t.Fatalf("format version %d, want 2", v)
	}
	if len(b.Snapshots) != 5 {
		t.Fatalf("%d snapshots, want 5", len(b.Snapshots))
	}
	want := map[string]Attached{
		DataFileName(1): {Positional: []string{"pos-a2-b1.parquet"}, Equality: [][]int{{1}, {1}}},
		DataFileName(2): {Positional: []string{"pos-a2-b1.parquet"}, Equality: [][]int{{1}, {1}}},
		DataFileName(3): {},
	}
	if got := planned(t, ctx, loaded); !reflect.DeepEqual(got, want) {
		t.Errorf("PlanFiles attached\n got: %+v\nwant: %+v", got, want)
	}
}

// TestDefaultAfterDelete holds the schema the builder leaves: n with its
// initial-default, added after the first equality delete.
func TestDefaultAfterDelete(t *testing.T) {
	ctx := context.Background()
	ident := table.Identifier{"keyed", "default"}
	cat := newCatalog(t)
	b, err := DefaultAfterDelete(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := loaded.Schema().FindFieldByName("n")
	if !ok || n.ID != 3 || n.InitialDefault == nil {
		t.Fatalf("field n is %+v, want id 3 with an initial-default", n)
	}
	if got := fmt.Sprint(n.InitialDefault); got != strconv.Itoa(DefaultNInitial) {
		t.Errorf("initial-default of n is %s, want %d", got, DefaultNInitial)
	}
	// Where the builder says iceberg-go's reader cannot read a snapshot,
	// it must still fail there, or the note is stale.
	differs := 0
	for i, s := range b.Snapshots {
		if s.OracleDiffers == "" {
			continue
		}
		differs++
		rows, err := OracleRows(ctx, loaded, s.SnapshotID)
		if err == nil || !strings.Contains(err.Error(), "equality field ID 3 (n) not found") {
			t.Errorf("snapshot %d: iceberg-go read %d rows with error %v; the builder says: %s", i+1, len(rows), err, s.OracleDiffers)
		}
	}
	if differs != 2 {
		t.Errorf("%d snapshots not held to the oracle, want the 2 with the delete on (id, n)", differs)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
}

// TestSpelled: the rows of every snapshot equal iceberg-go's, so iceberg-go
// too ignores the position deletes that spell the data file otherwise.
func TestSpelled(t *testing.T) {
	ctx := context.Background()
	b, err := Spelled(ctx, newCatalog(t), table.Identifier{"keyed", "spelled"}, "s3", "s3a")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshots(t, ctx, b.Table, b)
	if got := len(b.Current().Rows); got != 4 {
		t.Errorf("current snapshot expects %d rows, want 4", got)
	}
}

// TestForeignStore: iceberg-go's reader cannot open gs:// or abfss://
// files of a local table and fails the scan of a snapshot that names one, while
// the snapshot before it reads as expected.
func TestForeignStore(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ data, del string }{{"gs", ""}, {"", "abfss"}} {
		b, err := ForeignStore(ctx, newCatalog(t), table.Identifier{"keyed", "foreign"}, tc.data, tc.del)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Unreadable || len(b.Snapshots) != 2 {
			t.Fatalf("%+v: Unreadable %v, %d snapshots; want true, 2", tc, b.Unreadable, len(b.Snapshots))
		}
		first, err := OracleRows(ctx, b.Table, b.Snapshots[0].SnapshotID)
		if err != nil || !slices.Equal(first, b.Snapshots[0].Rows) {
			t.Errorf("%+v: snapshot 1: oracle %v, %v; want %v", tc, first, err, b.Snapshots[0].Rows)
		}
		// The table's FileIO is iceberg-go's local one, which refuses any
		// other scheme.
		rows, err := OracleRows(ctx, b.Table, b.Current().SnapshotID)
		if want := fmt.Sprintf("scheme %q", tc.data+tc.del); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: oracle read %d rows with error %v, want one that names %s", tc, len(rows), err, want)
		}
	}
}
