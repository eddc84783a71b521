package druid

import (
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/token"
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
	// Cast is the castToType of an auto Dimension (Druid 29,
	// apache/druid#15417), which every segment of the column keeps.
	// Without it an auto or json column is typed segment by segment from
	// the values each DAY (segmentGranularity) bucket holds
	// (AutoTypeColumnIndexer.getLogicalType): a segment whose rows are all
	// null is persisted as STRING (AutoTypeColumnMerger), one of only empty
	// lists as ARRAY<LONG>, and the Broker merges the segments' types with
	// ColumnType.leastRestrictiveType, so a boolean column would read as
	// VARCHAR and a list of longs as ARRAY<VARCHAR>. castToType takes
	// primitive and primitive-array types only (the AutoTypeColumnIndexer
	// constructor drops any other), and on Druid 33 json and auto
	// dimensions of every formatVersion share that indexer: nested data
	// (structs, maps, variants, lists of them) cannot be pinned by any
	// spec (handlers' TestRealDruidNestedTypes tries each on a real
	// Druid); its all-null segments are STRING, and the Broker's merge
	// still gives COMPLEX<json>, which wins over every other type.
	Cast string
	// boolean columns are read as text and turned into Druid's 1/0.
	boolean bool
}

// ColumnOf maps a served column: its Iceberg type and the encoding it is
// served in. Values follow the sidecar's value contract (the same values
// Druid's Parquet reader gives), so the mapping holds for raw Parquet
// files too, for every type the raw-file path serves.
func ColumnOf(f iceberg.NestedField, enc token.Encoding) Column {
	c := Column{Name: f.Name}
	switch f.Type.(type) {
	case iceberg.BooleanType:
		// Druid stores booleans as LONG 1/0 (druid.expressions.
		// useStrictBooleans, the default since Druid 28): schema discovery
		// does so (ExprEval.bestEffortOf), and the statement does so from
		// the text.
		c.Druid, c.Extern, c.Dimension, c.Cast, c.boolean = TypeLong, "string", "auto", TypeLong, true
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
	case *iceberg.ListType:
		if elem := arrayElement(f.Type.(*iceberg.ListType).Element, enc); elem != "" {
			// A list of scalars is an ARRAY column under both engines
			// (Druid 28 and later): pinned (Cast), so that no segment types
			// it otherwise.
			c.Druid = "ARRAY<" + elem + ">"
			c.Extern, c.Dimension, c.Cast = c.Druid, "auto", c.Druid
			return c
		}
		c.Druid, c.Extern, c.Dimension = TypeComplex, "COMPLEX<json>", "json"
	default:
		// Structs, maps, variants and lists of them: nested JSON.
		c.Druid, c.Extern, c.Dimension = TypeComplex, "COMPLEX<json>", "json"
	}
	return c
}

// arrayElement is the Druid element type of a list of elem, or "" when
// the list is nested data (a list of structs, lists, maps or variants).
// Druid's ARRAY columns hold LONG, DOUBLE and STRING elements only: an
// auto column's castToType FLOAT[] is DOUBLE[] (AutoTypeColumnSchema), and
// booleans are LONG 1/0 as at the top level.
func arrayElement(elem iceberg.Type, enc token.Encoding) string {
	switch elem.(type) {
	case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType, iceberg.VariantType:
		return ""
	}
	switch t := ColumnOf(iceberg.NestedField{Name: "element", Type: elem}, enc).Druid; t {
	case TypeFloat:
		return TypeDouble
	case TypeLong, TypeDouble, TypeString:
		return t
	}
	return ""
}

// IsArray says whether a Druid column type is an ARRAY.
func IsArray(typ string) bool { return strings.HasPrefix(typ, "ARRAY<") }

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
func Types(fields []iceberg.NestedField, enc token.Encoding) map[string]string {
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		out[f.Name] = ColumnOf(f, enc).Druid
	}
	return out
}
