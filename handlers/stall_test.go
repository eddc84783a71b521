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

// TestStalledStoreAbortsTheStream: a row stream whose object store stops
// sending in the middle of a data file aborts once the store has sent
// nothing for --storage-stall-timeout, so that Druid (which reads without a
// timeout, HttpEntity) retries it, instead of hanging its task. The split
// packs three data files: the store stalls once the stream is under way, so
// the next file's reads stall after the first bytes of the answer went out;
// before the first byte, the same stall is a 503. With the store
// answering, the stream reads whole.
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
	whole, body := ts.get(t, strings.TrimPrefix(p.Splits[0].URI, ts.URL))
	if whole.StatusCode != http.StatusOK || len(body) < 64<<10 {
		t.Fatalf("the stream with the store answering: %d, %d bytes", whole.StatusCode, len(body))
	}

	// A client that would wait far longer than the stall timeout: it only
	// keeps a broken test from hanging.
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(p.Splits[0].URI)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 4096)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	proxy.armed.Store(true)
	rest, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d more bytes with the store stalled", len(rest))
	}
	if strings.Contains(err.Error(), "Client.Timeout") {
		t.Fatalf("the stream hung with the store stalled until the client gave up: %v", err)
	}
	if got := 4096 + len(rest); got >= len(body) {
		t.Fatalf("the stalled stream sent %d bytes, the whole stream is %d", got, len(body))
	}

	// Stalled from the start: an error before the first byte, which Druid
	// retries too.
	resp, errBody := ts.get(t, strings.TrimPrefix(p.Splits[0].URI, ts.URL))
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, errBody) != "unavailable" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a stream whose store stalls before the first byte: %d %s", resp.StatusCode, errBody)
	}
}
