package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

type hadoopCatalog = hadoop.Catalog

// evolutionTable is one table of tablegen's evolution builders.
type evolutionTable struct {
	name string
	// table is the table's name in its warehouse.
	table string
	build func(*testing.T) (*tablegen.Built, *testServer)
	// oracleAgrees is set when iceberg-go's ReadTasks reads the table right,
	// so the sidecar is held against it as well as against the builder.
	oracleAgrees bool
}

// evolutionTables are the evolution builders' tables, each written once per
// run of the package in a shared warehouse of its own (sharedEvolution),
// and served by a server of the test's own.
func evolutionTables() []evolutionTable {
	local := func(name, table string, oracleAgrees bool) evolutionTable {
		return evolutionTable{name: name, table: table, oracleAgrees: oracleAgrees,
			build: func(t *testing.T) (*tablegen.Built, *testServer) {
				t.Helper()
				dir, built := sharedEvolution(t, name)
				return built, localServer(t, dir)
			}}
	}
	return []evolutionTable{
		local("evolution", "evo.t", true),
		local("migrated", "evo.t", true),
		// iceberg-go leaves identity partition columns that the files do
		// not store null; the builder's rows carry them.
		local("identity_partitioned", "evo.t", false),
		local("all_types", "db.all", true),
		local("spec_change_deletes", "evo.t", true),
		local("upgraded_v1", "evo.t", true),
		// iceberg-go cannot read the snapshots with the delete keyed on the
		// column added with an initial-default (Expected.OracleDiffers).
		local("default_after_delete", "evo.t", true),
		local("row_lineage", "evo.t", true),
	}
}

// sharedEvolution is the table of the evolution builder name (as named in
// evolutionTables), written once per run of the package in a shared
// warehouse of its own: all_types as db.all, the others as evo.t.
func sharedEvolution(t testing.TB, name string) (string, *tablegen.Built) {
	t.Helper()
	if name == "row_lineage" {
		dir, l := sharedLineage(t)
		return dir, l.built
	}
	return sharedWarehouse(t, "evolution/"+name, func(ctx context.Context, c *hadoop.Catalog) (*tablegen.Built, error) {
		id := table.Identifier{"evo", "t"}
		switch name {
		case "evolution":
			return tablegen.Evolution(ctx, c, id)
		case "migrated":
			return tablegen.Migrated(ctx, c, id, true)
		case "identity_partitioned":
			return tablegen.IdentityPartitioned(ctx, c, id)
		case "all_types":
			return tablegen.AllTypes(ctx, c, table.Identifier{"db", "all"})
		case "spec_change_deletes":
			return tablegen.SpecChange(ctx, c, id)
		case "upgraded_v1":
			return tablegen.UpgradedV1(ctx, c, id)
		case "default_after_delete":
			return tablegen.DefaultAfterDelete(ctx, c, id)
		}
		return nil, fmt.Errorf("no evolution builder %s", name)
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
	return sharedWarehouse(t, "evolution/row_lineage", func(ctx context.Context, c *hadoop.Catalog) (lineage, error) {
		b, meta, err := tablegen.Lineage(ctx, c, table.Identifier{"evo", "t"})
		return lineage{b, meta}, err
	})
}

// TestEvolutionSnapshots serves every evolution table and holds the rows of
// EVERY snapshot (snapshotId=, each read in its own schema) against the
// builder's expected rows and, where iceberg-go reads the table right,
// against OracleRows; keys come in the snapshot schema's order.
func TestEvolutionSnapshots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, et := range evolutionTables() {
		t.Run(et.name, func(t *testing.T) {
			built, srv := et.build(t)
			for i, want := range built.Snapshots {
				p := srv.plan(t, q("table", et.table, "mode", "rows", "snapshotId", strconv.FormatInt(want.SnapshotID, 10)))
				if p.SnapshotID == nil || *p.SnapshotID != want.SnapshotID {
					t.Fatalf("snapshot %d: planned snapshot %v, want %d", i+1, p.SnapshotID, want.SnapshotID)
				}
				got := srv.rows(t, p)
				assertKeyOrder(t, got, want.Columns)
				t.Logf("snapshot %d (%s): %d rows", i+1, want.Doc, len(got))
				assertSameRows(t, got, want.Rows)
				if et.oracleAgrees && want.OracleDiffers == "" {
					oracle, err := tablegen.OracleRows(ctx, built.Table, want.SnapshotID)
					if err != nil {
						t.Fatalf("snapshot %d: oracle: %v", i+1, err)
					}
					assertSameRows(t, got, oracle)
				}
			}
			// Without snapshotId: the current snapshot in the current schema.
			cur := built.Current()
			got := srv.rows(t, srv.plan(t, q("table", et.table, "mode", "rows")))
			assertKeyOrder(t, got, cur.Columns)
			assertSameRows(t, got, cur.Rows)
		})
	}
}

// TestEvolutionProjection: columns= narrows every row to exactly those keys,
// in schema order whatever the order asked, the rows are the expected rows
// projected, and equality deletes on columns not projected still apply.
func TestEvolutionProjection(t *testing.T) {
	t.Parallel()
	tables := map[string]evolutionTable{}
	for _, et := range evolutionTables() {
		tables[et.name] = et
	}
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
	// A server each, on the parent test: it lives as long as it.
	built := map[string]*tablegen.Built{}
	servers := map[string]*testServer{}
	for _, tt := range tests {
		if _, ok := built[tt.table]; !ok {
			built[tt.table], servers[tt.table] = tables[tt.table].build(t)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, srv := built[tt.table], servers[tt.table]
			query := q("table", tables[tt.table].table, "columns", tt.columns)
			exp := b.Current()
			if tt.snapshot > 0 {
				exp = b.Snapshots[tt.snapshot-1]
				query.Set("snapshotId", strconv.FormatInt(exp.SnapshotID, 10))
			}
			p := srv.plan(t, query)
			got := srv.rows(t, p)
			assertKeyOrder(t, got, tt.want)
			for _, line := range got {
				if keys := rowKeys(t, line); !slices.Equal(keys, tt.want) {
					t.Fatalf("row %s has keys %v, want exactly %v", line, keys, tt.want)
				}
			}
			assertSameRows(t, got, projectRows(t, exp.Rows, tt.want))
		})
	}
}

// TestMigratedWithoutNameMapping: data files with no field ids in a table
// with no schema.name-mapping.default cannot be read; the sidecar says so
// with 422 unreadable_file before the first byte instead of guessing by
// name or serving nulls. The file iceberg-go wrote (with field ids) is still
// served.
func TestMigratedWithoutNameMapping(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	built, err := tablegen.Migrated(ctx, cat, table.Identifier{"evo", "t"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !built.Unreadable {
		t.Fatal("the builder does not mark the table unreadable")
	}
	// One file a split, so that each file's answer is its own.
	srv := splittingServer(t, dir, splits.WithMaxSplitFiles(1))
	p := srv.plan(t, q("table", "evo.t", "mode", "rows"))
	foreign := 0
	for _, s := range p.Splits {
		resp, body := srv.get(t, strings.TrimPrefix(s.URI, srv.URL))
		switch path.Base(s.DataFile) {
		case tablegen.DataFileName(1), tablegen.DataFileName(2):
			foreign++
			if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unreadable_file" {
				t.Errorf("%s (no field ids, no mapping): %d %s, want 422 unreadable_file", path.Base(s.DataFile), resp.StatusCode, body)
			}
			if !bytes.Contains(body, []byte("name mapping")) && !bytes.Contains(body, []byte("field id")) {
				t.Errorf("%s: the error %s does not say what is missing", path.Base(s.DataFile), body)
			}
		default:
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s (with field ids): %d %s, want 200", path.Base(s.DataFile), resp.StatusCode, body)
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
	srv := localServer(t, dir)
	got := srv.rows(t, srv.plan(t, q("table", "evo.t", "mode", "rows")))
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
	assertSameRows(t, got, built.Current().Rows)
}

// fixtureOracleFailures records the fixtures iceberg-go's own reader cannot
// read, with a piece of its error; the sidecar must still serve them (see
// TestFixtures).
var fixtureOracleFailures = map[string]string{}

// TestFixturesAgainstOracle holds the sidecar's rows of every shared
// fixture, at the current snapshot and at every snapshot of its
// extra_checks, against iceberg-go's Scan.ReadTasks on the same table.
func TestFixturesAgainstOracle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			fs := sidecatalog.NewFS(nil, f.mappings())
			tbl, err := table.NewFromLocation(ctx, table.Identifier{"fixtures", f.Name}, filepath.Join(f.Dir, f.Metadata),
				func(context.Context) (icebergio.IO, error) { return fs, nil }, nil)
			if err != nil {
				t.Fatalf("load table: %v", err)
			}
			srv := f.server(t)
			snaps := []int64{tbl.CurrentSnapshot().SnapshotID}
			for _, c := range f.ExtraChecks {
				snaps = append(snaps, c.SnapshotID)
			}
			for _, id := range snaps {
				want, err := tablegen.OracleRows(ctx, tbl, id)
				if msg, known := fixtureOracleFailures[f.Name]; known {
					if err == nil || !strings.Contains(err.Error(), msg) {
						t.Fatalf("snapshot %d: iceberg-go read %d rows with error %v; this test records it fails with %q", id, len(want), err, msg)
					}
					continue
				}
				if err != nil {
					t.Fatalf("snapshot %d: oracle: %v", id, err)
				}
				p := srv.plan(t, q("table", "fixtures.t", "mode", "rows", "snapshotId", strconv.FormatInt(id, 10)))
				assertSameRows(t, srv.rows(t, p), want)
			}
		})
	}
}

// assertKeyOrder checks that the keys of every row come in the order of
// columns (a row may carry fewer, never others).
func assertKeyOrder(t *testing.T, rows []string, columns []string) {
	t.Helper()
	for _, line := range rows {
		keys := rowKeys(t, line)
		at := 0
		for _, k := range keys {
			i := slices.Index(columns[at:], k)
			if i < 0 {
				t.Fatalf("row %s: keys %v are not in schema order %v", line, keys, columns)
			}
			at += i + 1
		}
	}
}

// rowKeys are the top-level keys of one JSON object, in order.
func rowKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("row %q is no object", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
	}
	return keys
}

// projectRows keeps the given keys of every row.
func projectRows(t *testing.T, rows []string, keys []string) []string {
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
		out = append(out, mustJSON(kept))
	}
	return out
}

// TestUpgradedV1Paths: tablegen.UpgradedV1's v1-era data files are handed
// to Druid raw while no delete applies to them, and take the row path, with
// the deletes committed after the upgrade attached, once one does.
func TestUpgradedV1Paths(t *testing.T) {
	dir, built := sharedEvolution(t, "upgraded_v1")
	srv := localServer(t, dir)
	at := func(i int) plan {
		return srv.plan(t, q("table", "evo.t", "snapshotId", strconv.FormatInt(built.Snapshots[i].SnapshotID, 10)))
	}
	if p := at(1); p.Mode != "v1" || len(p.Splits) != 2 {
		t.Fatalf("before the upgrade: %s with %d splits, want v1 with 2 (the raw files)", p.Mode, len(p.Splits))
	}
	// Snapshot 3 adds the equality delete of ids 1 and 5, which applies to
	// both v1 files; snapshot 4 the positional delete of one row of each.
	for _, want := range []struct{ i, pos, eq int }{{2, 0, 1}, {3, 1, 1}} {
		i := want.i
		p := at(i)
		if p.Mode != "v2" {
			t.Fatalf("snapshot %d (%s): %s, want v2", i+1, built.Snapshots[i].Doc, p.Mode)
		}
		for _, s := range p.Splits {
			if s.PositionDeleteFiles != want.pos || s.EqualityDeleteFiles != want.eq {
				t.Errorf("snapshot %d: %s has %d positional and %d equality delete files, want %d and %d",
					i+1, path.Base(s.DataFile), s.PositionDeleteFiles, s.EqualityDeleteFiles, want.pos, want.eq)
			}
		}
		assertSameRows(t, srv.rows(t, p), built.Snapshots[i].Rows)
	}
}
