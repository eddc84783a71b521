//go:build sql

package main

// The sql catalog speaks PostgreSQL through pgx and SQLite through the
// pure-Go modernc driver (no cgo, so the binary stays static).
import (
	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)
