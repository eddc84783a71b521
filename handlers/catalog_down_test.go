package handlers_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/splits"

	_ "github.com/apache/iceberg-go/catalog/rest"
)

// TestCatalogDown: a catalog that does not answer is not fatal. Planning and
// /readyz answer 503 with Retry-After, /healthz stays 200, and once the
// catalog answers, planning reaches it.
//
// The "catalog is back" half uses a stub that answers only the REST config
// call and 404s the rest: enough to show the sidecar reconnects; the real
// REST catalog tier is in the integration tests.
func TestCatalogDown(t *testing.T) {
	addr := freeLoopbackAddr(t) // nothing listens there now
	srv := newServer(t, splits.CatalogConfig{Type: "rest", URI: "http://" + addr}, nil)

	for _, path := range []string{"/splits?table=db.t", "/readyz"} {
		resp, body := srv.get(t, path)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s with the catalog down: %d (Retry-After %q) %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if code := errorCode(t, body); code != "unavailable" {
			t.Fatalf("%s: code %q", path, code)
		}
	}
	if resp, _ := srv.get(t, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with the catalog down: %d", resp.StatusCode)
	}

	// The catalog comes back on the same address.
	back, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	stub := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"defaults":{},"overrides":{}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"Table does not exist: db.t","type":"NoSuchTableException","code":404}}`))
	}))
	stub.Listener = back
	stub.Start()
	defer stub.Close()

	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, body := srv.get(t, "/splits?table=db.t")
		if resp.StatusCode == http.StatusNotFound && errorCode(t, body) == "table_not_found" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sidecar did not reconnect: %d %s", resp.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
