package splits

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/token"
)

// TestIncrementalAppends: fromSnapshot plans the data files appended after
// it, and refuses a range in which rows were deleted.
func TestIncrementalAppends(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cat := catalogtest.Local(t, dir)
	var sc tablegen.Scenario
	for _, s := range tablegen.Scenarios() {
		if s.Name == "positional_multi_file" { // appends A, B, C, then positional deletes
			sc = s
		}
	}
	tbl, err := sc.Build(ctx, cat, table.Identifier{"inc", "t"})
	if err != nil {
		t.Fatal(err)
	}
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 4 {
		t.Fatalf("%d snapshots, want 3 appends and a delete", len(snaps))
	}
	signer, _ := token.NewSigner(key(4))
	p, err := NewPlanner(catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: dir}), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := func(plan Plan) []string {
		var out []string
		for _, s := range plan.Splits {
			out = append(out, path.Base(s.Parts[0].Data.Path))
		}
		slices.Sort(out)
		return out
	}
	id := func(i int) *int64 { return &snaps[i].SnapshotID }

	plan, err := p.Plan(ctx, Request{Table: "inc.t", FromSnapshot: id(0), SnapshotID: id(2)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := files(plan), []string{tablegen.DataFileName(2), tablegen.DataFileName(3)}; !slices.Equal(got, want) {
		t.Fatalf("appended after the first snapshot: %v, want %v", got, want)
	}
	if plan.Path != PathFiles {
		t.Fatalf("appended files carry no deletes; path %s", plan.Path)
	}
	plan, err = p.Plan(ctx, Request{Table: "inc.t", FromSnapshot: id(1), SnapshotID: id(2)})
	if err != nil || !slices.Equal(files(plan), []string{tablegen.DataFileName(3)}) {
		t.Fatalf("appended after the second snapshot: %v, %v", files(plan), err)
	}

	_, err = p.Plan(ctx, Request{Table: "inc.t", FromSnapshot: id(0)})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "/changes") {
		t.Fatalf("a delete in the range: %v, want ErrConflict pointing to /changes", err)
	}
	if _, err := p.Plan(ctx, Request{Table: "inc.t", FromSnapshot: id(2), SnapshotID: id(0)}); !errors.Is(err, fault.ErrBadRequest) {
		t.Fatalf("from after to: %v, want fault.ErrBadRequest", err)
	}
	missing := int64(42)
	if _, err := p.Plan(ctx, Request{Table: "inc.t", FromSnapshot: &missing}); !errors.Is(err, ErrSnapshotNotFound) {
		t.Fatalf("unknown fromSnapshot: %v", err)
	}
}
