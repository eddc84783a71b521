package reader_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// TestV3Types plans and reads the V3Types table (variants, geometry,
// geography, unknown): a projection reads the projected columns only,
// geo=wkb reads base64 WKB, every snapshot reads as the builder wrote it,
// in order, through the planner's packing, and the row lineage is the
// spec's. The plan's refusal of raw files is splits' TestV3Types; the plan
// answer's columns and Druid's ingestion are handlers'.
func TestV3Types(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	built, err := tablegen.V3Types(ctx, catalogtest.SnappyWrites(catalogtest.Local(t, dir)), table.Identifier{"db", "v3"})
	if err != nil {
		t.Fatal(err)
	}
	pr := localPlanned(t, dir)

	t.Run("projected columns", func(t *testing.T) {
		req := rowsRequest("db.v3", 0)
		req.Mode, req.Columns = splits.ModeAuto, []string{"gg", "id"}
		p := pr.Plan(t, req)
		if len(p.Fields) != 2 || p.Fields[1].Name != "gg" {
			t.Errorf("projected fields %v", p.Fields)
		}
		for _, row := range pr.Rows(t, p) {
			if !strings.HasPrefix(row, `{"id":`) || strings.Count(row, `":`) != 2 {
				t.Errorf("projected row %s", row)
			}
		}
	})

	t.Run("geo=wkb serves base64 WKB", func(t *testing.T) {
		req := rowsRequest("db.v3", 0)
		req.Mode, req.Columns, req.Encoding = splits.ModeAuto, []string{"id", "g"}, token.Encoding{GeoWKB: true}
		got := pr.Rows(t, pr.Plan(t, req))
		want := `{"id":1,"g":"` + base64.StdEncoding.EncodeToString(tablegen.V3TypesWKB(1)) + `"}`
		if len(got) == 0 || got[0] != want {
			t.Fatalf("rows %q, want the first %s", got, want)
		}
	})

	t.Run("every snapshot streams as written", func(t *testing.T) {
		for i, want := range built.Snapshots {
			got := pr.Rows(t, pr.Plan(t, rowsRequest("db.v3", want.SnapshotID)))
			if !slices.Equal(got, want.Rows) {
				t.Errorf("snapshot %d (%s):\n got %s\nwant %s", i+1, want.Doc, strings.Join(got, "\n     "), strings.Join(want.Rows, "\n     "))
			}
		}
	})

	// Row lineage of the table, written out from the spec's inheritance
	// rules: the data files are added by snapshots 1, 2, 3 and 5 (4 adds
	// deletion vectors only), so their rows' _last_updated_sequence_number
	// is that snapshot's, and _row_id is first_row_id + _pos, first_row_id
	// being the number of rows the files before it added; the deletion
	// vectors of snapshot 4 leave the other rows' ids and positions alone.
	t.Run("row lineage, by hand", func(t *testing.T) {
		ids := func(rows []string) []int64 {
			var out []int64
			for _, row := range rows {
				var r struct{ ID int64 }
				if err := json.Unmarshal([]byte(row), &r); err != nil {
					t.Fatal(err)
				}
				out = append(out, r.ID)
			}
			return out
		}
		var want []string
		var before []int64
		first := 0
		for _, snap := range []int{1, 2, 3, 5} {
			var added []int64
			for _, id := range ids(built.Snapshots[snap-1].Rows) {
				if !slices.Contains(before, id) {
					added = append(added, id)
				}
			}
			for pos, id := range added {
				if id != 2 && id != 15 {
					want = append(want, fmt.Sprintf(`{"id":%d,"_row_id":%d,"_last_updated_sequence_number":%d,"_pos":%d}`,
						id, first+pos, snap, pos))
				}
			}
			first += len(added)
			before = append(before, added...)
		}
		if len(want) != len(built.Current().Rows) {
			t.Fatalf("%d rows with lineage, the table has %d", len(want), len(built.Current().Rows))
		}
		req := metaRequest(t, "db.v3", 0, "_row_id,_last_updated_sequence_number,_pos")
		req.Columns = []string{"id"}
		servetest.SameRows(t, pr.Rows(t, pr.Plan(t, req)), want)
	})
}
