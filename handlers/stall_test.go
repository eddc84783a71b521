package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestStalledStoreAbortsTheStream: a row stream whose object store stalls
// before the first byte (the catalog's ErrStalled when opening the split)
// is answered 503 with Retry-After, which Druid retries. That a stream
// whose store stalls once it is under way fails instead of hanging, so
// that the route aborts it, is the reader's TestStalledStoreAbortsTheStream.
func TestStalledStoreAbortsTheStream(t *testing.T) {
	t.Parallel()
	_, proxy, cfg := sidecartest.NewStallingLake(t)

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
	proxy.Armed.Store(true)
	resp, errBody := ts.get(t, strings.TrimPrefix(p.Splits[0].URI, ts.URL))
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, errBody) != "unavailable" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a stream whose store stalls before the first byte: %d %s", resp.StatusCode, errBody)
	}
}
