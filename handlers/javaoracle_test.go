package handlers_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// javaFirstSeed is the first seed of TestIcebergJavaHistories: with
// -histories 1, one seed alone, as a failure names it.
var javaFirstSeed = flag.Int64("java-first-seed", 1, "the first seed of the Iceberg Java histories (-histories sets the count)")

// TestIcebergJavaHistories holds the sidecar to Iceberg's reference
// implementation: tools/icebergjava writes random histories with Iceberg
// Java (format versions 2 and 3: appends, position deletes, deletion
// vectors, equality deletes on one and several columns with nulls among
// the keys, updates, schema and partition-spec evolution, row lineage) and
// records what Iceberg Java's generic reader returns at every commit and
// every snapshot; the sidecar serves each commit's metadata file through the
// static catalog, and every snapshot by id from the last one, and must give
// the same rows, every column and metadata column. -histories sets how many
// (.ci/run's Iceberg Java stage runs hundreds).
func TestIcebergJavaHistories(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs Iceberg Java")
	n := testenv.Histories(8, 8)
	dir := t.TempDir()
	histories := javaoracle.Write(t, dir, *javaFirstSeed, n)
	for _, h := range histories {
		t.Run(fmt.Sprintf("seed%d_v%d", h.Seed, h.FormatVersion), func(t *testing.T) {
			tables := map[string]string{}
			for name, metadata := range javaCommits(h) {
				tables["java."+name] = metadata
			}
			checkJavaHistory(t, h, newServer(t, sidecatalog.Config{Type: "static", Tables: tables}, nil), "java")
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
	srv := newServer(t, sidecatalog.Config{Type: "static", Tables: map[string]string{"java.t": c.Metadata}}, nil)
	got := srv.rows(t, srv.plan(t, q("table", "java.t", "mode", "rows", "columns", "id,big")))
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

// javaCommits yields every commit of h as a table of its own: cN, the
// metadata file commit N wrote.
func javaCommits(h javaoracle.History) func(yield func(name, metadata string) bool) {
	return func(yield func(string, string) bool) {
		for i, c := range h.Commits {
			if !yield(fmt.Sprintf("c%d", i), c.Metadata) {
				return
			}
		}
	}
}

// checkJavaHistory holds what srv serves of h to Iceberg Java's rows: srv
// serves every commit's metadata file as the table ns.cN (javaCommits).
func checkJavaHistory(t *testing.T, h javaoracle.History, srv *testServer, ns string) {
	meta := strings.Join(h.MetadataColumns(), ",")
	// The command that runs this seed alone: the integration tier's tests
	// are TestReal….
	test, _, _ := strings.Cut(t.Name(), "/")
	rerun := "go test -run '^" + test + "$' ./handlers/"
	if strings.HasPrefix(test, "TestReal") {
		rerun = "go test -tags integration -run '^" + test + "$' ./handlers/"
	}
	fail := func(where string, got []string, want []json.RawMessage) {
		t.Helper()
		w := make([]string, len(want))
		for i, r := range want {
			w[i] = string(r)
		}
		if missing, extra := rowDiff(t, got, w); len(missing)+len(extra) > 0 {
			t.Fatalf("seed %d (format version %d), %s: the sidecar's rows differ from Iceberg Java's\n"+
				"only Iceberg Java (%d):\n  %s\nonly the sidecar (%d):\n  %s\nthe history:\n%s"+
				"this seed alone: %s -args -java-first-seed %d -histories 1",
				h.Seed, h.FormatVersion, where, len(missing), strings.Join(missing, "\n  "),
				len(extra), strings.Join(extra, "\n  "), h.Steps(), rerun, h.Seed)
		}
	}
	for i, c := range h.Commits {
		if c.SnapshotID == nil {
			continue
		}
		p := srv.plan(t, q("table", fmt.Sprintf("%s.c%d", ns, i), "mode", "rows", "metadataColumns", meta))
		fail(fmt.Sprintf("commit %d (%s), snapshot %d", i, c.What, *c.SnapshotID), srv.rows(t, p), c.Rows)
	}
	last := fmt.Sprintf("%s.c%d", ns, len(h.Commits)-1)
	for _, s := range h.Snapshots {
		p := srv.plan(t, q("table", last, "mode", "rows", "metadataColumns", meta, "snapshotId", strconv.FormatInt(s.SnapshotID, 10)))
		fail(fmt.Sprintf("snapshot %d by id from the last commit", s.SnapshotID), srv.rows(t, p), s.Rows)
	}
}

// rowDiff compares two lists of NDJSON rows as multisets of values (numbers
// canonical, as assertSameRows does) and returns the rows only want has and
// those only got has.
func rowDiff(t *testing.T, got, want []string) (missing, extra []string) {
	t.Helper()
	g, w := canonicalRows(t, got), canonicalRows(t, want)
	i, j := 0, 0
	for i < len(g) || j < len(w) {
		switch {
		case j == len(w) || (i < len(g) && g[i] < w[j]):
			extra = append(extra, g[i])
			i++
		case i == len(g) || w[j] < g[i]:
			missing = append(missing, w[j])
			j++
		default:
			i++
			j++
		}
	}
	return missing, extra
}
