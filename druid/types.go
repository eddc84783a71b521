package druid

import (
	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/splits/split"
)

// The Druid column types an ingested column ends up with.
const (
	TypeLong    = "LONG"
	TypeFloat   = "FLOAT"
	TypeDouble  = "DOUBLE"
	TypeString  = "STRING"
	TypeComplex = "COMPLEX<json>"
)

// Column is how one served column reaches Druid: the one type mapping
// that every generator (index_parallel tasks, MSQ statements, /changes,
// sync) uses, so a column gets the same Druid type on both paths (raw
// Parquet and the row stream) and under both engines (MSQ and native).
type Column struct {
	Name string
	// Druid is the column type the datasource ends up with.
	Druid string
	// Extern is the column's type in an MSQ EXTERN signature. MSQ converts
	// each value read to it (RowBasedColumnSelectorFactory →
	// Rows.objectToNumber and Rows.objectToStrings) and turns a value it
	// cannot convert into NULL without a word, so the type must take what
	// is served: a boolean, served true/false, is read as a string, and a
	// timestamp served as an ISO string is a string too.
	Extern string
	// Dimension is the column's entry in a native task's dimensionsSpec:
	// an explicit type, so that a decimal (served as a string on the row
	// path, a BigDecimal from Druid's Parquet reader) is a DOUBLE on both
	// paths, where schema discovery would make it a STRING from JSON and a
	// truncated LONG from Parquet (ExprEval.bestEffortOf).
	Dimension string
	// boolean columns are read as text and turned into Druid's 1/0.
	boolean bool
}

// ColumnOf maps a served column: its Iceberg type and the encoding it is
// served in. Values follow the sidecar's value contract (the same values
// Druid's Parquet reader gives), so the mapping holds for raw Parquet
// files too, for every type the raw-file path serves.
func ColumnOf(f iceberg.NestedField, enc split.Encoding) Column {
	c := Column{Name: f.Name}
	switch f.Type.(type) {
	case iceberg.BooleanType:
		// Druid stores booleans as LONG 1/0 (druid.expressions.
		// useStrictBooleans, the default since Druid 28): schema discovery
		// does so (ExprEval.bestEffortOf), and the statement does so from
		// the text.
		c.Druid, c.Extern, c.Dimension, c.boolean = TypeLong, "string", "auto", true
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType:
		c.Druid, c.Extern, c.Dimension = TypeLong, "long", "long"
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		if enc.ISOTimestamps {
			c.Druid, c.Extern, c.Dimension = TypeString, "string", "string"
		} else {
			c.Druid, c.Extern, c.Dimension = TypeLong, "long", "long"
		}
	case iceberg.Float32Type:
		c.Druid, c.Extern, c.Dimension = TypeFloat, "float", "float"
	case iceberg.Float64Type, iceberg.DecimalType:
		c.Druid, c.Extern, c.Dimension = TypeDouble, "double", "double"
	case iceberg.StringType, iceberg.UUIDType, iceberg.BinaryType, iceberg.FixedType:
		c.Druid, c.Extern, c.Dimension = TypeString, "string", "string"
	case iceberg.GeometryType, iceberg.GeographyType:
		// WKT, or base64 WKB with geo=wkb: text either way.
		c.Druid, c.Extern, c.Dimension = TypeString, "string", "string"
	case iceberg.UnknownType:
		// Always null: the plainest column that holds nulls.
		c.Druid, c.Extern, c.Dimension = TypeString, "string", "string"
	default:
		// Structs, lists, maps and variants: nested JSON.
		c.Druid, c.Extern, c.Dimension = TypeComplex, "COMPLEX<json>", "json"
	}
	return c
}

// Select is the column's expression in a statement's SELECT list, over
// the EXTERN column of the same name, named as the column.
func (c Column) Select() string {
	id := Ident(c.Name)
	if c.boolean {
		return "CASE " + id + " WHEN 'true' THEN 1 WHEN 'false' THEN 0 END AS " + id
	}
	return id
}

// Types are the Druid column types of the served columns, by name.
func Types(fields []iceberg.NestedField, enc split.Encoding) map[string]string {
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		out[f.Name] = ColumnOf(f, enc).Druid
	}
	return out
}
