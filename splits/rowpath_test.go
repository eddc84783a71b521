package splits

import (
	"context"
	"errors"
	"path"
	"reflect"
	"strconv"
	"strings"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/token"
)

// builtTable is the table a tablegen builder writes as ident, for
// readOnlyTable.
func builtTable(ident table.Identifier, build func(context.Context, icecatalog.Catalog, table.Identifier) (*tablegen.Built, error)) func(context.Context, icecatalog.Catalog) (*table.Table, error) {
	return func(ctx context.Context, cat icecatalog.Catalog) (*table.Table, error) {
		b, err := build(ctx, cat, ident)
		if err != nil {
			return nil, err
		}
		return b.Table, nil
	}
}

// planAt plans name at the snapshot id in mode, failing the test on an
// error.
func planAt(t *testing.T, p *Planner, name string, id int64, mode Mode) Plan {
	t.Helper()
	pl, err := p.Plan(context.Background(), Request{Table: name, SnapshotID: &id, Mode: mode})
	if err != nil {
		t.Fatalf("plan %s at %d (%s): %v", name, id, mode, err)
	}
	return pl
}

// deleteFiles counts the delete files of a split by kind, each once
// however many of its files it applies to.
func deleteFiles(ps PlannedSplit) map[token.DeleteKind]int {
	seen := map[string]bool{}
	n := map[token.DeleteKind]int{}
	for _, p := range ps.Parts {
		for _, d := range p.Deletes {
			key := d.Path
			if d.ContentOffset != nil {
				key += "#" + strconv.FormatInt(*d.ContentOffset, 10)
			}
			if !seen[key] {
				seen[key] = true
				n[d.Kind]++
			}
		}
	}
	return n
}

// TestUpgradedV1Paths: tablegen.UpgradedV1's v1-era data files are planned
// as raw files while no delete applies to them, and take the row path,
// with the deletes committed after the upgrade attached, once one does.
// The row path's splits are those of mode=rows, whose rows the reader's
// TestEvolutionSnapshots (upgraded_v1) holds to the builder's at every
// snapshot.
func TestUpgradedV1Paths(t *testing.T) {
	tbl, dir := readOnlyTable(t, "upgraded_v1", builtTable(table.Identifier{"evo", "t"}, tablegen.UpgradedV1))
	p := localPlanner(t, dir)
	snaps := tbl.Metadata().Snapshots()
	if pl := planAt(t, p, "evo.t", snaps[1].SnapshotID, ModeAuto); pl.Path != PathFiles || len(pl.Splits) != 2 {
		t.Fatalf("before the upgrade: %s with %d splits, want v1 with 2 (the raw files)", pl.Path, len(pl.Splits))
	}
	// Snapshot 3 adds the equality delete of ids 1 and 5, which applies to
	// both v1 files; snapshot 4 the positional delete of one row of each.
	for _, want := range []struct{ i, pos, eq int }{{2, 0, 1}, {3, 1, 1}} {
		id := snaps[want.i].SnapshotID
		pl := planAt(t, p, "evo.t", id, ModeAuto)
		if pl.Path != PathRows {
			t.Fatalf("snapshot %d: %s, want v2", want.i+1, pl.Path)
		}
		for _, s := range pl.Splits {
			n := deleteFiles(s)
			if n[token.DeletePosition] != want.pos || n[token.DeleteEquality] != want.eq {
				t.Errorf("snapshot %d: %s has %d positional and %d equality delete files, want %d and %d",
					want.i+1, path.Base(s.Parts[0].Data.Path), n[token.DeletePosition], n[token.DeleteEquality], want.pos, want.eq)
			}
		}
		rows := planAt(t, p, "evo.t", id, ModeRows)
		if len(rows.Splits) != len(pl.Splits) {
			t.Fatalf("snapshot %d: %d splits in mode rows, %d in mode auto", want.i+1, len(rows.Splits), len(pl.Splits))
		}
		for k := range pl.Splits {
			if !reflect.DeepEqual(pl.Splits[k].Parts, rows.Splits[k].Parts) {
				t.Errorf("snapshot %d: split %d reads %+v in mode auto, %+v in mode rows", want.i+1, k, pl.Splits[k].Parts, rows.Splits[k].Parts)
			}
		}
	}
}

// TestMetadataColumns: metadata columns take the row path, a table without
// delete files otherwise taking the raw files; they are refused with
// mode=files, which cannot carry them, and row lineage on a table of
// format version 2. The rows are the reader's TestMetadataColumns; the
// request's own refusals (a name that is none, an empty one) handlers'.
func TestMetadataColumns(t *testing.T) {
	ctx := context.Background()
	plainTbl, plainDir := readOnlyTable(t, "scenario-no_deletes", func(ctx context.Context, cat icecatalog.Catalog) (*table.Table, error) {
		for _, sc := range tablegen.Scenarios() {
			if sc.Name == "no_deletes" {
				return sc.Build(ctx, cat, table.Identifier{"scenarios", "no_deletes"})
			}
		}
		return nil, errors.New("no scenario no_deletes")
	})
	plain := localPlanner(t, plainDir)
	id := plainTbl.CurrentSnapshot().SnapshotID
	if pl := planAt(t, plain, "scenarios.no_deletes", id, ModeAuto); pl.Path != PathFiles {
		t.Fatalf("without metadata columns: path %s, want v1 (%q)", pl.Path, pl.Warnings)
	}
	pl, err := plain.Plan(ctx, Request{Table: "scenarios.no_deletes", MetaColumns: token.MetaFile})
	if err != nil || pl.Path != PathRows {
		t.Fatalf("with _file: path %s (%v), want v2", pl.Path, err)
	}

	_, lineageDir := readOnlyTable(t, "lineage", func(ctx context.Context, cat icecatalog.Catalog) (*table.Table, error) {
		b, _, err := tablegen.Lineage(ctx, cat, table.Identifier{"evo", "t"})
		if err != nil {
			return nil, err
		}
		return b.Table, nil
	})
	_, v2Dir := readOnlyTable(t, "evolution", builtTable(table.Identifier{"evo", "t"}, tablegen.Evolution))
	for _, tc := range []struct {
		name string
		dir  string
		req  Request
		says string
	}{
		{"mode=files", lineageDir, Request{Table: "evo.t", MetaColumns: token.MetaPos, Mode: ModeFiles}, "metadataColumns need the row path"},
		{"row lineage on version 2", v2Dir, Request{Table: "evo.t", MetaColumns: token.MetaPos | token.MetaRowID},
			"row lineage needs format version 3, and evo.t is version 2"},
	} {
		_, err := localPlanner(t, tc.dir).Plan(ctx, tc.req)
		if !errors.Is(err, fault.ErrBadRequest) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want a bad request saying %q", tc.name, err, tc.says)
		}
	}
}

// TestV3Types: the V3Types table plans on the row path although no delete
// file applies, raw files being refused for its variant (ErrConflict,
// naming the column). Its rows are the reader's TestV3Types; the plan
// answer's columns and Druid's ingestion handlers'.
func TestV3Types(t *testing.T) {
	tbl, dir := readOnlyTable(t, "v3types", builtTable(table.Identifier{"db", "v3"}, tablegen.V3Types))
	p := localPlanner(t, dir)
	first := tbl.Metadata().Snapshots()[0].SnapshotID
	pl := planAt(t, p, "db.v3", first, ModeAuto)
	why := false
	for _, w := range pl.Warnings {
		why = why || strings.Contains(w, "row path although no delete file applies") && strings.Contains(w, `column "v" is a variant`)
	}
	if pl.Path != PathRows || !why {
		t.Fatalf("auto planned %s with warnings %q, want the row path because of the variant", pl.Path, pl.Warnings)
	}
	_, err := p.Plan(context.Background(), Request{Table: "db.v3", SnapshotID: &first, Mode: ModeFiles})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `column "v" is a variant`) {
		t.Fatalf("mode=files: %v, want a conflict naming the variant", err)
	}
}
