package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/sharedtables"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

// lineage is tablegen.Lineage's table and its rows with every metadata
// column.
type lineage struct {
	built *tablegen.Built
	meta  []string
}

// sharedLineage is tablegen.Lineage's table, as evo.t, written once per run
// of the package.
func sharedLineage(t testing.TB) (string, lineage) {
	t.Helper()
	return sharedtables.Warehouse(t, "evolution/row_lineage", func(ctx context.Context, c *hadoop.Catalog) (lineage, error) {
		b, meta, err := tablegen.Lineage(ctx, c, table.Identifier{"evo", "t"})
		return lineage{b, meta}, err
	})
}

// TestMigratedWithoutNameMapping: a data file the reader cannot resolve
// (no field ids, no schema.name-mapping.default: reader.ErrNoFieldIDs) is
// answered 422 unreadable_file before the first byte, saying what is
// missing. Which files the reader refuses, and that the others read, is
// the reader's TestMigratedWithoutNameMapping.
func TestMigratedWithoutNameMapping(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if _, err := tablegen.Migrated(ctx, cat, table.Identifier{"evo", "t"}, false); err != nil {
		t.Fatal(err)
	}
	// One file a split, so that each file's answer is its own.
	srv := splittingServer(t, dir, splits.WithMaxSplitFiles(1))
	for _, s := range srv.plan(t, q("table", "evo.t", "mode", "rows")).Splits {
		if path.Base(s.DataFile) != tablegen.DataFileName(1) {
			continue
		}
		resp, body := srv.get(t, strings.TrimPrefix(s.URI, srv.URL))
		if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unreadable_file" {
			t.Fatalf("%s (no field ids, no mapping): %d %s, want 422 unreadable_file", path.Base(s.DataFile), resp.StatusCode, body)
		}
		if !bytes.Contains(body, []byte("name mapping")) && !bytes.Contains(body, []byte("field id")) {
			t.Errorf("%s: the error %s does not say what is missing", path.Base(s.DataFile), body)
		}
		return
	}
	t.Fatalf("the plan has no split of the imported file %s", tablegen.DataFileName(1))
}
