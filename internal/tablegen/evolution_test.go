package tablegen

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
	"github.com/parquet-go/parquet-go"
)

// checkSnapshots holds OracleRows against the expected rows of every
// snapshot of b, on the table as loaded from the catalog.
func checkSnapshots(t *testing.T, ctx context.Context, tbl *table.Table, b *Built) {
	t.Helper()
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != len(b.Snapshots) {
		t.Fatalf("table has %d snapshots, the builder expects %d", len(snaps), len(b.Snapshots))
	}
	for i, want := range b.Snapshots {
		if snaps[i].SnapshotID != want.SnapshotID {
			t.Fatalf("snapshot %d is %d, the builder recorded %d", i, snaps[i].SnapshotID, want.SnapshotID)
		}
		if want.OracleDiffers != "" {
			t.Logf("snapshot %d (%s): not held to the oracle: %s", i+1, want.Doc, want.OracleDiffers)
			continue
		}
		got, err := OracleRows(ctx, tbl, want.SnapshotID)
		if err != nil {
			t.Fatalf("snapshot %d (%s): oracle: %v", i+1, want.Doc, err)
		}
		if !slices.Equal(got, want.Rows) {
			t.Errorf("snapshot %d (%s): oracle rows differ\n got: %s\nwant: %s", i+1, want.Doc,
				strings.Join(got, "\n      "), strings.Join(want.Rows, "\n      "))
		}
	}
}

func TestEvolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := newCatalog(t)
	ident := table.Identifier{"evolution", "t"}
	b, err := Evolution(ctx, cat, ident)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	if got := len(loaded.Schemas()); got != 3 {
		t.Errorf("table has %d schemas, want 3", got)
	}
	checkSnapshots(t, ctx, loaded, b)
}

func TestMigrated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := newCatalog(t)
	ident := table.Identifier{"migrated", "t"}
	b, err := Migrated(ctx, cat, ident, true)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	if b.Unreadable {
		t.Error("Unreadable is set on the table with a name mapping")
	}
	nm := loaded.NameMapping()
	if nm == nil {
		t.Fatal("no schema.name-mapping.default")
	}
	var names []string
	for _, f := range nm {
		if f.FieldID != nil && *f.FieldID == 2 {
			names = f.Names
		}
	}
	if !slices.Contains(names, "cust_name") || !slices.Contains(names, "customer") {
		t.Errorf("name mapping of field 2 is %v, want both cust_name and customer", names)
	}
	checkSnapshots(t, ctx, loaded, b)
}

// parquetFieldIDs are the field ids of the top-level columns of a local
// Parquet file, 0 where a column has none.
func parquetFieldIDs(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(strings.TrimPrefix(path, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("open parquet file %s: %v", path, err)
	}
	out := map[string]int{}
	for _, fld := range pf.Schema().Fields() {
		out[fld.Name()] = fld.ID()
	}
	return out
}

func TestMigratedWithoutNameMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := newCatalog(t)
	ident := table.Identifier{"migrated", "no_mapping"}
	b, err := Migrated(ctx, cat, ident, false)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if !b.Unreadable {
		t.Error("Unreadable is not set")
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	if nm := loaded.NameMapping(); nm != nil {
		t.Fatalf("table still has a name mapping: %v", nm)
	}
	for _, n := range []int{1, 2} {
		p := icewrite.DataPath(loaded, DataFileName(n))
		for col, id := range parquetFieldIDs(t, p) {
			if id != 0 {
				t.Errorf("%s: column %s has field id %d, want none", DataFileName(n), col, id)
			}
		}
	}
	// iceberg-go's own reader refuses the imported files too, at every
	// snapshot: that is the behaviour the sidecar must match (an error, not
	// rows of nulls). Surprise: it does not fail with its "no name mapping
	// provided" error: arrow's pqarrow stamps PARQUET:field_id "-1" on
	// columns without an id, so iceberg-go believes the file has ids and
	// then finds one missing. The error is recovered from a panic and no
	// longer wraps iceberg.ErrInvalidSchema, hence the message match.
	for i, s := range b.Snapshots {
		rows, err := OracleRows(ctx, loaded, s.SnapshotID)
		if err == nil {
			t.Errorf("snapshot %d: oracle read %d rows of a table without field ids or name mapping", i+1, len(rows))
			continue
		}
		if !strings.Contains(err.Error(), iceberg.ErrInvalidSchema.Error()) || !strings.Contains(err.Error(), "missing field_id") {
			t.Errorf("snapshot %d: oracle failed with %v, want iceberg.ErrInvalidSchema about a missing field_id", i+1, err)
		}
	}
}

func TestIdentityPartitioned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := newCatalog(t)
	ident := table.Identifier{"partitioned", "t"}
	b, err := IdentityPartitioned(ctx, cat, ident)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	for n := 1; n <= 4; n++ {
		ids := parquetFieldIDs(t, icewrite.DataPath(loaded, DataFileName(n)))
		if _, ok := ids["region"]; ok {
			t.Errorf("%s stores region", DataFileName(n))
		}
		if _, ok := ids["day"]; ok {
			t.Errorf("%s stores day", DataFileName(n))
		}
		if ids["id"] != 1 || ids["amount"] != 3 || ids["note"] != 5 {
			t.Errorf("%s has field ids %v, want id 1, amount 3, note 5", DataFileName(n), ids)
		}
	}
	// Every row carries a region key and a day key; the null-region file's
	// rows carry a null region, the others a value.
	for _, s := range b.Snapshots {
		for _, r := range s.Rows {
			if !strings.Contains(r, `"region":`) || !strings.Contains(r, `"day":`) {
				t.Errorf("expected row %s lacks a partition column", r)
			}
		}
	}
	// iceberg-go's reader leaves the partition columns null (see
	// IdentityPartitionedOracleRows); everything else matches.
	got, err := OracleRows(ctx, loaded, b.Current().SnapshotID)
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	if want := IdentityPartitionedOracleRows(); !slices.Equal(got, want) {
		t.Errorf("oracle rows differ\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	if len(b.Current().Rows) != 8 {
		t.Errorf("current snapshot expects %d rows, want 8", len(b.Current().Rows))
	}
	// PlanFiles attaches each positional delete file to its partition's
	// data file only.
	want := map[string]Attached{
		DataFileName(1): {Positional: []string{"pos-deletes-eu.parquet"}},
		DataFileName(2): {Positional: []string{"pos-deletes-us.parquet"}},
		DataFileName(3): {},
		DataFileName(4): {},
	}
	if got := planned(t, ctx, loaded); !reflect.DeepEqual(got, want) {
		t.Errorf("PlanFiles attached\n got: %+v\nwant: %+v", got, want)
	}
}

func TestAllTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat := newCatalog(t)
	ident := table.Identifier{"alltypes", "t"}
	b, err := AllTypes(ctx, cat, ident)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	if got := len(b.Current().Columns); got != 23 {
		t.Errorf("%d columns, want 23", got)
	}
	checkSnapshots(t, ctx, loaded, b)
}
