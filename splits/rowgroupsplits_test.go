package splits_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// TestRowGroupSplits: with a small target split size, a table's large data
// files are planned as several splits each, and the union of their rows is
// iceberg-go's ReadTasks rows: positional deletes (or v3 deletion vectors)
// spread over the row groups and an equality delete apply in every range,
// no row is lost or read twice, whether the ranges come from the
// manifests' split offsets, from the footers, or from split offsets that
// disagree with the files. The splits of one file, read in order, are byte
// for byte the file's unsplit rows, and their record counts add up to the
// file's. (That each answers Range requests, and that a Druid-like client
// that breaks connections assembles the same bytes, is handlers'
// TestRowGroupSplits.)
func TestRowGroupSplits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range tablegen.RowGroupsVariants() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			tbl, dir := splits.RowGroupsTable(t, tc.FormatVersion, tc.Offsets)
			// One file (or range of one) a split, so that each split's
			// rows are those of one file's range.
			splitting := localReplica(t, dir, splits.WithTargetSplitSize(4000), splits.WithMaxSplitFiles(1))
			whole := localReplica(t, dir, splits.WithTargetSplitSize(0))
			want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(tablegen.RowGroupsLiveIDs()) {
				t.Fatalf("the oracle gives %d rows, want %d", len(want), len(tablegen.RowGroupsLiveIDs()))
			}
			p := splitting.Plan(t, splits.Request{Table: "rg.t"})
			unsplit := whole.Plan(t, splits.Request{Table: "rg.t"})
			if p.Path != splits.PathRows || len(unsplit.Splits) != 3 || len(p.Splits) <= len(unsplit.Splits)+1 {
				t.Fatalf("plan %s with %d splits (%d unsplit); want the row path with several splits per large file",
					p.Path, len(p.Splits), len(unsplit.Splits))
			}

			// The union of the rows of every split is the oracle's.
			var got []string
			bodies := map[string][]byte{}
			records := map[string]int64{}
			parts := map[string]int{}
			for _, s := range p.Splits {
				if len(s.Parts) != 1 {
					t.Fatalf("a split of %d files; want one file or range of one a split", len(s.Parts))
				}
				b := splitting.MustReadToken(t, s.Token)
				got = append(got, servetest.NDJSONLines(t, b)...)
				file, rng := s.Parts[0].Data.Path, s.Parts[0].Data.Range
				n, exact := s.RecordCount()
				bodies[file] = append(bodies[file], b...)
				records[file] += n
				parts[file]++
				if parts[file] > 1 || rng != nil {
					if rng == nil || !exact != (tc.Offsets != tablegen.SplitOffsetsNone) {
						t.Fatalf("split of %s: range %v, estimated %v", file, rng, !exact)
					}
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows from the splits, the oracle has %d", len(got), len(want))
			}
			servetest.SameRows(t, got, want)

			// Each file's splits in order are its unsplit rows, and their
			// record counts add up to the file's.
			for _, s := range unsplit.Splits {
				b := whole.MustReadToken(t, s.Token)
				file := s.Parts[0].Data.Path
				if !bytes.Equal(bodies[file], b) {
					t.Fatalf("%s: its %d splits give\n%s\nunsplit:\n%s", file, parts[file], bodies[file], b)
				}
				n, exact := s.RecordCount()
				if records[file] != n || len(s.Parts) != 1 || s.Parts[0].Data.Range != nil || !exact {
					t.Fatalf("%s: record counts of its splits add up to %d, want %d", file, records[file], n)
				}
			}
		})
	}
}
