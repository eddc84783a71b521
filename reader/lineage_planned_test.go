package reader_test

import (
	"context"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// allMeta asks for every metadata column, in another order than the rows
// carry them.
const allMeta = "_partition,_spec_id,_pos,_file,_last_updated_sequence_number,_row_id"

// TestMetadataColumns reads tablegen.Lineage (format version 3, a
// positional delete, a partition spec change) with metadata columns and
// holds the rows to the builder's hand-derived rows and, for row lineage,
// to iceberg-go's ReadTasks (table.WithRowLineage) at every snapshot; a
// table of format version 2 reads the columns that need no row lineage.
// The planner's refusals are splits' TestMetadataColumns, the request's
// handlers'.
func TestMetadataColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, lin := sharedLineage(t)
	built, meta := lin.built, lin.meta
	pr := localPlanned(t, dir)
	metaCols := []string{"id", "cat", "_row_id", "_last_updated_sequence_number", "_file", "_pos", "_spec_id", "_partition"}

	t.Run("every column, by hand", func(t *testing.T) {
		got := pr.Rows(t, pr.Plan(t, metaRequest(t, "evo.t", 0, allMeta)))
		assertKeyOrder(t, got, metaCols)
		servetest.SameRows(t, got, meta)
	})
	t.Run("row lineage at every snapshot, by iceberg-go", func(t *testing.T) {
		for i, s := range built.Snapshots {
			p := pr.Plan(t, metaRequest(t, "evo.t", s.SnapshotID, "_row_id,_last_updated_sequence_number"))
			oracle, err := tablegen.OracleLineageRows(ctx, built.Table, s.SnapshotID)
			if err != nil {
				t.Fatalf("snapshot %d: oracle: %v", i+1, err)
			}
			servetest.SameRows(t, pr.Rows(t, p), oracle)
		}
	})
	t.Run("_pos alone", func(t *testing.T) {
		got := pr.Rows(t, pr.Plan(t, metaRequest(t, "evo.t", built.Snapshots[0].SnapshotID, "_pos")))
		assertKeyOrder(t, got, []string{"id", "cat", "_pos"})
		servetest.SameRows(t, got, []string{`{"id":1,"cat":"a","_pos":0}`, `{"id":2,"cat":"a","_pos":1}`,
			`{"id":3,"cat":"a","_pos":2}`, `{"id":4,"cat":"a","_pos":3}`})
	})
	t.Run("a table of format version 2", func(t *testing.T) {
		dir2, _ := sharedEvolution(t, "evolution")
		v2 := localPlanned(t, dir2)
		req := metaRequest(t, "evo.t", 0, "_spec_id")
		req.Columns = []string{"id"}
		got := v2.Rows(t, v2.Plan(t, req))
		if len(got) == 0 || !strings.HasSuffix(got[0], `,"_spec_id":0}`) {
			t.Errorf("rows %q", got)
		}
	})
}
