//go:build integration

package sidecartest

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// SQLCatalog opens iceberg-go's SQL catalog on the database at uri (SQLite
// or PostgreSQL), and says how the sidecar reaches it (it infers driver and
// dialect from the URI). It is the integration tier's (-tags integration),
// which links the SQL drivers.
func SQLCatalog(t testing.TB, uri, warehouse string, props map[string]string) (catalog.Catalog, sidecatalog.Config) {
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
