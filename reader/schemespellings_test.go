package reader_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// TestS3SchemeSpellings reads tablegen.Spelled from an object store (the
// in-process S3) whose warehouse is spelled s3n:// or oss://, which
// iceberg-go's S3 FileIO opens as s3://: every data and delete file path
// in the manifests carries that spelling, and every snapshot's rows,
// planned as the sidecar plans them and read through the table's FileIO,
// equal the builder's and iceberg-go's. The position delete rows that
// spell the data file with another scheme of the same store delete
// nothing, as in Iceberg's Java reader.
func TestS3SchemeSpellings(t *testing.T) {
	// The in-process S3 is reached with explicit keys and region; the AWS
	// SDK must not probe the instance metadata address. It is plain HTTP,
	// so the SDK need not parse the CA bundle AWS_CA_BUNDLE may name (the
	// system's, a fifth of the test's CPU under -race), as it does for
	// every FileIO it loads.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CA_BUNDLE", "")
	ctx := context.Background()
	signer, err := token.NewSigner(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	canonical := func(rows []string) []string {
		t.Helper()
		c, err := tablegen.CanonicalRows(rows)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		scheme string
		others []string
	}{
		{"s3n", []string{"s3", "s3a"}},
		{"oss", []string{"s3", "s3n"}},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			lake := catalogtest.NewS3Lake(t, tc.scheme+"://lake/warehouse")
			built, err := tablegen.Spelled(ctx, catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "t"}, tc.others...)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			planner, err := splits.NewPlanner(catalogtest.Open(t, lake.Config(built.Table)), signer, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range built.Snapshots {
				p, err := planner.Plan(ctx, splits.Request{Table: "lake.t", Mode: splits.ModeRows, SnapshotID: &want.SnapshotID})
				if err != nil {
					t.Fatalf("snapshot %d: plan: %v", i+1, err)
				}
				var got []string
				for _, ps := range p.Splits {
					for _, part := range ps.Parts {
						if !strings.HasPrefix(part.Data.Path, tc.scheme+"://lake/") {
							t.Fatalf("snapshot %d: data file %s is not spelled %s://", i+1, part.Data.Path, tc.scheme)
						}
					}
					src, err := planner.Source(ctx, ps.Parts[0])
					if err != nil {
						t.Fatalf("snapshot %d: %v", i+1, err)
					}
					lines, _ := readParts(t, newReader(src.FS), ps.Parts, src.Schema)
					got = append(got, lines...)
				}
				if g, w := canonical(got), canonical(want.Rows); !slices.Equal(g, w) {
					t.Fatalf("snapshot %d: rows\n%s\nwant the builder's\n%s", i+1, strings.Join(g, "\n"), strings.Join(w, "\n"))
				}
				oracle, err := tablegen.OracleRows(ctx, built.Table, want.SnapshotID)
				if err != nil {
					t.Fatalf("snapshot %d: oracle: %v", i+1, err)
				}
				if g, w := canonical(got), canonical(oracle); !slices.Equal(g, w) {
					t.Fatalf("snapshot %d: rows\n%s\nwant ReadTasks'\n%s", i+1, strings.Join(g, "\n"), strings.Join(w, "\n"))
				}
			}
			// The equality delete (of id 5) is planned with B only (A's ids
			// are 1-4), the positional one with A: each split counts the
			// delete files its files carry once.
			p, err := planner.Plan(ctx, splits.Request{Table: "lake.t"})
			if err != nil {
				t.Fatal(err)
			}
			deletes := 0
			for _, ps := range p.Splits {
				seen := map[string]bool{}
				for _, part := range ps.Parts {
					for _, d := range part.Deletes {
						if (d.Kind == token.DeletePosition || d.Kind == token.DeleteEquality) && !seen[d.Path] {
							seen[d.Path] = true
							deletes++
						}
					}
				}
			}
			if p.Path != splits.PathRows || deletes != 2 {
				t.Errorf("current plan: %s path with %d delete files attached, want %s with 2", p.Path, deletes, splits.PathRows)
			}
		})
	}
}
