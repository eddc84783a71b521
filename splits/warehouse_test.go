package splits_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// The tests of package splits_test hold a plan to the rows its splits read,
// through the planner and the reader wired as cmd/sidecar wires one
// catalog's (servetest.Replica); the HTTP routes in between are handlers'
// tests.

// localWarehouse is an iceberg-go filesystem catalog in a temporary folder,
// for a test that writes tables of its own.
func localWarehouse(t *testing.T) (*hadoop.Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	return catalogtest.Local(t, dir), dir
}

// localReplica is a replica over the local warehouse dir.
func localReplica(t testing.TB, dir string, opts ...splits.PlannerOption) *servetest.Replica {
	t.Helper()
	return servetest.New(t, catalogtest.Open(t, catalog.Config{Type: "local", Warehouse: dir}), nil, opts...)
}
