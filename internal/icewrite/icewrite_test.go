package icewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
)

// newCatalog returns a hadoop catalog over a warehouse in t.TempDir() that
// does not exist yet: creating the first namespace must create it.
func newCatalog(tb testing.TB) *hadoop.Catalog {
	tb.Helper()
	return catalogtest.Local(tb, filepath.Join(tb.TempDir(), "warehouse"))
}

// idSchema is a table of one required long column, id.
func idSchema() *iceberg.Schema {
	return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
}

// appendIDs appends the ids as data file n of tbl.
func appendIDs(t *testing.T, ctx context.Context, tbl *table.Table, n int, ids ...int64) (*table.Table, iceberg.DataFile) {
	t.Helper()
	sc, err := ArrowSchema(tbl)
	if err != nil {
		t.Fatalf("arrow schema: %v", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	tbl, df, err := AppendBatch(ctx, tbl, n, b.NewRecordBatch())
	if err != nil {
		t.Fatalf("append data file %d: %v", n, err)
	}
	return tbl, df
}

func TestAppendBatchNamesDataFiles(t *testing.T) {
	ctx := context.Background()
	tbl, err := CreateTable(ctx, newCatalog(t), table.Identifier{"db", "t"}, idSchema(), 2)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	if got := tbl.Metadata().Version(); got != 2 {
		t.Errorf("format version %d, want 2", got)
	}
	tbl, second := appendIDs(t, ctx, tbl, 2, 3, 4, 5)
	tbl, first := appendIDs(t, ctx, tbl, 1, 1, 2)
	for _, c := range []struct {
		df    iceberg.DataFile
		n     int
		count int64
	}{{first, 1, 2}, {second, 2, 3}} {
		want := DataPath(tbl, DataFileName(c.n))
		if c.df.FilePath() != want {
			t.Errorf("data file %d at %s, want %s", c.n, c.df.FilePath(), want)
		}
		if c.df.Count() != c.count {
			t.Errorf("data file %d has %d rows, want %d", c.n, c.df.Count(), c.count)
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("data file %d: %v", c.n, err)
		}
	}
	if got, want := DataFileName(258), "00000-0-00000000-0000-4000-8000-000000000102-00001.parquet"; got != want {
		t.Errorf("DataFileName(258) = %s, want %s", got, want)
	}
	if got := len(tbl.Metadata().Snapshots()); got != 2 {
		t.Errorf("%d snapshots, want one per AppendBatch (2)", got)
	}
}

func TestEqualityDeletesCommitWithRowDelta(t *testing.T) {
	ctx := context.Background()
	tbl, err := CreateTable(ctx, newCatalog(t), table.Identifier{"db", "t"}, idSchema(), 2)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	tbl, df := appendIDs(t, ctx, tbl, 1, 1, 2, 3)
	keySc, err := DeleteKeySchema(tbl, 1)
	if err != nil {
		t.Fatalf("delete key schema: %v", err)
	}
	kb := array.NewRecordBuilder(memory.DefaultAllocator, keySc)
	defer kb.Release()
	kb.Field(0).(*array.Int64Builder).Append(2)
	eq, err := WriteEqualityDeletes(ctx, tbl, []int{1}, kb.NewRecordBatch())
	if err != nil {
		t.Fatalf("write equality deletes: %v", err)
	}
	if tbl, err = CommitDelta(ctx, tbl, nil, eq); err != nil {
		t.Fatalf("commit: %v", err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if len(tasks) != 1 || tasks[0].File.FilePath() != df.FilePath() || len(tasks[0].EqualityDeleteFiles) != 1 {
		t.Fatalf("plan %+v, want data file 1 with one equality delete file", tasks)
	}
	if ids := tasks[0].EqualityDeleteFiles[0].EqualityFieldIDs(); len(ids) != 1 || ids[0] != 1 {
		t.Errorf("equality field ids %v, want [1]", ids)
	}
}

func TestWritersRejectBadArguments(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	if _, err := CreateTable(ctx, cat, table.Identifier{"t"}, idSchema(), 2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CreateTable without namespace: error = %v, want ErrInvalidArgument", err)
	}
	tbl, err := CreateTable(ctx, cat, table.Identifier{"db", "t"}, idSchema(), 2)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	if _, err := DeleteKeySchema(tbl, 7); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("DeleteKeySchema on an unknown field id: error = %v, want ErrInvalidArgument", err)
	}
}
