package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// druidClient reads a URI as Druid's http input source does (HttpEntity
// with RetryingInputStream): every request carries `Range: bytes=<offset>-`,
// starting at bytes=0-; after a broken connection it reconnects at the
// offset consumed so far, and when an answer has no Content-Range it skips
// the bytes itself.
type druidClient struct {
	c   *http.Client
	rnd *rand.Rand
	// cutsLeft is how many connections it may still break on purpose.
	cutsLeft int
	cuts     int
}

// read returns the whole body of uri, breaking connections at random points.
func (d *druidClient) read(t *testing.T, uri string) []byte {
	t.Helper()
	var got []byte
	for attempt := 0; ; attempt++ {
		if attempt > 1000 {
			t.Fatalf("%s: no progress after %d attempts", uri, attempt)
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, uri, nil)
		if err != nil {
			t.Fatal(err)
		}
		offset := int64(len(got))
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		resp, err := d.c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", uri, err)
		}
		body := io.Reader(resp.Body)
		switch {
		case resp.StatusCode == http.StatusPartialContent:
			if cr := resp.Header.Get("Content-Range"); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", offset)) {
				t.Fatalf("Content-Range %q for offset %d", cr, offset)
			}
		case resp.StatusCode == http.StatusOK:
			if _, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
				t.Fatalf("skip %d bytes: %v", offset, err)
			}
		case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && offset > 0:
			resp.Body.Close()
			return got // a raw file read to its end
		default:
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("GET %s at %d: %d %s", uri, offset, resp.StatusCode, b)
		}
		if d.cutsLeft > 0 {
			// Break this connection after a random number of bytes.
			n := d.rnd.Int64N(4096)
			chunk, err := io.ReadAll(io.LimitReader(body, n))
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			got = append(got, chunk...)
			resp.Body.Close()
			if int64(len(chunk)) == n {
				d.cutsLeft--
				d.cuts++
				continue
			}
			return got // the body ended before the cut
		}
		rest, err := io.ReadAll(body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return append(got, rest...)
	}
}

// TestDruidRetries reads every split of a table, on the row path and on the
// raw-file path, with a Druid-like client that breaks connections at random
// points; the bytes it assembles equal one clean read.
func TestDruidRetries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	srv := localServer(t, dir)
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
			query := q("table", "retry.t", "mode", mode)
			if mode == "files" {
				// A raw-file plan needs a table without deletes: plan the
				// first snapshot, before the delete files.
				tbl, err := cat.LoadTable(ctx, table.Identifier{"retry", "t"})
				if err != nil {
					t.Fatal(err)
				}
				query.Set("snapshotId", strconv.FormatInt(tbl.Metadata().Snapshots()[0].SnapshotID, 10))
			}
			p := srv.plan(t, query)
			d := &druidClient{c: srv.Client(), rnd: rand.New(rand.NewPCG(seed, 1)), cutsLeft: 60}
			for _, u := range p.InputSource.URIs {
				resp, clean := srv.get(t, strings.TrimPrefix(u, srv.URL))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("clean read: %d", resp.StatusCode)
				}
				if got := d.read(t, u); !bytes.Equal(got, clean) {
					t.Fatalf("%s: assembled %d bytes differ from the clean read of %d", u, len(got), len(clean))
				}
			}
			if d.cuts < 50 {
				t.Fatalf("only %d cuts happened; the test wants at least 50", d.cuts)
			}
		})
	}
}
