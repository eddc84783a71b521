package sidecartest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/javaoracle"
)

// JavaCommits yields every commit of h as a table of its own: cN, the
// metadata file commit N wrote.
func JavaCommits(h javaoracle.History) func(yield func(name, metadata string) bool) {
	return func(yield func(string, string) bool) {
		for i, c := range h.Commits {
			if !yield(fmt.Sprintf("c%d", i), c.Metadata) {
				return
			}
		}
	}
}

// CheckJavaHistory holds what srv serves of h to Iceberg Java's rows: srv
// serves every commit's metadata file as the table ns.cN (JavaCommits).
// A difference fails t with the history and the command that runs its
// seed alone.
func CheckJavaHistory(t testing.TB, h javaoracle.History, srv *Server, ns string) {
	t.Helper()
	meta := strings.Join(h.MetadataColumns(), ",")
	// The command that runs this seed alone: the integration tier's tests
	// are TestReal….
	test, _, _ := strings.Cut(t.Name(), "/")
	rerun := "go test -run '^" + test + "$' " + packageDir()
	if strings.HasPrefix(test, "TestReal") {
		rerun = "go test -tags integration -run '^" + test + "$' " + packageDir()
	}
	for i, c := range h.Commits {
		if c.SnapshotID == nil {
			continue
		}
		p := srv.Plan(t, Q("table", fmt.Sprintf("%s.c%d", ns, i), "mode", "rows", "metadataColumns", meta))
		h.Compare(t, "the sidecar", fmt.Sprintf("commit %d (%s), snapshot %d", i, c.What, *c.SnapshotID), srv.Rows(t, p), c.Rows, rerun)
	}
	last := fmt.Sprintf("%s.c%d", ns, len(h.Commits)-1)
	for _, s := range h.Snapshots {
		p := srv.Plan(t, Q("table", last, "mode", "rows", "metadataColumns", meta, "snapshotId", strconv.FormatInt(s.SnapshotID, 10)))
		h.Compare(t, "the sidecar", fmt.Sprintf("snapshot %d by id from the last commit", s.SnapshotID), srv.Rows(t, p), s.Rows, rerun)
	}
}

// packageDir is the folder of the package under test, as go test names
// it from the module's root (./e2e/): a test runs in its package's folder.
func packageDir() string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	wd, err := os.Getwd()
	if err != nil {
		return "./..."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "./..."
	}
	return "./" + filepath.ToSlash(rel) + "/"
}
