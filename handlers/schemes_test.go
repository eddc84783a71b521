package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestS3SchemeSpellings serves tablegen.Spelled from an object store (the
// in-process S3) whose warehouse is spelled s3n:// or oss://, which
// iceberg-go's S3 FileIO opens as s3://: every data and delete file path in
// the manifests carries that spelling, and every snapshot's rows equal the
// builder's and iceberg-go's. The position delete rows that spell the data
// file with another scheme of the same store delete nothing, as in
// Iceberg's Java reader.
func TestS3SchemeSpellings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		scheme string
		others []string
	}{
		{"s3n", []string{"s3", "s3a"}},
		{"oss", []string{"s3", "s3n"}},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			lake := newS3Lake(t, tc.scheme+"://lake/warehouse")
			built, err := tablegen.Spelled(ctx, catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "t"}, tc.others...)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			srv := newServer(t, lake.config(built.Table), nil)
			for i, want := range built.Snapshots {
				p := srv.plan(t, q("table", "lake.t", "mode", "rows", "snapshotId", strconv.FormatInt(want.SnapshotID, 10)))
				for _, s := range p.Splits {
					if !strings.HasPrefix(s.DataFile, tc.scheme+"://lake/") {
						t.Fatalf("snapshot %d: data file %s is not spelled %s://", i+1, s.DataFile, tc.scheme)
					}
				}
				got := srv.rows(t, p)
				assertSameRows(t, got, want.Rows)
				oracle, err := tablegen.OracleRows(ctx, built.Table, want.SnapshotID)
				if err != nil {
					t.Fatalf("snapshot %d: oracle: %v", i+1, err)
				}
				assertSameRows(t, got, oracle)
			}
			// The equality delete (of id 5) is planned with B only (A's ids
			// are 1-4), the positional one with A.
			p := srv.plan(t, q("table", "lake.t"))
			deletes := 0
			for _, s := range p.Splits {
				deletes += s.PositionDeleteFiles + s.EqualityDeleteFiles
			}
			if p.Mode != "v2" || deletes != 2 {
				t.Errorf("current plan: mode %s with %d delete files attached, want v2 with 2", p.Mode, deletes)
			}
		})
	}
}

// TestUnopenableSchemeRefusedAtPlanning: a table whose manifests name a
// data file on gs:// or a delete file on abfss://, stores this build has
// no FileIO for, is refused when planned (422 unsupported, naming the file
// and its scheme) rather than handed out as URIs whose streams fail; the
// snapshot before it still plans and reads.
func TestUnopenableSchemeRefusedAtPlanning(t *testing.T) {
	t.Parallel()
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
			cat, dir := localWarehouse(t)
			built, err := tablegen.ForeignStore(ctx, cat, table.Identifier{"evo", "t"}, tc.data, tc.del)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			srv := localServer(t, dir)
			first := built.Snapshots[0]
			got := srv.rows(t, srv.plan(t, q("table", "evo.t", "mode", "rows", "snapshotId", strconv.FormatInt(first.SnapshotID, 10))))
			assertSameRows(t, got, first.Rows)

			var foreign string
			tasks, err := built.Table.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range tasks {
				for _, f := range append(append([]string{task.File.FilePath()}, paths(task.DeleteFiles)...), paths(task.EqualityDeleteFiles)...) {
					if strings.HasPrefix(f, scheme+"://") {
						foreign = f
					}
				}
			}
			if foreign == "" {
				t.Fatalf("the table names no file on %s://", scheme)
			}
			modes := []string{"auto", "rows", "files"}
			if tc.del != "" {
				// mode=files refuses a table with deletes (409) before its
				// stores are looked at.
				modes = modes[:2]
			}
			for _, mode := range modes {
				resp, body := srv.get(t, "/splits?"+q("table", "evo.t", "mode", mode).Encode())
				if resp.StatusCode != http.StatusUnprocessableEntity || errorCode(t, body) != "unsupported" {
					t.Fatalf("mode=%s: %d %s, want 422 unsupported", mode, resp.StatusCode, body)
				}
				for _, want := range []string{tc.what, foreign, scheme + "://"} {
					if !strings.Contains(string(body), want) {
						t.Errorf("mode=%s: the error %s does not name %q", mode, body, want)
					}
				}
			}
		})
	}
}

// paths are the files' paths.
func paths(files []iceberg.DataFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.FilePath()
	}
	return out
}
