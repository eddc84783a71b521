package handlers_test

import (
	"context"
	"io"
	"net"
	"os"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// The AWS SDK would otherwise probe the instance metadata address. It is
// set once for the package, not with t.Setenv in each test, so that the
// tests over the in-process S3 can run in parallel.
func init() {
	if err := os.Setenv("AWS_EC2_METADATA_DISABLED", "true"); err != nil {
		panic(err)
	}
}

// TestObjectStoreDiesMidStream: when the object store goes away while a row
// stream is running, the client sees an error, never a clean short body.
func TestObjectStoreDiesMidStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lake := catalogtest.NewS3Lake(t, "s3://lake/warehouse")
	// Three files of 2,000 rows in one split: the reader opens the second
	// file, and reads its pages, only after the first file's rows, of
	// which the server can write no more than a few hundred into the few
	// KiB of buffers before the client stops reading.
	built, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "big"}, 6_000, 3, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServerListening(t, lake.Config(built), nil, testDeleteCacheSize, func(l net.Listener) net.Listener { return smallBuffers{Listener: l} })
	p := srv.plan(t, q("table", "lake.big"))
	if len(p.Splits) != 1 || p.Splits[0].DataFiles != 3 {
		t.Fatalf("%d splits (%+v); want one of the three data files", len(p.Splits), p.Splits)
	}
	resp, err := srv.Client().Get(p.Splits[0].URI)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	head := make([]byte, 4096)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	lake.S3.CloseClientConnections()
	lake.S3.Close()
	rest, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d more bytes with the object store gone", len(rest))
	}
}
