//go:build integration

package handlers_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// Iceberg's own REST catalog server, planning scans on the client and on
// the server, among the catalogs of TestEveryCatalog's integration tier.
func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"rest_iceberg", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return sidecartest.IcebergREST(t)
		}},
		catalogUnderTest{"rest_iceberg_server_planning", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return sidecartest.IcebergREST(t, icebergrest.WithPlanning(icebergrest.SyncPlanning), icebergrest.WithTasksPerPlanTask(1))
		}},
	)
}
