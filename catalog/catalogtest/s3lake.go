package catalogtest

import (
	"maps"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/druidiceberg/sidecar/catalog"

	// The S3 FileIO, registered on import as in the sidecar's binary.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
)

// InProcessS3 starts an in-process S3 store (gofakes3 behind httptest)
// with one bucket, stopped when the test ends, and returns it with the
// FileIO properties that reach it: the stand-in for an object store, so
// that the S3 code path runs in plain `go test`. The keys and region are
// explicit; the caller keeps the AWS SDK from probing the instance
// metadata address (AWS_EC2_METADATA_DISABLED=true).
func InProcessS3(t testing.TB, bucket string) (*httptest.Server, map[string]string) {
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

// S3Lake is a warehouse in an in-process S3 store with the bucket lake:
// tests write its tables with iceberg-go's hadoop catalog, which writes to
// an object store when told that its commits are not atomic (one writer
// here), and the sidecar serves the tables they name as a static catalog
// (Config), reading metadata and files through the same store.
type S3Lake struct {
	S3    *httptest.Server
	Props map[string]string
	Cat   *hadoop.Catalog
}

// NewS3Lake starts an in-process S3 store with the bucket lake and opens
// the hadoop catalog on the warehouse (such as s3://lake/warehouse) in it,
// both closed when the test ends.
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

// Config is how the sidecar reaches tbl: a static catalog named lake of
// its current metadata, read with the store's properties.
func (l S3Lake) Config(tbl *table.Table) catalog.Config {
	return catalog.Config{Type: "static", Name: "lake", Props: l.Props,
		Tables: map[string]string{strings.Join(tbl.Identifier(), "."): tbl.MetadataLocation()}}
}
