package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// lieAboutFiles rewrites tbl's current metadata file in place so that
// every snapshot summary says total-data-files is 1.
func lieAboutFiles(t *testing.T, tbl *table.Table) {
	t.Helper()
	loc := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	orig, err := os.ReadFile(loc)
	if err != nil {
		t.Fatal(err)
	}
	lied := regexp.MustCompile(`"total-data-files":\s*"\d+"`).ReplaceAll(orig, []byte(`"total-data-files":"1"`))
	if bytes.Equal(lied, orig) {
		t.Fatal("the metadata file has no total-data-files to rewrite")
	}
	if err := os.WriteFile(loc, lied, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lieInManifestList rewrites the current snapshot's manifest list in place
// so that each manifest declares one added file and no other.
func lieInManifestList(t *testing.T, tbl *table.Table) {
	t.Helper()
	ctx := context.Background()
	snap := tbl.CurrentSnapshot()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	lied := make([]iceberg.ManifestFile, len(manifests))
	for i, m := range manifests {
		lied[i] = iceberg.NewManifestFile(2, m.FilePath(), m.Length(), m.PartitionSpecID(), m.SnapshotID()).
			SequenceNum(m.SequenceNum(), m.MinSequenceNum()).Content(m.ManifestContent()).
			AddedFiles(1).ExistingFiles(0).DeletedFiles(0).AddedRows(1).Partitions(m.Partitions()).Build()
	}
	var buf bytes.Buffer
	seq := snap.SequenceNumber
	if err := iceberg.WriteManifestList(2, &buf, snap.SnapshotID, snap.ParentSnapshotID, &seq, 0, lied); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimPrefix(snap.ManifestList, "file://"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// budgetServer serves the warehouse dir with plans drawing on budget.
func budgetServer(t *testing.T, dir string, budget *memory.Budget) *testServer {
	t.Helper()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sidecatalog.Config{Type: "local", Warehouse: dir}
	return newServer(t, cfg, nil, func(c *handlers.Config) {
		c.Catalogs = []handlers.Catalog{plannerCatalog(t, cfg, nil, signer, splits.WithMemoryBudget(budget))}
	})
}

// TestHostileLyingSummary: plans were admitted by the snapshot summary's
// total-data-files, which whoever writes the table controls: with it
// rewritten to 1, a plan of 2,000 data files reserved 4 KiB of a 1 MiB
// budget and was served (on a 40,000-file table, 12 such plans at once
// under GOMEMLIMIT=256MiB peaked at 1.8 GB of RSS), where the honest
// summary was a 422. A plan now reserves what the manifest list declares
// when it is more, and counts the entries of the manifests as they are
// read, reserving what passes the declared before it is decoded: a lying
// summary is a 422 memory_exceeded at admission, a lying summary and
// manifest list a 422 once the entries read pass the budget, on /splits
// and on /changes alike, and the budget is given back.
func TestHostileLyingSummary(t *testing.T) {
	t.Parallel()
	const files = 2000
	for _, tc := range []struct {
		name string
		lie  func(*testing.T, *table.Table)
		says string
	}{
		{"honest", func(*testing.T, *table.Table) {}, "its 2000 data files need 7.8 MiB"},
		{"the summary lies", lieAboutFiles, "manifest entries need"},
		{"the summary and the manifest list lie", func(t *testing.T, tbl *table.Table) {
			lieAboutFiles(t, tbl)
			lieInManifestList(t, tbl)
		}, "more entries than its snapshot declares"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cat, dir := localWarehouse(t)
			tbl, err := tablegen.Wide(context.Background(), cat, table.Identifier{"wide", "t"}, files, 0)
			if err != nil {
				t.Fatal(err)
			}
			tc.lie(t, tbl)
			budget := memory.NewBudget(1<<20, "the memory budget (the test's)", nil)
			srv := budgetServer(t, dir, budget)
			for _, path := range []string{"/splits?table=wide.t", "/changes?table=wide.t&timeColumn=event_date"} {
				resp, body := srv.get(t, path)
				if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "memory_exceeded" ||
					!strings.Contains(string(body), tc.says) || !strings.Contains(string(body), "the memory budget (the test's)") {
					t.Errorf("%s of %d data files under a 1 MiB budget: %d %.400s, want 422 memory_exceeded saying %q",
						path, files, resp.StatusCode, body, tc.says)
				}
				if s := budget.Stats(); s.Used != 0 {
					t.Errorf("%s: the budget holds %d bytes after the refusal, want 0", path, s.Used)
				}
			}
			t.Logf("peak reserved %d bytes", budget.Stats().Peak)
		})
	}
}
