package tablegen

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestWide: PlanFiles attaches every delete file of a small Wide table
// where its doc says, and the table reads as the doc says.
func TestWide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const dataFiles, deleteFiles = 250, 30
	tbl, err := Wide(ctx, newCatalog(t), table.Identifier{"wide", "orders"}, dataFiles, deleteFiles)
	if err != nil {
		t.Fatal(err)
	}
	partitions, eq, pos := WideDeletes(dataFiles, deleteFiles)
	if partitions != 3 || eq != 3 || pos != 27 {
		t.Fatalf("WideDeletes: %d partitions, %d equality, %d positional", partitions, eq, pos)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 2 {
		t.Fatalf("%d snapshots, want 2 (one append, then the deletes)", n)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != dataFiles {
		t.Fatalf("%d tasks, want %d", len(tasks), dataFiles)
	}
	seen := map[string]bool{}
	wantRows, posAttached := 0, 0
	for _, task := range tasks {
		path := task.File.FilePath()
		if seen[path] {
			t.Fatalf("data file %s planned twice", path)
		}
		seen[path] = true
		if !strings.Contains(path, "/data/event_date=2025-01-0") || !strings.HasSuffix(path, "-00001.parquet") {
			t.Fatalf("data file path %s", path)
		}
		if len(task.EqualityDeleteFiles) != 1 {
			t.Fatalf("%s: %d equality delete files, want 1 (every partition has one)", path, len(task.EqualityDeleteFiles))
		}
		if len(task.DeleteFiles) > 1 || len(task.DeletionVectorFiles) > 0 {
			t.Fatalf("%s: %d positional delete files, %d deletion vectors", path, len(task.DeleteFiles), len(task.DeletionVectorFiles))
		}
		live := WideRowsPerFile - 1
		if len(task.DeleteFiles) == 1 {
			posAttached++
			live--
		}
		wantRows += live
	}
	if posAttached != pos {
		t.Fatalf("%d data files have a positional delete file, want %d", posAttached, pos)
	}
	if rows := oracle(t, ctx, tbl); len(rows) != wantRows {
		t.Fatalf("ReadTasks gives %d rows, want %d", len(rows), wantRows)
	}
}
