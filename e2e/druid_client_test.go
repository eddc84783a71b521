package e2e_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// TestDruidRetries reads every split of a table, on the row path and on the
// raw-file path, with a Druid-like client that breaks connections at random
// points; the bytes it assembles equal one clean read.
func TestDruidRetries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	srv := sidecartest.LocalServer(t, dir)
	// Every reconnection replans nothing but reads its split again up to
	// the offset, so the cost is the cuts times the split's first pages:
	// the table is as small as leaves each mode's cuts (60 of fewer than
	// 4 KiB each) inside its streams; the count of cuts below fails the
	// test if it no longer does.
	if _, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"retry", "t"}, 6_000, 2, 0.05, 0.01); err != nil {
		t.Fatal(err)
	}
	seed := uint64(20261130)
	t.Logf("seed %d", seed)
	for _, mode := range []string{"rows", "files"} {
		t.Run(mode, func(t *testing.T) {
			query := sidecartest.Q("table", "retry.t", "mode", mode)
			if mode == "files" {
				// A raw-file plan needs a table without deletes: plan the
				// first snapshot, before the delete files.
				tbl, err := cat.LoadTable(ctx, table.Identifier{"retry", "t"})
				if err != nil {
					t.Fatal(err)
				}
				query.Set("snapshotId", strconv.FormatInt(tbl.Metadata().Snapshots()[0].SnapshotID, 10))
			}
			p := srv.Plan(t, query)
			d := &sidecartest.DruidClient{Client: srv.Client(), Rand: rand.New(rand.NewPCG(seed, 1)), CutsLeft: 60}
			for _, u := range p.InputSource.URIs {
				resp, clean := srv.Get(t, strings.TrimPrefix(u, srv.URL))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("clean read: %d", resp.StatusCode)
				}
				if got := d.Read(t, u); !bytes.Equal(got, clean) {
					t.Fatalf("%s: assembled %d bytes differ from the clean read of %d", u, len(got), len(clean))
				}
			}
			if d.Cuts < 50 {
				t.Fatalf("only %d cuts happened; the test wants at least 50", d.Cuts)
			}
		})
	}
}
