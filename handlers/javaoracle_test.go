package handlers_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/javaoracle"
	"github.com/druidiceberg/sidecar/internal/testenv"
	sidecatalog "github.com/druidiceberg/sidecar/splits/catalog"
)

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
	n := testenv.Histories(20, 6)
	dir := t.TempDir()
	histories := javaoracle.Write(t, dir, 1, n)
	for _, h := range histories {
		t.Run(fmt.Sprintf("seed%d_v%d", h.Seed, h.FormatVersion), func(t *testing.T) {
			checkJavaHistory(t, h)
		})
	}
}

func checkJavaHistory(t *testing.T, h javaoracle.History) {
	tables := map[string]string{}
	for i, c := range h.Commits {
		tables[fmt.Sprintf("java.c%d", i)] = c.Metadata
	}
	srv := newServer(t, sidecatalog.Config{Type: "static", Tables: tables}, nil)
	meta := strings.Join(h.MetadataColumns(), ",")
	fail := func(where string, got []string, want []json.RawMessage) {
		t.Helper()
		w := make([]string, len(want))
		for i, r := range want {
			w[i] = string(r)
		}
		if missing, extra := rowDiff(t, got, w); len(missing)+len(extra) > 0 {
			t.Fatalf("seed %d (format version %d), %s: the sidecar's rows differ from Iceberg Java's\n"+
				"only Iceberg Java (%d):\n  %s\nonly the sidecar (%d):\n  %s\nthe history:\n%s",
				h.Seed, h.FormatVersion, where, len(missing), strings.Join(missing, "\n  "),
				len(extra), strings.Join(extra, "\n  "), h.Steps())
		}
	}
	for i, c := range h.Commits {
		if c.SnapshotID == nil {
			continue
		}
		p := srv.plan(t, q("table", fmt.Sprintf("java.c%d", i), "mode", "rows", "metadataColumns", meta))
		fail(fmt.Sprintf("commit %d (%s), snapshot %d", i, c.What, *c.SnapshotID), srv.rows(t, p), c.Rows)
	}
	last := fmt.Sprintf("java.c%d", len(h.Commits)-1)
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
