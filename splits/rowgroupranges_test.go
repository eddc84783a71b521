package splits

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/token"
)

// rowGroupsTable is tablegen.RowGroups as rg.t in a local warehouse of its
// own, and the warehouse, built once per run of the package and shared,
// read-only, by the tests that ask for the same version and offsets.
func rowGroupsTable(t *testing.T, formatVersion int, offsets tablegen.SplitOffsets) (*table.Table, string) {
	t.Helper()
	return readOnlyTable(t, fmt.Sprintf("rowgroups-v%d-%d", formatVersion, offsets), func(ctx context.Context, cat icecatalog.Catalog) (*table.Table, error) {
		return tablegen.RowGroups(ctx, cat, table.Identifier{"rg", "t"}, formatVersion, offsets)
	})
}

// localPlanner is a planner over the local warehouse dir.
func localPlanner(t *testing.T, dir string, opts ...PlannerOption) *Planner {
	t.Helper()
	signer, _ := token.NewSigner(key(5))
	p, err := NewPlanner(catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: dir}), signer, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanTakesIcebergRangesWhole: iceberg-go splits a file larger than the
// table's read.split.target-size into byte-range tasks; the plan still has
// one split per data file, never the same file twice.
func TestPlanTakesIcebergRangesWhole(t *testing.T) {
	ctx := context.Background()
	tbl, dir := rowGroupsTable(t, 2, tablegen.SplitOffsetsKept)
	p := localPlanner(t, dir, WithTargetSplitSize(0))
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
			names = append(names, path.Base(s.Parts[0].Data.Path))
		}
		want := []string{tablegen.DataFileName(1), tablegen.DataFileName(2), tablegen.DataFileName(3)}
		if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
			t.Fatalf("mode %s: splits of %v, want one per data file %v", mode, names, want)
		}
	}
}

// targetSize splits data file A of tablegen.RowGroups (10 row groups of
// about 1.5 KB and a 10 KB footer) into several ranges, B into two or more,
// and leaves C whole.
const targetSize = 4000

// TestPlanSplitsLargeFiles: on the row path a data file larger than the
// target becomes several splits whose ranges cover the file, cut at the
// split offsets when the manifest has them and at the footer's row groups
// otherwise; smaller files and the raw-file path stay whole, with the
// tokens they had before.
func TestPlanSplitsLargeFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		version int
		offsets tablegen.SplitOffsets
	}{
		{"v2 split offsets", 2, tablegen.SplitOffsetsKept},
		{"v2 footer", 2, tablegen.SplitOffsetsNone},
		{"v2 skewed split offsets", 2, tablegen.SplitOffsetsSkewed},
		{"v3 split offsets", 3, tablegen.SplitOffsetsKept},
		{"v3 footer", 3, tablegen.SplitOffsetsNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tbl, dir := rowGroupsTable(t, tc.version, tc.offsets)
			p := localPlanner(t, dir, WithTargetSplitSize(targetSize))
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]iceberg.DataFile{}
			for _, task := range tasks {
				files[task.File.FilePath()] = task.File
			}
			plan, err := p.Plan(ctx, Request{Table: "rg.t"})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Path != PathRows {
				t.Fatalf("path %s, want the row path", plan.Path)
			}
			perFile := map[string][]token.Split{}
			var order []string
			for _, ps := range plan.Splits {
				if ps.Kind != token.KindRows {
					t.Fatalf("a %s split on the row path", ps.Kind)
				}
				sp := ps.Parts[0]
				if n := len(order); n == 0 || order[n-1] != sp.Data.Path {
					order = append(order, sp.Data.Path)
				}
				perFile[sp.Data.Path] = append(perFile[sp.Data.Path], sp)
			}
			if !slices.IsSorted(order) || len(order) != 3 {
				t.Fatalf("splits not grouped by file in path order: %v", order)
			}
			// The sizes targetSize is chosen for: A and B larger, C not
			// (whatever the codec the table is written with).
			cut := 0
			for path, parts := range perFile {
				if len(parts) > 1 {
					cut++
				} else if filepath.Base(path) != tablegen.DataFileName(3) {
					t.Errorf("%s (%d bytes) is not larger than the target %d", filepath.Base(path), files[path].FileSizeBytes(), targetSize)
				}
			}
			if cut != 2 {
				t.Fatalf("%d files split, want A and B", cut)
			}
			for path, parts := range perFile {
				f := files[path]
				name := filepath.Base(path)
				if f.FileSizeBytes() <= targetSize {
					if len(parts) != 1 || parts[0].Data.Range != nil {
						t.Fatalf("%s (%d bytes) split into %d", name, f.FileSizeBytes(), len(parts))
					}
					continue
				}
				if len(parts) < 2 {
					t.Fatalf("%s (%d bytes) is one split", name, f.FileSizeBytes())
				}
				t.Logf("%s: %d bytes, %d splits", name, f.FileSizeBytes(), len(parts))
				// The ranges cover the file, in order, without a gap.
				var next, records int64
				for _, sp := range parts {
					r := sp.Data.Range
					if r == nil || r.Start != next || r.Length <= 0 {
						t.Fatalf("%s: range %+v after byte %d", name, r, next)
					}
					if tc.offsets == tablegen.SplitOffsetsKept {
						groups := 0
						for _, o := range f.SplitOffsets() {
							if r.Contains(o, f.FileSizeBytes()) {
								groups++
							}
						}
						if groups == 0 || (r.Length > targetSize && groups > 1) {
							t.Errorf("%s: range %+v holds %d row groups; more than one only within the target", name, r, groups)
						}
					}
					if next > 0 && tc.offsets != tablegen.SplitOffsetsNone && !slices.Contains(f.SplitOffsets(), r.Start) {
						t.Errorf("%s: range %+v does not start at a split offset %v", name, r, f.SplitOffsets())
					}
					n, exact := sp.RecordCount()
					if exact != (tc.offsets == tablegen.SplitOffsetsNone) {
						t.Errorf("%s: record count exact %v with offsets %d", name, exact, tc.offsets)
					}
					if exact && (n == 0 || n%tablegen.RowGroupRows != 0) {
						t.Errorf("%s: %d records in range %+v, not whole row groups", name, n, r)
					}
					records += n
					next = r.Start + r.Length
					if sp.Data.Records != f.Count() || sp.Data.Size != f.FileSizeBytes() || len(sp.Deletes) == 0 {
						t.Errorf("%s: a range lost the file's description: %+v", name, sp.Data)
					}
				}
				if next != f.FileSizeBytes() || records != f.Count() {
					t.Fatalf("%s: ranges end at %d of %d bytes, count %d of %d records", name, next, f.FileSizeBytes(), records, f.Count())
				}
			}

			// A file that is not split has the token of a planner that
			// never splits.
			whole, err := localPlanner(t, dir, WithTargetSplitSize(0)).Plan(ctx, Request{Table: "rg.t"})
			if err != nil {
				t.Fatal(err)
			}
			last := plan.Splits[len(plan.Splits)-1]
			if len(whole.Splits) != 3 || filepath.Base(last.Parts[0].Data.Path) != tablegen.DataFileName(3) || last.Token != whole.Splits[2].Token {
				t.Fatalf("C's token differs from the one of a planner that never splits")
			}
		})
	}
}

// TestPlanUnsplitTokensUnchanged: a planner with the default target that
// packs one file a split hands out, for a table whose files are all
// smaller than the target, the very tokens of a planner that never cuts.
func TestPlanUnsplitTokensUnchanged(t *testing.T) {
	ctx := context.Background()
	tbl, dir := rowGroupsTable(t, 2, tablegen.SplitOffsetsNone)
	def, never := localPlanner(t, dir, WithMaxSplitFiles(1)), localPlanner(t, dir, WithTargetSplitSize(0))
	first := tbl.Metadata().Snapshots()[0].SnapshotID
	for _, req := range []Request{{Table: "rg.t"}, {Table: "rg.t", Mode: ModeRows, SnapshotID: &first}, {Table: "rg.t", SnapshotID: &first}} {
		a, err := def.Plan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := never.Plan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Splits) != len(b.Splits) {
			t.Fatalf("%d splits against %d", len(a.Splits), len(b.Splits))
		}
		for i := range a.Splits {
			if a.Splits[i].Token != b.Splits[i].Token {
				t.Fatalf("split %d: the default target changed the token of a small file", i)
			}
		}
	}
}

// TestRawFilesNeverSplit: the raw-file path serves whole files whatever
// their size, and mode=rows of the same snapshot splits them.
func TestRawFilesNeverSplit(t *testing.T) {
	ctx := context.Background()
	tbl, dir := rowGroupsTable(t, 2, tablegen.SplitOffsetsKept)
	p := localPlanner(t, dir, WithTargetSplitSize(targetSize))
	first := tbl.Metadata().Snapshots()[0].SnapshotID // A alone, no deletes
	plan, err := p.Plan(ctx, Request{Table: "rg.t", SnapshotID: &first})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Path != PathFiles || len(plan.Splits) != 1 || plan.Splits[0].Parts[0].Data.Range != nil || plan.Splits[0].Kind != token.KindFile {
		t.Fatalf("raw-file plan: %s with %d splits", plan.Path, len(plan.Splits))
	}
	rows, err := p.Plan(ctx, Request{Table: "rg.t", SnapshotID: &first, Mode: ModeRows})
	if err != nil {
		t.Fatal(err)
	}
	if rows.Path != PathRows || len(rows.Splits) < 2 {
		t.Fatalf("mode=rows: %s with %d splits", rows.Path, len(rows.Splits))
	}
}

func TestRowGroupRangesCuts(t *testing.T) {
	rng := func(start, end int64, rows ...int64) *token.RowGroupRange {
		r := &token.RowGroupRange{Start: start, Length: end - start}
		if len(rows) == 1 {
			r.Records = &rows[0]
		}
		return r
	}
	tests := []struct {
		name   string
		g      footerGroups
		size   int64
		target int64
		want   []*token.RowGroupRange
	}{
		{"one row group", footerGroups{starts: []int64{4}}, 1000, 100, []*token.RowGroupRange{nil}},
		{"all within the target", footerGroups{starts: []int64{4, 40, 80}}, 100, 100, []*token.RowGroupRange{nil}},
		{"one per group", footerGroups{starts: []int64{4, 100, 200}}, 300, 100,
			[]*token.RowGroupRange{rng(0, 100), rng(100, 200), rng(200, 300)}},
		{"two per range, counted", footerGroups{starts: []int64{4, 50, 100, 150, 200}, rows: []int64{1, 2, 3, 4, 5}}, 260, 100,
			[]*token.RowGroupRange{rng(0, 100, 3), rng(100, 200, 7), rng(200, 260, 5)}},
		{"a group larger than the target", footerGroups{starts: []int64{4, 10, 500, 520}}, 600, 100,
			[]*token.RowGroupRange{rng(0, 10), rng(10, 500), rng(500, 600)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rowGroupRanges(tc.g, tc.size, tc.target)
			if len(got) != len(tc.want) {
				t.Fatalf("%d ranges, want %d", len(got), len(tc.want))
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if (g == nil) != (w == nil) || g != nil && (g.Start != w.Start || g.Length != w.Length ||
					(g.Records == nil) != (w.Records == nil) || g.Records != nil && *g.Records != *w.Records) {
					t.Fatalf("range %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
	for _, bad := range [][]int64{nil, {4, 4}, {10, 5}, {-1, 5}, {4, 1000}} {
		if usableStarts(bad, 1000) {
			t.Errorf("split offsets %v are usable in 1000 bytes", bad)
		}
	}
}

// TestUnreadableFooterLeavesFileWhole: a large file without split offsets
// whose footer cannot be read stays one split; reading its rows reports the
// problem.
func TestUnreadableFooterLeavesFileWhole(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.parquet")
	if err := os.WriteFile(junk, make([]byte, 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	p := localPlanner(t, dir, WithTargetSplitSize(1000))
	for _, path := range []string{junk, filepath.Join(dir, "gone.parquet")} {
		b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, path, iceberg.ParquetFile,
			nil, nil, nil, 10, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		ranges, err := p.fileRanges(context.Background(), icebergio.LocalFS{}, b.Build(), 1000)
		if err != nil || len(ranges) != 1 || ranges[0] != nil {
			t.Fatalf("%s: %v, %v; want the whole file", filepath.Base(path), ranges, err)
		}
	}
}
