package handlers_test

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/druidiceberg/sidecar/internal/tablegen"

	// The S3 FileIO, registered on import as in main.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
)

// The AWS SDK would otherwise probe the instance metadata address. It is
// set once for the package, not with t.Setenv in inProcessS3, so that the
// tests over the in-process S3 can run in parallel.
func init() {
	if err := os.Setenv("AWS_EC2_METADATA_DISABLED", "true"); err != nil {
		panic(err)
	}
}

// inProcessS3 starts gofakes3 behind httptest with one bucket and returns
// the FileIO properties that reach it. It is the in-process stand-in for an
// object store, so the S3 code path runs in plain `go test`; the real
// object-store tier runs from .ci/run.
func inProcessS3(t *testing.T, bucket string) (*httptest.Server, map[string]string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return srv, map[string]string{
		"s3.endpoint":                 srv.URL,
		"s3.region":                   "us-east-1",
		"s3.access-key-id":            "test-key",
		"s3.secret-access-key":        "test-secret",
		"s3.force-virtual-addressing": "false",
	}
}

// scenarioNamed is the tablegen scenario of that name.
func scenarioNamed(t testing.TB, name string) tablegen.Scenario {
	t.Helper()
	for _, s := range tablegen.Scenarios() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %s", name)
	return tablegen.Scenario{}
}

// catalogUnderTest opens a catalog to write with and says how the sidecar
// reaches the same catalog.
type catalogUnderTest struct {
	name string
	open func(t *testing.T) (catalog.Catalog, sidecatalog.Config)
}

// s3Lake is a warehouse in the in-process S3 store: tests write its tables
// with iceberg-go's hadoop catalog, which writes to an object store when
// told that its commits are not atomic (one writer here), and the sidecar
// serves the tables they name as a static catalog, reading metadata and
// files through the same store.
type s3Lake struct {
	S3    *httptest.Server
	Props map[string]string
	Cat   *hadoop.Catalog
}

// newS3Lake starts an in-process S3 store with the bucket lake and opens the
// hadoop catalog on the warehouse (such as s3://lake/warehouse) in it.
func newS3Lake(t *testing.T, warehouse string) s3Lake {
	t.Helper()
	srv, props := inProcessS3(t, "lake")
	all := maps.Clone(props)
	all["allow-unsafe-commits"] = "true"
	cat, err := hadoop.NewCatalog("lake", warehouse, all)
	if err != nil {
		t.Fatalf("open the hadoop catalog on %s: %v", warehouse, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return s3Lake{S3: srv, Props: props, Cat: cat}
}

// config is how the sidecar reaches tbl: a static catalog of its current
// metadata, read with the store's properties.
func (l s3Lake) config(tbl *table.Table) sidecatalog.Config {
	return sidecatalog.Config{Type: "static", Name: "lake", Props: l.Props,
		Tables: map[string]string{strings.Join(tbl.Identifier(), "."): tbl.MetadataLocation()}}
}

// integrationCatalogs are the catalogs on real servers, which the
// integration tier (-tags integration) adds.
var integrationCatalogs []catalogUnderTest

func catalogsUnderTest() []catalogUnderTest {
	return append([]catalogUnderTest{
		{"local", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			cat, dir := localWarehouse(t)
			return cat, sidecatalog.Config{Type: "local", Warehouse: dir}
		}},
	}, integrationCatalogs...)
}

// TestEveryCatalog runs one scenario through every catalog: create a v2
// table through the catalog, append, delete by position and by equality;
// the sidecar's rows equal the expected live rows and ReadTasks'; a
// snapshot-time query returns the earlier state.
func TestEveryCatalog(t *testing.T) {
	sc := scenarioNamed(t, "positional_and_equality")
	ctx := context.Background()
	for _, c := range catalogsUnderTest() {
		t.Run(c.name, func(t *testing.T) {
			cat, cfg := c.open(t)
			tbl, err := sc.Build(ctx, cat, table.Identifier{"lake", "orders"})
			if err != nil {
				t.Fatalf("build the scenario through the catalog: %v", err)
			}
			srv := newServer(t, cfg, nil)

			want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(sc.LiveIDs) {
				t.Fatalf("ReadTasks gives %d rows, the scenario says %d", len(want), len(sc.LiveIDs))
			}
			p := srv.plan(t, q("table", "lake.orders"))
			if p.Mode != "v2" {
				t.Fatalf("planned %s, want v2", p.Mode)
			}
			assertSameRows(t, srv.rows(t, p), want)

			// The first snapshot, by the time it was committed.
			first := tbl.Metadata().Snapshots()[0]
			earlier, err := tablegen.OracleRows(ctx, tbl, first.SnapshotID)
			if err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(first.TimestampMs).UTC().Format(time.RFC3339Nano)
			p = srv.plan(t, q("table", "lake.orders", "mode", "rows", "snapshotTime", at))
			if p.SnapshotID == nil || *p.SnapshotID != first.SnapshotID {
				t.Fatalf("snapshotTime %s planned %v, want %s", at, p.SnapshotID, strconv.FormatInt(first.SnapshotID, 10))
			}
			assertSameRows(t, srv.rows(t, p), earlier)
		})
	}
}

// TestObjectStoreDiesMidStream: when the object store goes away while a row
// stream is running, the client sees an error, never a clean short body.
func TestObjectStoreDiesMidStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lake := newS3Lake(t, "s3://lake/warehouse")
	// Three files of 2,000 rows in one split: the reader opens the second
	// file, and reads its pages, only after the first file's rows, of
	// which the server can write no more than a few hundred into the few
	// KiB of buffers before the client stops reading.
	built, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "big"}, 6_000, 3, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServerListening(t, lake.config(built), nil, testDeleteCacheSize, func(l net.Listener) net.Listener { return smallBuffers{Listener: l} })
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

// TestReadyzFollowsTheCatalog: once connected, /readyz reports whether the
// catalog's storage answered the last table load.
func TestReadyzFollowsTheCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lake := newS3Lake(t, "s3://lake/warehouse")
	tbl, err := scenarioNamed(t, "no_deletes").Build(ctx, lake.Cat, table.Identifier{"lake", "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, lake.config(tbl), nil)
	srv.plan(t, q("table", "lake.t"))
	if resp, body := srv.get(t, "/readyz"); resp.StatusCode != 200 {
		t.Fatalf("/readyz with the catalog up: %d %s", resp.StatusCode, body)
	}
	lake.S3.CloseClientConnections()
	lake.S3.Close()
	resp, body := srv.get(t, "/splits?table=lake.t")
	if resp.StatusCode != 503 || errorCode(t, body) != "unavailable" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("/splits with the store down: %d %s", resp.StatusCode, body)
	}
	if resp, body := srv.get(t, "/readyz"); resp.StatusCode != 503 {
		t.Fatalf("/readyz after a failed load: %d %s", resp.StatusCode, body)
	}
	// A load that gets an answer, even "no such table", makes it ready.
	if resp, _ := srv.get(t, "/splits?table=lake.absent"); resp.StatusCode != 404 {
		t.Fatalf("an absent table: %d", resp.StatusCode)
	}
	if resp, body := srv.get(t, "/readyz"); resp.StatusCode != 200 {
		t.Fatalf("/readyz after the catalog answered: %d %s", resp.StatusCode, body)
	}
}
