package handlers_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/rowset"
)

// javaFirstSeed is the first seed of the integration tier's
// TestRealIcebergRESTJavaHistories (the reader's TestIcebergJavaHistories
// through Iceberg's REST catalog server): with -histories 1, one seed
// alone, as a failure names it.
var javaFirstSeed = flag.Int64("java-first-seed", 1, "the first seed of the Iceberg Java histories (-histories sets the count)")

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
		if missing, extra := rowset.Diff(t, got, w); len(missing)+len(extra) > 0 {
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
