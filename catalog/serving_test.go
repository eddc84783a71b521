package catalog_test

import (
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// served is a catalog as the sidecar serves it (cmd/sidecar wires the
// same): the catalog, a planner over it and a reader (servetest.Replica),
// with no HTTP between them. The tests here call what the routes call: Plan
// for /splits, Source and the FileIO for /files, Source and Reader.OpenAll
// for the rows.
type served struct {
	*servetest.Replica
	Cat *catalog.Catalog
}

// newServed opens the catalog of cfg (closed when the test ends) and wires
// a planner and a reader over it.
func newServed(t testing.TB, cfg catalog.Config, opts ...catalog.Option) served {
	t.Helper()
	cat := catalogtest.Open(t, cfg, opts...)
	return served{Replica: servetest.New(t, cat, nil), Cat: cat}
}
