package main

// iceberg-go registers its catalogs and FileIO schemes when their packages
// are imported, and database/sql drivers register themselves the same way;
// the sidecar's own packages register nothing. The sql catalog speaks
// PostgreSQL through pgx and SQLite through the pure-Go modernc driver (no
// cgo, so the binary stays static).
import (
	_ "github.com/apache/iceberg-go/catalog/glue"
	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/hive"
	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)
