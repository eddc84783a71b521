package druid_test

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
	"github.com/druidiceberg/sidecar/token"
)

// TestStatementsParseInDruid: Druid's own SQL parser (its web console's,
// druid-query-toolkit) parses every shape of statement the generator
// writes: INSERT and REPLACE, bounded and ALL, every granularity, every
// column type in both encodings, an empty source, hostile names.
func TestStatementsParseInDruid(t *testing.T) {
	types := []iceberg.Type{
		iceberg.PrimitiveTypes.Bool, iceberg.PrimitiveTypes.Int32, iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.Float32,
		iceberg.PrimitiveTypes.Float64, iceberg.DecimalTypeOf(9, 2), iceberg.PrimitiveTypes.Date, iceberg.PrimitiveTypes.Time,
		iceberg.PrimitiveTypes.Timestamp, iceberg.PrimitiveTypes.TimestampTz, iceberg.PrimitiveTypes.TimestampNs,
		iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.UUID, iceberg.FixedTypeOf(4), iceberg.PrimitiveTypes.Binary,
		&iceberg.ListType{ElementID: 100, Element: iceberg.PrimitiveTypes.Int64},
	}
	var fields []iceberg.NestedField
	for i, typ := range types {
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: "c" + typ.String(), Type: typ})
	}
	day := druid.Interval{Start: time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC)}
	var stmts []string
	for _, tf := range []iceberg.NestedField{fields[8], fields[6], fields[2]} {
		for _, iso := range []bool{false, true} {
			src := druid.Source{
				InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{"http://sidecar:8080/splits/t/rows"}},
				InputFormat: druid.InputFormat{Type: "json"},
				Fields:      fields, TimeField: tf, Encoding: token.Encoding{ISOTimestamps: iso},
			}
			for _, g := range []druid.Granularity{druid.GranularityHour, druid.GranularityDay, druid.GranularityWeek,
				druid.GranularityMonth, druid.GranularityQuarter, druid.GranularityYear, druid.GranularityAll} {
				for _, st := range []druid.Statement{
					{DataSource: "ds", PartitionedBy: g},
					{Replace: true, DataSource: "ds", PartitionedBy: g},
					{Replace: true, DataSource: "ds", PartitionedBy: g, Overwrite: day},
				} {
					for _, s := range []druid.Source{src, src.EmptySource(st.Overwrite.Start)} {
						sql, err := st.SQL(s)
						if err != nil {
							continue // refused before Druid sees it
						}
						stmts = append(stmts, sql)
					}
				}
			}
		}
	}
	for _, st := range []druid.Statement{
		{Replace: true, DataSource: `ds"; DELETE FROM x; '`, PartitionedBy: druid.GranularityWeek},
		{DataSource: `ds"; DELETE FROM x; '`, PartitionedBy: druid.GranularityAll},
	} {
		sql, err := st.SQL(hostileSource())
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, sql)
	}
	if len(stmts) < 100 {
		t.Fatalf("only %d statements generated", len(stmts))
	}
	sqlcheck.Require(t, stmts...)
}
