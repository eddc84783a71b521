package handlers_test

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/javaoracle"
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
	for i, c := range h.Commits {
		if c.SnapshotID == nil {
			continue
		}
		p := srv.plan(t, q("table", fmt.Sprintf("%s.c%d", ns, i), "mode", "rows", "metadataColumns", meta))
		h.Compare(t, "the sidecar", fmt.Sprintf("commit %d (%s), snapshot %d", i, c.What, *c.SnapshotID), srv.rows(t, p), c.Rows, rerun)
	}
	last := fmt.Sprintf("%s.c%d", ns, len(h.Commits)-1)
	for _, s := range h.Snapshots {
		p := srv.plan(t, q("table", last, "mode", "rows", "metadataColumns", meta, "snapshotId", strconv.FormatInt(s.SnapshotID, 10)))
		h.Compare(t, "the sidecar", fmt.Sprintf("snapshot %d by id from the last commit", s.SnapshotID), srv.rows(t, p), s.Rows, rerun)
	}
}
