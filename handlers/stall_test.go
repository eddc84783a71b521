package handlers_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/token"
)

// stallingProxy stands between the sidecar and an S3 server: once armed,
// it answers each request for a data file with the store's status and
// headers and then sends nothing more, holding the connection open, as an
// object store that stopped answering mid-file does.
type stallingProxy struct {
	*httptest.Server
	armed atomic.Bool
}

// newStallingLake writes a table of 30,000 rows in 3 data files (1%
// deleted) to an in-process S3, and returns it, a stalling proxy in front
// of the store, and a catalog configuration that reads the store through
// the proxy.
func newStallingLake(t *testing.T) (*table.Table, *stallingProxy, sidecatalog.Config) {
	t.Helper()
	lake := newS3Lake(t, "s3://lake/warehouse")
	tbl, err := tablegen.Bench(context.Background(), catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "stall"}, 30_000, 3, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newStallingProxy(t, lake.S3.URL)
	cfg := lake.config(tbl)
	cfg.Props = maps.Clone(lake.Props)
	cfg.Props["s3.endpoint"] = proxy.URL
	return tbl, proxy, cfg
}

func newStallingProxy(t *testing.T, target string) *stallingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &stallingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.armed.Load() && strings.HasSuffix(resp.Request.URL.Path, ".parquet") {
			resp.Body = stalledBody{ReadCloser: resp.Body, ctx: resp.Request.Context()}
		}
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(func() {
		p.CloseClientConnections()
		p.Close()
	})
	return p
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

// TestStalledStoreAbortsTheStream: a row stream whose object store stalls
// before the first byte (the catalog's ErrStalled when opening the split)
// is answered 503 with Retry-After, which Druid retries. That a stream
// whose store stalls once it is under way fails instead of hanging, so
// that the route aborts it, is the reader's TestStalledStoreAbortsTheStream.
func TestStalledStoreAbortsTheStream(t *testing.T) {
	t.Parallel()
	_, proxy, cfg := newStallingLake(t)

	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sc := catalogtest.Open(t, cfg, sidecatalog.WithStallTimeout(200*time.Millisecond))
	ts := serveCatalog(t, sc, signer)
	p := ts.plan(t, q("table", "lake.stall"))
	if len(p.Splits) != 1 {
		t.Fatalf("%d splits", len(p.Splits))
	}
	proxy.armed.Store(true)
	resp, errBody := ts.get(t, strings.TrimPrefix(p.Splits[0].URI, ts.URL))
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, errBody) != "unavailable" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a stream whose store stalls before the first byte: %d %s", resp.StatusCode, errBody)
	}
}
