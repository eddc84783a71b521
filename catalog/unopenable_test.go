package catalog_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// TestUnopenableSchemeRefusedAtPlanning: a table whose manifests name a
// data file on gs:// or a delete file on abfss://, stores this build has
// no FileIO for, is refused when planned (the catalog's Storage check:
// fault.ErrUnsupported, 422 unsupported, naming the file and its scheme)
// rather than handed out as splits whose streams fail; the snapshot before
// it still plans and reads.
func TestUnopenableSchemeRefusedAtPlanning(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ data, del, what string }{
		{"gs", "", "data file"},
		{"", "abfss", "position delete file"},
	} {
		scheme := tc.data + tc.del
		t.Run(scheme, func(t *testing.T) {
			if slices.Contains(icebergio.GetRegisteredSchemes(), scheme) {
				t.Fatalf("this test binary has a FileIO for %s://; the test needs one without", scheme)
			}
			dir := t.TempDir()
			built, err := tablegen.ForeignStore(ctx, catalogtest.Local(t, dir), table.Identifier{"evo", "t"}, tc.data, tc.del)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			s := newServed(t, catalog.Config{Type: "local", Warehouse: dir})
			first := built.Snapshots[0]
			servetest.SameRows(t, s.Rows(t, s.Plan(t, splits.Request{Table: "evo.t", Mode: splits.ModeRows, SnapshotID: &first.SnapshotID})), first.Rows)

			var foreign string
			tasks, err := built.Table.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range tasks {
				files := append(append(slices.Clone(task.DeleteFiles), task.EqualityDeleteFiles...), task.File)
				for _, f := range files {
					if strings.HasPrefix(f.FilePath(), scheme+"://") {
						foreign = f.FilePath()
					}
				}
			}
			if foreign == "" {
				t.Fatalf("the table names no file on %s://", scheme)
			}
			modes := []splits.Mode{splits.ModeAuto, splits.ModeRows, splits.ModeFiles}
			if tc.del != "" {
				// mode=files refuses a table with deletes (409) before its
				// stores are looked at.
				modes = modes[:2]
			}
			for _, mode := range modes {
				_, err := s.Planner.Plan(ctx, splits.Request{Table: "evo.t", Mode: mode})
				if !errors.Is(err, fault.ErrUnsupported) || errors.Is(err, fault.ErrForbiddenLocation) || errors.Is(err, splits.ErrConflict) {
					t.Fatalf("mode=%s: %v, want ErrUnsupported", mode, err)
				}
				for _, want := range []string{tc.what, foreign, scheme + "://"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("mode=%s: the error %v does not name %q", mode, err, want)
					}
				}
			}
		})
	}
}
