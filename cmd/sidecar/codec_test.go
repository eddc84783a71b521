package main

import (
	"context"
	"maps"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// The tables this package's tests write hold Snappy-compressed Parquet
// files rather than iceberg-go's default zstd: what the tests check (plans,
// streams, limits, sync against the model of Druid) does not depend on the
// codec, the reader's own tests hold every codec, and under -race zstd's
// encoder state, allocated again for most pages, is most of the CPU of
// writing a table.

// snappy are the table properties of a History table written that way.
var snappy = iceberg.Properties{table.ParquetCompressionKey: "snappy"}

// snappyWrites is cat whose new tables write Snappy-compressed Parquet
// files, for the builders that create their table themselves.
func snappyWrites(cat catalog.Catalog) catalog.Catalog { return snappyCatalog{cat} }

type snappyCatalog struct{ catalog.Catalog }

func (c snappyCatalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	var cfg catalog.CreateTableCfg
	for _, o := range opts {
		o(&cfg)
	}
	props := maps.Clone(cfg.Properties)
	if props == nil {
		props = iceberg.Properties{}
	}
	maps.Copy(props, snappy)
	return c.Catalog.CreateTable(ctx, ident, sc, append(opts, catalog.WithProperties(props))...)
}
