package tablegen

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"
)

func TestRowGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := map[int64]mixedRow{}
	for _, r := range genMixedRows(1, 270) {
		rows[r.id] = r
	}
	var want []string
	for _, id := range RowGroupsLiveIDs() {
		want = append(want, wantMixedJSON(t, rows[id]))
	}
	groups := map[string]int{DataFileName(1): 10, DataFileName(2): 3, DataFileName(3): 1}
	for _, v := range []int{2, 3} {
		for _, offsets := range []SplitOffsets{SplitOffsetsKept, SplitOffsetsNone, SplitOffsetsSkewed} {
			t.Run(fmt.Sprintf("v%d/offsets%d", v, offsets), func(t *testing.T) {
				t.Parallel()
				tbl, err := RowGroups(ctx, newCatalog(t), table.Identifier{"rg", "t"}, v, offsets)
				if err != nil {
					t.Fatal(err)
				}
				if got := oracle(t, ctx, tbl); !slices.Equal(got, want) {
					t.Fatalf("oracle rows differ\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
				}
				tasks, err := tbl.Scan().PlanFiles(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(tasks) != 3 {
					t.Fatalf("%d tasks, want 3", len(tasks))
				}
				for _, task := range tasks {
					name := path.Base(task.File.FilePath())
					f, err := os.Open(strings.TrimPrefix(task.File.FilePath(), "file://"))
					if err != nil {
						t.Fatal(err)
					}
					pf, err := parquet.OpenFile(f, task.File.FileSizeBytes())
					if err != nil {
						t.Fatal(err)
					}
					var starts []int64
					for _, rg := range pf.Metadata().RowGroups {
						if rg.NumRows != RowGroupRows && len(pf.Metadata().RowGroups) > 1 {
							t.Errorf("%s: a row group of %d rows, want %d", name, rg.NumRows, RowGroupRows)
						}
						// The first page: the dictionary page when there is one.
						md := rg.Columns[0].MetaData
						start := md.DataPageOffset
						if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
							start = md.DictionaryPageOffset
						}
						starts = append(starts, start)
					}
					_ = f.Close()
					if len(starts) != groups[name] {
						t.Errorf("%s: %d row groups, want %d", name, len(starts), groups[name])
					}
					got := task.File.SplitOffsets()
					switch offsets {
					case SplitOffsetsKept:
						if !slices.Equal(got, starts) {
							t.Errorf("%s: split offsets %v, want the row groups' first pages %v", name, got, starts)
						}
					case SplitOffsetsNone:
						if len(got) != 0 {
							t.Errorf("%s: split offsets %v, want none", name, got)
						}
					case SplitOffsetsSkewed:
						if len(got) != (len(starts)+1)/2 || got[0] != starts[0]+3 {
							t.Errorf("%s: split offsets %v of row groups at %v, want every other one moved by 3", name, got, starts)
						}
					}
				}
			})
		}
	}
}
