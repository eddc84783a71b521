package sidecartest

import (
	"context"
	"errors"
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

	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// noInstanceMetadata keeps the AWS SDK from probing the instance metadata
// address: set once for the process, not with t.Setenv, so that the tests
// over the in-process S3 can run in parallel.
var noInstanceMetadata sync.Once

// StallingProxy stands between the sidecar and an S3 server: once Armed,
// it answers each request for a data file with the store's status and
// headers and then sends nothing more, holding the connection open, as an
// object store that stopped answering mid-file does, until the request is
// cancelled or the proxy shuts down.
type StallingProxy struct {
	*httptest.Server
	Armed atomic.Bool
	// closing is closed when the test ends, before the server closes: an
	// abandoned open's request (iceberg-go's FileIO opens under a context
	// nobody cancels) may be retried on a new connection after the
	// client connections are cut, and httptest.Server.Close waits for
	// every active request.
	closing chan struct{}
}

// NewStallingLake writes a table of 30,000 rows in 3 data files (1%
// deleted), lake.stall, to an in-process S3, and returns it, a stalling
// proxy in front of the store, and a catalog configuration that reads the
// store through the proxy.
func NewStallingLake(t testing.TB) (*table.Table, *StallingProxy, sidecatalog.Config) {
	t.Helper()
	noInstanceMetadata.Do(func() {
		if err := os.Setenv("AWS_EC2_METADATA_DISABLED", "true"); err != nil {
			t.Fatal(err)
		}
	})
	lake := catalogtest.NewS3Lake(t, "s3://lake/warehouse")
	tbl, err := tablegen.Bench(context.Background(), catalogtest.SnappyWrites(lake.Cat), table.Identifier{"lake", "stall"}, 30_000, 3, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(lake.S3.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &StallingProxy{closing: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.Armed.Load() && strings.HasSuffix(resp.Request.URL.Path, ".parquet") {
			resp.Body = stalledBody{ReadCloser: resp.Body, ctx: resp.Request.Context(), closing: p.closing}
		}
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(func() {
		close(p.closing)
		p.CloseClientConnections()
		p.Close()
	})
	cfg := lake.Config(tbl)
	cfg.Props = maps.Clone(lake.Props)
	cfg.Props["s3.endpoint"] = p.URL
	return tbl, p, cfg
}

// stalledBody sends nothing until its request is cancelled or its proxy
// shuts down.
type stalledBody struct {
	io.ReadCloser
	ctx     context.Context
	closing <-chan struct{}
}

func (b stalledBody) Read([]byte) (int, error) {
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-b.closing:
		return 0, errProxyClosing
	}
}

// errProxyClosing ends a stalled body when its proxy shuts down.
var errProxyClosing = errors.New("the stalling proxy is shutting down")
