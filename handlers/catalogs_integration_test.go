//go:build integration

package handlers_test

import (
	"context"
	"maps"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/splits/catalog"

	"github.com/apache/iceberg-go/catalog"

	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/jackc/pgx/v5/stdlib"
)

func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"rest_seaweedfs", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return seaweedREST(t, startSeaweed(t))
		}},
		catalogUnderTest{"sql_postgres_seaweedfs_s3", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			w := startSeaweed(t)
			pg := startPostgres(t)
			return sqlCatalog(t, pg.uri(pg.Password), "s3://"+w.PlainBucket+"/warehouse", w.s3Props())
		}},
	)
}

// seaweedREST opens SeaweedFS's REST catalog with iceberg-go, and says how the
// sidecar reaches it.
func seaweedREST(t *testing.T, w *seaweed) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	cfg := sidecatalog.Config{Type: "rest", Name: "seaweed", URI: w.RESTURL, Warehouse: "s3://" + w.Bucket, Props: w.props()}
	all := maps.Clone(cfg.Props)
	all["type"], all["uri"], all["warehouse"] = "rest", cfg.URI, cfg.Warehouse
	cat, err := catalog.Load(context.Background(), cfg.Name, all)
	if err != nil {
		t.Fatalf("open SeaweedFS's REST catalog: %v", err)
	}
	return cat, cfg
}
