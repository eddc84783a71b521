// Package catalogtest gives tests an Iceberg catalog of their own: iceberg-go's
// filesystem (hadoop) catalog over a local folder, the catalog the sidecar's
// "local" type opens, and the sidecar's own catalog over it, closed when the
// test ends. It sits beside the package it serves, as net/http/httptest
// does; only tests import it, and the binary never links it
// (cmd/sidecar's TestBinaryLinksNoTestOnlyPackage).
package catalogtest

import (
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"

	"github.com/druidiceberg/sidecar/splits/catalog"
)

// Local opens the filesystem catalog whose warehouse is the folder dir
// (iceberg-go creates it with the first namespace) and closes it when the
// test ends.
func Local(t testing.TB, dir string) *hadoop.Catalog {
	t.Helper()
	cat, err := hadoop.NewCatalog("test", dir, nil)
	if err != nil {
		t.Fatalf("open the local catalog in %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}

// Open opens the sidecar's catalog of cfg, closed when the test ends.
func Open(t testing.TB, cfg catalog.Config, opts ...catalog.Option) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.New(cfg, opts...)
	if err != nil {
		t.Fatalf("open catalog %s: %v", cfg.Type, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}
