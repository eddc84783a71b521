package handlers_test

import (
	"net"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/druidiceberg/sidecar/handlers"
)

// newDemoServer serves the demo tables (demo.orders on the v2 path,
// demo.customers on the v1 path) from the package's shared warehouse
// (sharedDemo): the sidecar only reads them, and a test that changes them
// writes its own (demoWarehouse).
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
	return newServerListening(t, sidecatalog.Config{Type: "local", Name: "sidecar", Warehouse: sharedDemo(t)}, nil, cacheSize, listen, opts...)
}
