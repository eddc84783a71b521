package main

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The tables this package's tests write hold Snappy-compressed Parquet
// files rather than iceberg-go's default zstd: what the tests check (plans,
// streams, limits, sync against the model of Druid) does not depend on the
// codec, the reader's own tests hold every codec, and under -race zstd's
// encoder state, allocated again for most pages, is most of the CPU of
// writing a table (catalogtest.SnappyWrites, for the builders that create
// their table themselves).

// snappy are the table properties of a History table written that way.
var snappy = iceberg.Properties{table.ParquetCompressionKey: "snappy"}
