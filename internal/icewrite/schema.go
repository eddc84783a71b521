package icewrite

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ArrowSchema is the Arrow schema (with field ids) that data batches for tbl
// are built in.
func ArrowSchema(tbl *table.Table) (*arrow.Schema, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("convert schema of %s to arrow: %w", identString(tbl.Identifier()), err)
	}
	return sc, nil
}

// DeleteKeySchema is the Arrow schema (with field ids) of an equality delete
// file keyed on fieldIDs of tbl's current schema.
func DeleteKeySchema(tbl *table.Table, fieldIDs ...int) (*arrow.Schema, error) {
	names := make([]string, 0, len(fieldIDs))
	for _, id := range fieldIDs {
		name, ok := tbl.Schema().FindColumnName(id)
		if !ok {
			return nil, fmt.Errorf("%w: field id %d not in schema of %s", ErrInvalidArgument, id, identString(tbl.Identifier()))
		}
		names = append(names, name)
	}
	sel, err := tbl.Schema().Select(true, names...)
	if err != nil {
		return nil, fmt.Errorf("project schema of %s to %v: %w", identString(tbl.Identifier()), names, err)
	}
	sc, err := table.SchemaToArrowSchema(sel, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("convert delete key schema of %s: %w", identString(tbl.Identifier()), err)
	}
	return sc, nil
}

// PartitionLogicalTypes is the Avro logical type of each partition field of
// spec whose result type needs one, as iceberg.NewDataFileBuilder takes them.
func PartitionLogicalTypes(sc *iceberg.Schema, spec iceberg.PartitionSpec) map[int]string {
	out := map[int]string{}
	for _, f := range spec.Fields() {
		src, ok := sc.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		switch f.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			out[f.FieldID] = "date"
		case iceberg.TimeType:
			out[f.FieldID] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			out[f.FieldID] = "timestamp-micros"
		case iceberg.DecimalType:
			out[f.FieldID] = "decimal"
		case iceberg.UUIDType:
			out[f.FieldID] = "uuid"
		}
	}
	return out
}
