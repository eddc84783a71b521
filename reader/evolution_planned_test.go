package reader_test

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// evolutionTable is the evolution builder's table name, written once per
// run of the package in a shared warehouse of its own (sharedEvolution),
// and a planned reader of it.
func evolutionTable(t testing.TB, name string) (*tablegen.Built, *servetest.Replica) {
	t.Helper()
	dir, built := sharedEvolution(t, name)
	return built, localPlanned(t, dir)
}

// sharedEvolution is the table of tablegen.EvolutionTables named name,
// written once per run of the package in a shared warehouse of its own.
func sharedEvolution(t testing.TB, name string) (string, *tablegen.Built) {
	t.Helper()
	if name == "row_lineage" {
		dir, l := sharedLineage(t)
		return dir, l.built
	}
	return sharedWarehouse(t, "evolution/"+name, func(ctx context.Context, c icecatalog.Catalog) (*tablegen.Built, error) {
		et, err := tablegen.EvolutionTableNamed(name)
		if err != nil {
			return nil, err
		}
		return et.Build(ctx, c, et.Ident)
	})
}

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
	return sharedWarehouse(t, "evolution/row_lineage", func(ctx context.Context, c icecatalog.Catalog) (lineage, error) {
		b, meta, err := tablegen.Lineage(ctx, c, table.Identifier{"evo", "t"})
		return lineage{b, meta}, err
	})
}

// TestEvolutionSnapshots plans and reads every evolution table and holds
// the rows of EVERY snapshot (by snapshot id, each read in its own schema)
// against the builder's expected rows and, where iceberg-go reads the table
// right, against OracleRows; keys come in the snapshot schema's order.
func TestEvolutionSnapshots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, et := range tablegen.EvolutionTables() {
		name := strings.Join(et.Ident, ".")
		t.Run(et.Name, func(t *testing.T) {
			built, pr := evolutionTable(t, et.Name)
			for i, want := range built.Snapshots {
				p := pr.Plan(t, rowsRequest(name, want.SnapshotID))
				if p.SnapshotID != want.SnapshotID {
					t.Fatalf("snapshot %d: planned snapshot %d, want %d", i+1, p.SnapshotID, want.SnapshotID)
				}
				got := pr.Rows(t, p)
				assertKeyOrder(t, got, want.Columns)
				t.Logf("snapshot %d (%s): %d rows", i+1, want.Doc, len(got))
				servetest.SameRows(t, got, want.Rows)
				if et.OracleDiffers == "" && want.OracleDiffers == "" {
					oracle, err := tablegen.OracleRows(ctx, built.Table, want.SnapshotID)
					if err != nil {
						t.Fatalf("snapshot %d: oracle: %v", i+1, err)
					}
					servetest.SameRows(t, got, oracle)
				}
			}
			// Without a snapshot id: the current snapshot in the current schema.
			cur := built.Current()
			got := pr.Rows(t, pr.Plan(t, rowsRequest(name, 0)))
			assertKeyOrder(t, got, cur.Columns)
			servetest.SameRows(t, got, cur.Rows)
		})
	}
}

// TestEvolutionProjection: a projection narrows every row to exactly those
// keys, in schema order whatever the order asked, the rows are the
// expected rows projected, and equality deletes on columns not projected
// still apply.
func TestEvolutionProjection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		table    string
		snapshot int // 1-based; 0 is the current snapshot, unpinned
		columns  string
		want     []string // schema order
	}{
		// The current snapshot's deletes are on price (equality) and by
		// position; neither column is projected.
		{"renamed column, price deletes apply", "evolution", 0, "qty,customer,id", []string{"id", "customer", "qty"}},
		// Snapshot 3's only delete is on customer, which is not projected.
		{"delete on unprojected renamed column", "evolution", 3, "score,id", []string{"id", "score"}},
		// Snapshot 4: deletes written under schema 0 on qty and name.
		{"old-schema deletes, unprojected", "evolution", 4, "note,price", []string{"price", "note"}},
		{"added column only", "evolution", 0, "rank", []string{"rank"}},
		{"renamed column through the name mapping", "migrated", 0, "amount,customer", []string{"customer", "amount"}},
		{"partition columns only", "identity_partitioned", 0, "day,region", []string{"region", "day"}},
		{"partition column and a stored one", "identity_partitioned", 0, "note,region", []string{"region", "note"}},
		{"nested types", "all_types", 0, "m_int,st,lst_st", []string{"st", "m_int", "lst_st"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			et, err := tablegen.EvolutionTableNamed(tt.table)
			if err != nil {
				t.Fatal(err)
			}
			b, pr := evolutionTable(t, tt.table)
			exp := b.Current()
			var id int64
			if tt.snapshot > 0 {
				exp = b.Snapshots[tt.snapshot-1]
				id = exp.SnapshotID
			}
			req := rowsRequest(strings.Join(et.Ident, "."), id)
			req.Mode = splits.ModeAuto
			req.Columns = strings.Split(tt.columns, ",")
			got := pr.Rows(t, pr.Plan(t, req))
			assertKeyOrder(t, got, tt.want)
			for _, line := range got {
				if keys := rowKeys(t, line); !slices.Equal(keys, tt.want) {
					t.Fatalf("row %s has keys %v, want exactly %v", line, keys, tt.want)
				}
			}
			servetest.SameRows(t, got, projectRows(t, exp.Rows, tt.want))
		})
	}
}

// TestMigratedWithoutNameMapping: data files with no field ids in a table
// with no schema.name-mapping.default cannot be read; the reader refuses
// them when the split opens (ErrNoFieldIDs, which the row route answers
// 422 unreadable_file before the first byte), saying what is missing,
// instead of guessing by name or serving nulls. The file iceberg-go wrote
// (with field ids) still reads.
func TestMigratedWithoutNameMapping(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	built, err := tablegen.Migrated(ctx, catalogtest.SnappyWrites(catalogtest.Local(t, dir)), table.Identifier{"evo", "t"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !built.Unreadable {
		t.Fatal("the builder does not mark the table unreadable")
	}
	// One file a split, so that each file's answer is its own.
	pr := localPlanned(t, dir, splits.WithMaxSplitFiles(1))
	foreign := 0
	for _, s := range pr.Plan(t, rowsRequest("evo.t", 0)).Splits {
		name := path.Base(s.Parts[0].Data.Path)
		st, err := pr.Open(ctx, s.Parts)
		if err == nil {
			err = st.Close()
		}
		switch name {
		case tablegen.DataFileName(1), tablegen.DataFileName(2):
			foreign++
			if !errors.Is(err, reader.ErrNoFieldIDs) {
				t.Errorf("%s (no field ids, no mapping): %v, want ErrNoFieldIDs", name, err)
			} else if !strings.Contains(err.Error(), "name mapping") && !strings.Contains(err.Error(), "field id") {
				t.Errorf("%s: the error %q does not say what is missing", name, err)
			}
		default:
			if err != nil {
				t.Errorf("%s (with field ids): %v", name, err)
			} else {
				pr.MustReadToken(t, s.Token)
			}
		}
	}
	if foreign != 2 {
		t.Fatalf("plan has %d splits of the imported files, want 2", foreign)
	}
}

// TestIdentityPartitionValues: every row of the identity-partitioned table
// carries its file's region and day, although no data file stores them; a
// null partition value is a null, not a missing key.
func TestIdentityPartitionValues(t *testing.T) {
	dir, built := sharedEvolution(t, "identity_partitioned")
	pr := localPlanned(t, dir)
	got := pr.Rows(t, pr.Plan(t, rowsRequest("evo.t", 0)))
	nullRegion := 0
	for _, line := range got {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		region, hasRegion := row["region"]
		day, hasDay := row["day"]
		if !hasRegion || !hasDay || day == nil {
			t.Fatalf("row %s lacks its partition values", line)
		}
		if region == nil {
			nullRegion++
		}
	}
	if nullRegion != 2 {
		t.Errorf("%d rows with a null region, want the 2 of the null partition", nullRegion)
	}
	servetest.SameRows(t, got, built.Current().Rows)
}

// projectRows keeps the given keys of every row.
func projectRows(t testing.TB, rows []string, keys []string) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, line := range rows {
		var row map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		kept := map[string]json.RawMessage{}
		for _, k := range keys {
			v, ok := row[k]
			if !ok {
				t.Fatalf("expected row %s has no column %s", line, k)
			}
			kept[k] = v
		}
		b, err := json.Marshal(kept)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}
