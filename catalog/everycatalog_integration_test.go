//go:build integration

package catalog_test

import (
	"context"
	"io"
	"maps"
	"path/filepath"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "modernc.org/sqlite"
)

func init() {
	integrationCatalogs = append(integrationCatalogs,
		catalogUnderTest{"sql_sqlite_local_files", func(t *testing.T) (icecatalog.Catalog, catalog.Config) {
			return sqliteCatalog(t, t.TempDir(), map[string]string{})
		}},
		catalogUnderTest{"sql_sqlite_s3", func(t *testing.T) (icecatalog.Catalog, catalog.Config) {
			// The in-process S3 is reached with explicit keys and region;
			// the AWS SDK must not probe the instance metadata address.
			t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			_, props := catalogtest.InProcessS3(t, "lake")
			return sqliteCatalog(t, "s3://lake/warehouse", props)
		}},
	)
}

// sqliteCatalog opens iceberg-go's SQL catalog on a fresh SQLite database
// with the given warehouse and FileIO properties, and says how the sidecar
// reaches it: it names the catalog otherwise than the writers (its
// IcebergName), since the SQL catalog keys its rows by the writers' name,
// and infers driver and dialect from the URI.
func sqliteCatalog(t *testing.T, warehouse string, props map[string]string) (icecatalog.Catalog, catalog.Config) {
	t.Helper()
	uri := "file:" + filepath.Join(t.TempDir(), "catalog.db")
	all := maps.Clone(props)
	all["type"], all["uri"], all["warehouse"] = "sql", uri, warehouse
	all["sql.driver"], all["sql.dialect"] = "sqlite", "sqlite"
	cat, err := icecatalog.Load(context.Background(), "test", all)
	if err != nil {
		t.Fatalf("open the SQL catalog: %v", err)
	}
	if c, ok := cat.(io.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat, catalog.Config{Type: "sql", Name: "lake", IcebergName: "test", URI: uri, Warehouse: warehouse, Props: props}
}
