package sidecartest

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"

	// The S3 FileIO, registered on import as in main.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
)

// noInstanceMetadata keeps the AWS SDK from probing the instance metadata
// address: set once for the process, not with t.Setenv, so that the tests
// over the in-process S3 can run in parallel.
var noInstanceMetadata sync.Once

// InProcessS3 starts gofakes3 behind httptest with one bucket and returns
// the FileIO properties that reach it. It is the in-process stand-in for an
// object store, so the S3 code path runs in plain `go test`; the real
// object-store tier runs from .ci/run.
func InProcessS3(t testing.TB, bucket string) (*httptest.Server, map[string]string) {
	t.Helper()
	noInstanceMetadata.Do(func() {
		if err := os.Setenv("AWS_EC2_METADATA_DISABLED", "true"); err != nil {
			t.Fatal(err)
		}
	})
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

// S3Lake is a warehouse in the in-process S3 store: tests write its tables
// with iceberg-go's hadoop catalog, which writes to an object store when
// told that its commits are not atomic (one writer here), and the sidecar
// serves the tables they name as a static catalog, reading metadata and
// files through the same store.
type S3Lake struct {
	S3    *httptest.Server
	Props map[string]string
	Cat   *hadoop.Catalog
}

// NewS3Lake starts an in-process S3 store with the bucket lake and opens the
// hadoop catalog on the warehouse (such as s3://lake/warehouse) in it.
func NewS3Lake(t testing.TB, warehouse string) S3Lake {
	t.Helper()
	srv, props := InProcessS3(t, "lake")
	all := maps.Clone(props)
	all["allow-unsafe-commits"] = "true"
	cat, err := hadoop.NewCatalog("lake", warehouse, all)
	if err != nil {
		t.Fatalf("open the hadoop catalog on %s: %v", warehouse, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return S3Lake{S3: srv, Props: props, Cat: cat}
}

// Config is how the sidecar reaches tbl: a static catalog of its current
// metadata, read with the store's properties.
func (l S3Lake) Config(tbl *table.Table) sidecatalog.Config {
	return sidecatalog.Config{Type: "static", Name: "lake", Props: l.Props,
		Tables: map[string]string{strings.Join(tbl.Identifier(), "."): tbl.MetadataLocation()}}
}

// StallingProxy stands between the sidecar and an S3 server: once Armed,
// it answers each request for a data file with the store's status and
// headers and then sends nothing more, holding the connection open, as an
// object store that stopped answering mid-file does.
type StallingProxy struct {
	*httptest.Server
	Armed atomic.Bool
}

// NewStallingLake writes a table of 30,000 rows in 3 data files (1%
// deleted), lake.stall, to an in-process S3, and returns it, a stalling
// proxy in front of the store, and a catalog configuration that reads the
// store through the proxy.
func NewStallingLake(t testing.TB) (*table.Table, *StallingProxy, sidecatalog.Config) {
	t.Helper()
	lake := NewS3Lake(t, "s3://lake/warehouse")
	tbl, err := tablegen.Bench(context.Background(), catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "stall"}, 30_000, 3, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(lake.S3.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &StallingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.Armed.Load() && strings.HasSuffix(resp.Request.URL.Path, ".parquet") {
			resp.Body = stalledBody{ReadCloser: resp.Body, ctx: resp.Request.Context()}
		}
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(func() {
		p.CloseClientConnections()
		p.Close()
	})
	cfg := lake.Config(tbl)
	cfg.Props = maps.Clone(lake.Props)
	cfg.Props["s3.endpoint"] = p.URL
	return tbl, p, cfg
}

// stalledBody sends nothing until its request is cancelled.
type stalledBody struct {
	io.ReadCloser
	ctx context.Context
}

func (b stalledBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}
