package handlers_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// localWarehouse is an iceberg-go filesystem catalog in a temporary folder.
func localWarehouse(t *testing.T) (*hadoop.Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	cat := catalogtest.Local(t, dir)
	return cat, dir
}

func localServer(t testing.TB, dir string) *testServer {
	return newServer(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil)
}

// TestRawFiles checks the v1 path: byte-identical downloads, with ranges.
func TestRawFiles(t *testing.T) {
	dir, _ := sharedScenarios(t)
	srv := localServer(t, dir)
	sc := tablegen.ScenarioNamed(t, "no_deletes")
	p := srv.plan(t, q("table", "scenarios.no_deletes"))
	if p.Mode != "v1" || p.InputFormat.Type != "parquet" || len(p.Splits) != 2 {
		t.Fatalf("plan %s/%s with %d splits, want v1/parquet with 2", p.Mode, p.InputFormat.Type, len(p.Splits))
	}
	for _, s := range p.Splits {
		onDisk, err := os.ReadFile(strings.TrimPrefix(s.DataFile, "file://"))
		if err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(s.URI, srv.URL)
		resp, body := srv.get(t, path)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, onDisk) {
			t.Fatalf("GET %s: %d, %d bytes; want the %d bytes of %s", path, resp.StatusCode, len(body), len(onDisk), s.DataFile)
		}
		resp, part := srv.get(t, path, "Range", "bytes=100-")
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, onDisk[100:]) {
			t.Fatalf("ranged GET: %d, %d bytes", resp.StatusCode, len(part))
		}
	}
	// mode=rows serves the same table as rows.
	rows := srv.rows(t, srv.plan(t, q("table", "scenarios.no_deletes", "mode", "rows")))
	if len(rows) != len(sc.LiveIDs) {
		t.Fatalf("mode=rows gave %d rows, want %d", len(rows), len(sc.LiveIDs))
	}
}

// TestFileRemovedAfterPlanning: a data file that vanishes after planning
// gives 410 before the first byte, and a data file that breaks while its
// rows are streaming cuts the connection instead of ending the body cleanly.
func TestFileRemovedAfterPlanning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	// 20,000 rows a file, in pages and dictionaries of 8 KiB (which the
	// writer checks every 1,000 rows): the 16-byte token column alone
	// spans about fifty pages, several times the reader's read-ahead
	// window (parquetpage.ReadAhead), so the reader must read more of the
	// second file long after the first rows, which are all the server can
	// write into the few KiB of buffers on both ends (smallBuffers, and a
	// client that reads through a few KiB: nonReader) before the client
	// stops reading. At the writer's default sizes, the tokens of a file
	// of 20,000 rows sit in one dictionary page, read whole at the first
	// row.
	srv := newServerListening(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil, testDeleteCacheSize,
		func(l net.Listener) net.Listener { return smallBuffers{Listener: l} })
	// Snappy: what is checked does not depend on the codec, and zstd was
	// most of the CPU of writing the table under -race.
	writer := catalogtest.WriteProperties(catalogtest.SnappyWrites(cat),
		iceberg.Properties{table.ParquetPageSizeBytesKey: "8192", table.ParquetDictSizeBytesKey: "8192", table.ParquetPageRowLimitKey: "1000"})
	if _, err := tablegen.Bench(ctx, writer, table.Identifier{"gone", "t"}, 40_000, 2, 0.01, 0); err != nil {
		t.Fatal(err)
	}
	p := srv.plan(t, q("table", "gone.t", "minSplits", "2"))
	if p.Mode != "v2" || len(p.Splits) != 2 {
		t.Fatalf("plan %s with %d splits", p.Mode, len(p.Splits))
	}

	// Before the first byte: 410 with a JSON error.
	first := strings.TrimPrefix(p.Splits[0].DataFile, "file://")
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	resp, body := srv.get(t, strings.TrimPrefix(p.Splits[0].URI, srv.URL))
	if resp.StatusCode != http.StatusGone || errorCode(t, body) != "file_gone" {
		t.Fatalf("removed data file: %d %s", resp.StatusCode, body)
	}

	// After the first byte: the file is cut short while its rows stream.
	second := strings.TrimPrefix(p.Splits[1].DataFile, "file://")
	resp2 := nonReader(t, strings.TrimPrefix(srv.URL, "http://"), strings.TrimPrefix(p.Splits[1].URI, srv.URL))
	if resp2.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp2.StatusCode)
	}
	head := make([]byte, 1024)
	if _, err := io.ReadFull(resp2.Body, head); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(second, 1024); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp2.Body)
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d more bytes; a broken file must abort it", len(rest))
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "unexpected EOF") {
		t.Logf("stream cut with %v", err)
	}
}

// TestMetadataExpiredAfterPlanning: when the metadata file a token pins is
// gone (the table moved on and expired it), a replica that has not read it
// answers the row stream 410 before the first byte, saying to plan again.
func TestMetadataExpiredAfterPlanning(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	srv := localServer(t, dir)
	tbl, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"expired", "t"}, 1000, 1, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := srv.plan(t, q("table", "expired.t"))
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{"moved": "on"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(strings.TrimPrefix(tbl.MetadataLocation(), "file://")); err != nil {
		t.Fatal(err)
	}
	replica := localServer(t, dir)
	resp, body := replica.get(t, strings.TrimPrefix(p.Splits[0].URI, srv.URL))
	if resp.StatusCode != http.StatusGone || errorCode(t, body) != "file_gone" || !strings.Contains(string(body), "plan again") {
		t.Fatalf("pinned metadata gone: %d %s", resp.StatusCode, body)
	}
}
