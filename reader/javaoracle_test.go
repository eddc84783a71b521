package reader_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// javaFirstSeed is the first seed of TestIcebergJavaHistories: with
// -histories 1, one seed alone, as a failure names it.
var javaFirstSeed = flag.Int64("java-first-seed", 1, "the first seed of the Iceberg Java histories (-histories sets the count)")

// TestIcebergJavaHistories holds the reader to Iceberg's reference
// implementation: tools/icebergjava writes random histories with Iceberg
// Java (format versions 2 and 3: appends, position deletes, deletion
// vectors, equality deletes on one and several columns with nulls among
// the keys, updates, schema and partition-spec evolution, row lineage) and
// records what Iceberg Java's generic reader returns at every commit and
// every snapshot; each commit's metadata file is planned through the static
// catalog, and every snapshot by id from the last one, and must read as the
// same rows, every column and metadata column. -histories sets how many
// (.ci/run's Iceberg Java stage runs hundreds).
func TestIcebergJavaHistories(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs Iceberg Java")
	n := testenv.Histories(8, 8)
	histories := javaoracle.Write(t, t.TempDir(), *javaFirstSeed, n)
	for _, h := range histories {
		t.Run(fmt.Sprintf("seed%d_v%d", h.Seed, h.FormatVersion), func(t *testing.T) {
			tables := map[string]string{}
			for i, c := range h.Commits {
				tables[fmt.Sprintf("java.c%d", i)] = c.Metadata
			}
			checkJavaHistory(t, h, catalogPlanned(t, catalog.Config{Type: "static", Tables: tables}, plannedDeleteCacheSize))
		})
	}
}

// TestIcebergJavaLongDefault keeps a known disagreement in view: iceberg-go
// v0.7.0 reads a field's initial-default through a float64, so a long
// default past 2^53 (here 2^53 + 1, written by Iceberg Java) reads rounded
// in the sidecar, where Iceberg Java reads it exactly (docs/values.md). The
// random histories keep their long defaults within ±2^53 for it. When
// iceberg-go keeps the value, this test fails: drop the limit then.
func TestIcebergJavaLongDefault(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs Iceberg Java")
	h := javaoracle.LongDefault(t, t.TempDir())
	c := h.Commits[len(h.Commits)-1]
	pr := catalogPlanned(t, catalog.Config{Type: "static", Tables: map[string]string{"java.t": c.Metadata}}, plannedDeleteCacheSize)
	req := rowsRequest("java.t", 0)
	req.Columns = []string{"id", "big"}
	got := pr.Rows(t, pr.Plan(t, req))
	const exact, rounded = "9007199254740993", "9007199254740992"
	if len(c.Rows) != 2 || !strings.Contains(string(c.Rows[0]), `"big":`+exact) {
		t.Fatalf("Iceberg Java reads %s, want two rows with big %s", c.Rows, exact)
	}
	for _, r := range got {
		switch {
		case strings.Contains(r, `"big":`+exact):
			t.Fatalf("the sidecar now reads the long default exactly (%s): iceberg-go keeps it; drop the limit from docs/values.md and tools/icebergjava's defaults", r)
		case !strings.Contains(r, `"big":`+rounded):
			t.Fatalf("row %s: want big %s (rounded through a float64) or %s", r, rounded, exact)
		}
	}
	if len(got) != 2 {
		t.Fatalf("got %d rows, want 2", len(got))
	}
}

// checkJavaHistory holds what pr reads of h to Iceberg Java's rows: pr
// serves every commit's metadata file N as the table java.cN.
func checkJavaHistory(t *testing.T, h javaoracle.History, pr *servetest.Replica) {
	t.Helper()
	meta := strings.Join(h.MetadataColumns(), ",")
	test, _, _ := strings.Cut(t.Name(), "/")
	rerun := "go test -run '^" + test + "$' ./reader/"
	for i, c := range h.Commits {
		if c.SnapshotID == nil {
			continue
		}
		req := metaRequest(t, fmt.Sprintf("java.c%d", i), 0, meta)
		h.Compare(t, "the reader", fmt.Sprintf("commit %d (%s), snapshot %d", i, c.What, *c.SnapshotID), pr.Rows(t, pr.Plan(t, req)), c.Rows, rerun)
	}
	last := fmt.Sprintf("java.c%d", len(h.Commits)-1)
	for _, s := range h.Snapshots {
		req := metaRequest(t, last, s.SnapshotID, meta)
		h.Compare(t, "the reader", fmt.Sprintf("snapshot %d by id from the last commit", s.SnapshotID), pr.Rows(t, pr.Plan(t, req)), s.Rows, rerun)
	}
}
