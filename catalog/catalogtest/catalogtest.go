// Package catalogtest gives tests an Iceberg catalog of their own: iceberg-go's
// filesystem (hadoop) catalog over a local folder, the catalog the sidecar's
// "local" type opens, and the sidecar's own catalog over it, or a warehouse in
// an in-process S3 store (NewS3Lake), closed when the test ends. It sits beside the package it serves, as net/http/httptest
// does; only tests import it, and the binary never links it
// (cmd/sidecar's TestBinaryLinksNoTestOnlyPackage).
package catalogtest

import (
	"context"
	"maps"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/catalog"
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

// Open opens the sidecar's catalog of cfg, closed when the test ends; its
// metrics are exported nowhere (OpenRegistered).
func Open(t testing.TB, cfg catalog.Config, opts ...catalog.Option) *catalog.Catalog {
	t.Helper()
	return OpenRegistered(t, cfg, nil, opts...)
}

// OpenRegistered is Open with the catalog's metrics on reg.
func OpenRegistered(t testing.TB, cfg catalog.Config, reg prometheus.Registerer, opts ...catalog.Option) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.New(cfg, reg, opts...)
	if err != nil {
		t.Fatalf("open catalog %s: %v", cfg.Type, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}

// SnappyWrites is cat whose new tables write Snappy-compressed Parquet files
// rather than iceberg-go's default zstd. Under -race, zstd's encoder state is
// allocated again for most pages (the race detector makes sync.Pool drop a
// share of what is put back), which is most of the CPU of writing small
// tables. For tests whose answers do not depend on the codec; the reader's
// own tests hold every codec. Files a test writes with a Parquet writer of
// its own keep that writer's codec.
func SnappyWrites(cat icecatalog.Catalog) icecatalog.Catalog {
	return WriteProperties(cat, iceberg.Properties{table.ParquetCompressionKey: "snappy"})
}

// WriteProperties is cat whose new tables carry props among their
// properties (over those the creator sets), such as the Parquet writer's
// page size (table.ParquetPageSizeBytesKey) for a test that needs more
// pages than rows to fill them at the default size.
func WriteProperties(cat icecatalog.Catalog, props iceberg.Properties) icecatalog.Catalog {
	return writeProperties{cat, props}
}

type writeProperties struct {
	icecatalog.Catalog
	props iceberg.Properties
}

func (c writeProperties) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...icecatalog.CreateTableOpt) (*table.Table, error) {
	var cfg icecatalog.CreateTableCfg
	for _, o := range opts {
		o(&cfg)
	}
	props := maps.Clone(cfg.Properties)
	if props == nil {
		props = iceberg.Properties{}
	}
	maps.Copy(props, c.props)
	return c.Catalog.CreateTable(ctx, ident, sc, append(opts, icecatalog.WithProperties(props))...)
}
