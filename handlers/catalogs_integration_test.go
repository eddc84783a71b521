//go:build integration

package handlers_test

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/apache/iceberg-go/catalog"

	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"rest_seaweedfs", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return seaweedREST(t, startSeaweed(t))
		}},
		catalogUnderTest{"sql_sqlite_local_files", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			return sqliteCatalog(t, t.TempDir(), map[string]string{})
		}},
		catalogUnderTest{"sql_sqlite_s3", func(t *testing.T) (catalog.Catalog, sidecatalog.Config) {
			_, props := inProcessS3(t, "lake")
			return sqliteCatalog(t, "s3://lake/warehouse", props)
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

// sqliteCatalog opens iceberg-go's SQL catalog on a fresh SQLite database
// with the given warehouse and FileIO properties, and says how the sidecar
// reaches it.
func sqliteCatalog(t *testing.T, warehouse string, props map[string]string) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	return sqlCatalog(t, "file:"+filepath.Join(t.TempDir(), "catalog.db"), warehouse, props)
}

// sqlCatalog opens iceberg-go's SQL catalog on the database at uri (SQLite
// or PostgreSQL), and says how the sidecar reaches it (it infers driver and
// dialect from the URI).
func sqlCatalog(t *testing.T, uri, warehouse string, props map[string]string) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	all := maps.Clone(props)
	all["type"], all["uri"], all["warehouse"] = "sql", uri, warehouse
	all["sql.driver"], all["sql.dialect"] = "sqlite", "sqlite"
	if strings.HasPrefix(uri, "postgres://") {
		all["sql.driver"], all["sql.dialect"] = "pgx", "postgres"
	}
	cat, err := catalog.Load(context.Background(), "test", all)
	if err != nil {
		t.Fatalf("open the SQL catalog: %v", err)
	}
	// The sidecar names the catalog otherwise than the writers (its
	// IcebergName): the SQL catalog keys its rows by the writers' name.
	return cat, sidecatalog.Config{Type: "sql", Name: "lake", IcebergName: "test", URI: uri, Warehouse: warehouse, Props: props}
}
