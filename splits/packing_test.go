package splits

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestPackEnds holds the packing rule to apache/druid's
// MaxSizeSplitHintSpec.split (processing/src/main/java/org/apache/druid/
// data/input/MaxSizeSplitHintSpec.java): a file joins a split when the
// split is empty, or when splitSize + size < maxSplitSize and the split
// holds fewer than maxNumFiles files; a split never closes empty, so a
// file larger than the target is a split of its own.
func TestPackEnds(t *testing.T) {
	for _, tc := range []struct {
		sizes    []int64
		target   int64
		maxFiles int
		want     []int
	}{
		{nil, 10, 5, nil},
		{[]int64{3, 3, 3, 3}, 10, 5, []int{3, 4}},      // 3+3+3 = 9 < 10; 9+3 = 12 is not
		{[]int64{3, 3, 4, 3}, 10, 5, []int{2, 4}},      // 6+4 = 10 is not below the target
		{[]int64{20, 1, 1, 30}, 10, 5, []int{1, 3, 4}}, // large files alone, small ones packed
		{[]int64{1, 1, 1, 1, 1}, 10, 2, []int{2, 4, 5}},
		{[]int64{0, 0, 0}, 10, 5, []int{3}},
		{[]int64{1, 1, 1}, 0, 5, []int{1, 2, 3}}, // no target: one file a split
	} {
		if got := packEnds(tc.sizes, tc.target, tc.maxFiles); !slices.Equal(got, tc.want) {
			t.Errorf("packEnds(%v, %d, %d) = %v, want %v", tc.sizes, tc.target, tc.maxFiles, got, tc.want)
		}
	}
}

// TestPacking: on the row path, a table of many small files is packed in
// path order, each file exactly once, under the target size and the
// maximum number of files; the same table always packs the same way;
// minSplits asks for at least that many splits; the raw-file path keeps
// one file a split.
func TestPacking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const files = 80 // the table TestAutoAtScale and TestPlanReferences read too
	tbl, dir := benchTable(t, files)
	var all []string
	var total int64
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		all = append(all, task.File.FilePath())
		total += task.File.FileSizeBytes()
	}
	slices.Sort(all)

	target := total / 5
	p := localPlanner(t, dir, WithTargetSplitSize(target), WithMaxSplitFiles(6))
	plan, err := p.Plan(ctx, Request{Table: "ns.t"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Path != PathRows {
		t.Fatalf("path %s, want the row path (the table has delete files)", plan.Path)
	}
	var got []string
	for i, ps := range plan.Splits {
		var size int64
		for _, part := range ps.Parts {
			got = append(got, part.Data.Path)
			size += part.Data.Size
			if part.Data.Range != nil {
				t.Fatalf("a file smaller than the target was cut: %+v", part.Data)
			}
		}
		if len(ps.Parts) > 6 || (len(ps.Parts) > 1 && size >= target) {
			t.Fatalf("split %d packs %d files of %d bytes; want at most 6 and below %d", i, len(ps.Parts), size, target)
		}
	}
	if !slices.Equal(got, all) {
		t.Fatalf("the splits read\n%v\nwant every file once, in path order\n%v", got, all)
	}
	if n := len(plan.Splits); n < files/6 || n >= files {
		t.Fatalf("%d splits of %d files", n, files)
	}
	again, err := p.Plan(ctx, Request{Table: "ns.t"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(plan.Splits, again.Splits, func(a, b PlannedSplit) bool { return a.Token == b.Token }) {
		t.Fatal("two plans of the same snapshot packed differently")
	}

	def := localPlanner(t, dir)
	one, err := def.Plan(ctx, Request{Table: "ns.t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Splits) != 1 || len(one.Splits[0].Parts) != files {
		t.Fatalf("the default target packs %d splits, want one of all %d files", len(one.Splits), files)
	}
	for _, minSplits := range []int{2, 7, files} {
		many, err := def.Plan(ctx, Request{Table: "ns.t", MinSplits: minSplits})
		if err != nil {
			t.Fatal(err)
		}
		if len(many.Splits) < minSplits {
			t.Fatalf("minSplits %d: %d splits", minSplits, len(many.Splits))
		}
	}

	first := tbl.Metadata().Snapshots()[0].SnapshotID // before the delete files
	raw, err := p.Plan(ctx, Request{Table: "ns.t", SnapshotID: &first, Mode: ModeFiles})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Splits) != files {
		t.Fatalf("mode=files: %d splits of %d files", len(raw.Splits), files)
	}
}

// TestAutoAtScale: mode=auto hands out raw files for a table without
// delete files while they are few (up to autoRawFiles) or large (packing
// would not divide their number by autoPackRatio), and takes the packed row
// path, saying why, for many small files; mode=files keeps the raw files.
func TestAutoAtScale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, dir := benchTable(t, 80)
	first := tbl.Metadata().Snapshots()[0].SnapshotID // before the delete files
	for _, tc := range []struct {
		name  string
		p     *Planner
		mode  Mode
		path  Path
		count int
	}{
		{"many small files", localPlanner(t, dir), ModeAuto, PathRows, 1},
		{"many large files", localPlanner(t, dir, WithTargetSplitSize(1)), ModeAuto, PathFiles, 80},
		{"mode=files", localPlanner(t, dir), ModeFiles, PathFiles, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := tc.p.Plan(ctx, Request{Table: "ns.t", SnapshotID: &first, Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(plan.Warnings, func(w string) bool { return strings.Contains(w, "80 data files average") })
			if plan.Path != tc.path || len(plan.Splits) != tc.count || warned != (tc.path == PathRows) {
				t.Fatalf("%s with %d splits, warnings %q; want %s with %d", plan.Path, len(plan.Splits), plan.Warnings, tc.path, tc.count)
			}
		})
	}
	few, dir := benchTable(t, autoRawFiles)
	firstFew := few.Metadata().Snapshots()[0].SnapshotID
	plan, err := localPlanner(t, dir).Plan(ctx, Request{Table: "ns.t", SnapshotID: &firstFew})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Path != PathFiles || len(plan.Splits) != autoRawFiles {
		t.Fatalf("%d small files: %s with %d splits, want raw files", autoRawFiles, plan.Path, len(plan.Splits))
	}
}
