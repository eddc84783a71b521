package handlers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/klauspost/compress/zstd"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
)

// decompress reads a compressed row stream as Druid does by its suffix.
func decompress(t *testing.T, suffix string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch suffix {
	case ".gz":
		gz, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	case ".zst":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decompress %s: %v", suffix, err)
	}
	return out
}

// TestCompressedRows: compression=gzip and zstd hand out row URIs that end
// in .gz and .zst; each serves the plain stream's bytes compressed, the
// same bytes on every read and on another sidecar with the key, with Range
// counting the compressed bytes; and the Druid model, which decompresses
// by the extension above its retries, ingests the table's live rows
// through broken connections.
func TestCompressedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	// Splits of 1,000 rows: each compresses to several times the bytes
	// the Druid model's connections are cut after (checked below).
	tbl, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"gz", "t"}, 3_000, 6, 0.02, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	// What the datasource must hold, the same for both codecs.
	want := sidecartest.DruidExpect(t, oracle, "event_ts", tbl.Schema().Fields())
	a := localServer(t, dir)
	b := splittingServer(t, dir, splits.WithTargetSplitSize(1))
	plainPlan := a.plan(t, q("table", "gz.t", "minSplits", "3"))
	// The plain streams, which both codecs compress.
	var plains [][]byte
	for _, s := range plainPlan.Splits {
		resp, plain := a.get(t, strings.TrimPrefix(s.URI, a.URL))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", s.URI, resp.StatusCode)
		}
		plains = append(plains, plain)
	}
	for _, tc := range []struct{ compression, suffix, contentType string }{
		{"gzip", ".gz", "application/gzip"}, {"zstd", ".zst", "application/zstd"},
	} {
		t.Run(tc.compression, func(t *testing.T) {
			p := a.plan(t, q("table", "gz.t", "minSplits", "3", "compression", tc.compression))
			if len(p.Splits) != len(plainPlan.Splits) {
				t.Fatalf("%d splits, %d uncompressed", len(p.Splits), len(plainPlan.Splits))
			}
			for i, s := range p.Splits {
				if !strings.HasSuffix(s.URI, "/rows.ndjson"+tc.suffix) {
					t.Fatalf("URI %s", s.URI)
				}
				path := strings.TrimPrefix(s.URI, a.URL)
				resp, body := a.get(t, path)
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != tc.contentType {
					t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				_, other := b.get(t, path)
				if !bytes.Equal(body, other) {
					t.Fatalf("%s: two sidecars give different compressed bytes", path)
				}
				plain := plains[i]
				if got := decompress(t, tc.suffix, body); !bytes.Equal(got, plain) {
					t.Fatalf("%s decompresses to %d bytes, the plain stream has %d", path, len(got), len(plain))
				}
				if len(body) >= len(plain) {
					t.Fatalf("%s: %d compressed bytes for %d plain", path, len(body), len(plain))
				}
				for _, n := range []int{len(body) / 3, len(body) - 1} {
					resp, part := a.get(t, path, "Range", fmt.Sprintf("bytes=%d-", n))
					if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, body[n:]) {
						t.Fatalf("%s from byte %d: %d, %d bytes; want the last %d", path, n, resp.StatusCode, len(part), len(body)-n)
					}
				}
			}

			// POST /splits takes the same two options in the spec.
			resp, body := a.post(t, "/splits", fmt.Sprintf(`{"type": "iceberg", "namespace": "gz", "tableName": "t", "minSplits": 3, "compression": %q}`, tc.compression))
			var posted struct {
				plan
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal(body, &posted); resp.StatusCode != http.StatusOK || err != nil {
				t.Fatalf("POST /splits: %d %s", resp.StatusCode, body)
			}
			if !slices.Equal(posted.InputSource.URIs, p.InputSource.URIs) || len(posted.Warnings) != 0 {
				t.Fatalf("POST /splits answers %q with warnings %q; GET answers %q", posted.InputSource.URIs, posted.Warnings, p.InputSource.URIs)
			}

			cut := &druidsim.CuttingTransport{Cuts: 6, MaxBytes: 10_000, Seed: 7}
			d := druidsim.New()
			d.Client = &http.Client{Transport: cut}
			resp, task := a.get(t, "/druid/task?"+q("table", "gz.t", "dataSource", "gz", "timestampColumn", "event_ts",
				"compression", tc.compression, "segmentGranularity", "ALL").Encode())
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("/druid/task: %d %s", resp.StatusCode, task)
			}
			if err := d.ExecTask(ctx, task); err != nil {
				t.Fatal(err)
			}
			if got := sidecartest.ModelRows(d, "gz"); !slicesEqual(got, want) {
				t.Fatalf("the datasource holds %d rows, the oracle %d", len(got), len(want))
			}
			resumed := 0
			for _, f := range d.Fetches() {
				resumed += len(f.Opens) - 1
			}
			if cut.Done() < 4 || resumed < 4 {
				t.Fatalf("%d answers cut, %d reads resumed; the test wants several", cut.Done(), resumed)
			}
		})
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
