package splits_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// TestAutoModeRawFileHazards: a table without a delete file whose Parquet
// files Druid would read differently by column name than Iceberg reads them
// by field id is planned on the row path in auto mode, with a warning that
// says why, and refused with ModeFiles (splits.ErrConflict, a 409). The
// hazard is shown to be real: the first data file, looked up by the
// column's name as Druid does, lacks the column or holds another field
// under its name. (That Druid, through the generated MSQ statement,
// ingests Iceberg's rows is handlers' TestAutoModeRawFileHazards, with the
// Druid model reading the streams.)
func TestAutoModeRawFileHazards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		kind string
		why  string // a piece of the warning
	}{
		{tablegen.HazardRenamed, `column "customer" was named "name" in schema 0`},
		{tablegen.HazardReused, `the name "a" belonged to another column (field id 2)`},
		{tablegen.HazardSanitized, `store column "user-id" under the name "user_x2Did"`},
		{tablegen.HazardInitialDefault, `column "n" has an initial default`},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			cat, dir := localWarehouse(t)
			built, err := tablegen.RawNameHazard(ctx, cat, table.Identifier{"raw", "t"}, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			r := localReplica(t, dir)
			p := r.Plan(t, splits.Request{Table: "raw.t"})
			assertRowPathBecause(t, p, tt.why)
			servetest.SameRows(t, r.Rows(t, p), built.Current().Rows)

			// What Druid would find in the first file under the name.
			cur := built.Table.Schema()
			name := built.Current().Columns[1]
			want, ok := cur.FindFieldByName(name)
			if !ok {
				t.Fatalf("the schema has no column %q", name)
			}
			first := ""
			for _, s := range p.Splits {
				if f := s.Parts[0].Data.Path; path.Base(f) == tablegen.DataFileName(1) {
					first = f
				}
			}
			if first == "" {
				t.Fatalf("the plan has no split of %s", tablegen.DataFileName(1))
			}
			if col := parquetColumn(t, first, name); col != nil && col.ID() == want.ID {
				t.Fatalf("%s stores column %q as field %d, as the schema does: no hazard to show", first, name, want.ID)
			}

			_, err = r.Planner.Plan(ctx, splits.Request{Table: "raw.t", Mode: splits.ModeFiles})
			if !errors.Is(err, splits.ErrConflict) || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("mode=files: %v, want splits.ErrConflict naming %q", err, tt.why)
			}
		})
	}

	// Tables of the evolution builders, at a snapshot without delete files.
	for _, tt := range []struct {
		name  string
		build func(context.Context, *hadoop.Catalog, table.Identifier) (*tablegen.Built, error)
		why   string
	}{
		{"name mapping", func(ctx context.Context, c *hadoop.Catalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.Migrated(ctx, c, id, true)
		}, "the table has a name mapping"},
		{"identity partition not stored", func(ctx context.Context, c *hadoop.Catalog, id table.Identifier) (*tablegen.Built, error) {
			return tablegen.IdentityPartitioned(ctx, c, id)
		}, `may not store the source column of identity partition "region"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat, dir := localWarehouse(t)
			built, err := tt.build(ctx, cat, table.Identifier{"evo", "t"})
			if err != nil {
				t.Fatal(err)
			}
			r := localReplica(t, dir)
			first := built.Snapshots[0]
			p := r.Plan(t, splits.Request{Table: "evo.t", SnapshotID: &first.SnapshotID})
			for _, s := range p.Splits {
				for _, part := range s.Parts {
					if len(part.Deletes) > 0 {
						t.Fatalf("snapshot 1 has delete files (%+v): not the case under test", part.Deletes)
					}
				}
			}
			assertRowPathBecause(t, p, tt.why)
			servetest.SameRows(t, r.Rows(t, p), first.Rows)
		})
	}
}

// parquetColumn returns the top-level column of the Parquet file at path
// with the given name, or nil: what a reader that goes by names finds.
func parquetColumn(t *testing.T, path, name string) *parquet.Column {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pf.Root().Column(name)
}
