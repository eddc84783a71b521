package handlers_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/apache/iceberg-go/catalog/hadoop"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
)

// newDemoServer writes the demo tables (demo.orders on the v2 path,
// demo.customers on the v1 path) into a fresh local warehouse and serves it.
func newDemoServer(t testing.TB, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return newDemoServerWithCache(t, testDeleteCacheSize, opts...)
}

// newDemoServerWithCache is newDemoServer with a delete cache of cacheSize
// bytes; 0 serves without one.
func newDemoServerWithCache(t testing.TB, cacheSize int64, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	return newDemoServerListening(t, cacheSize, nil, opts...)
}

// newDemoServerListening is newDemoServerWithCache on a listener that
// listen wraps (nil: the test server's own).
func newDemoServerListening(t testing.TB, cacheSize int64, listen func(net.Listener) net.Listener, opts ...func(*handlers.Config)) *testServer {
	t.Helper()
	wh := filepath.Join(t.TempDir(), "warehouse")
	cat, err := hadoop.NewCatalog("sidecar", wh, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := demo.Write(context.Background(), cat); err != nil {
		t.Fatalf("write demo tables: %v", err)
	}
	return newServerListening(t, sidecatalog.Config{Type: "local", Name: "sidecar", Warehouse: wh}, nil, cacheSize, listen, opts...)
}
