package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/druidiceberg/sidecar/internal/testnet"

	_ "github.com/apache/iceberg-go/catalog/rest"
)

// TestCatalogDown: a catalog that does not answer is not fatal. Planning and
// /readyz answer 503 unavailable with Retry-After, naming the catalog, and
// /healthz stays 200: the routes' side of the catalog's ErrUnavailable,
// which the catalog package's TestCatalogDown holds. That the sidecar then
// recovers without a restart, once the catalog is up and again after it
// went down, is shown against a real REST catalog in the integration tier
// (TestRealCatalogDownAndBack).
func TestCatalogDown(t *testing.T) {
	addr := testnet.FreeAddr(t) // nothing listens there
	srv := newServer(t, sidecatalog.Config{Type: "rest", Name: "lake", URI: "http://" + addr}, nil)

	for _, path := range []string{"/splits?table=db.t", "/readyz"} {
		resp, body := srv.get(t, path)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s with the catalog down: %d (Retry-After %q) %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if code := errorCode(t, body); code != "unavailable" || !strings.Contains(string(body), `rest catalog \"lake\"`) {
			t.Fatalf("%s: code %q in %s, want unavailable naming the catalog", path, code, body)
		}
	}
	if resp, _ := srv.get(t, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with the catalog down: %d", resp.StatusCode)
	}
}
