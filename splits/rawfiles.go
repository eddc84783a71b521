package splits

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// The v1 path hands Druid the data files themselves, and Druid's Parquet
// reader finds a column by its name in the file. That gives the rows that
// Iceberg says the file holds only when the file's column names are the
// schema's names and the file stores every column the rows carry. Iceberg
// itself reads columns by field id, and fills in what a file lacks, so a
// table can break that without any delete file:
//
//   - a column renamed since a file was written is stored under its old
//     name (Druid: null under the new name, the values under the old one);
//     a name that once belonged to another field id is worse, the other
//     column's values under this name;
//   - Iceberg's writers (Java's and iceberg-go's) store a name that is not
//     a valid Avro name ("user-id", "1st") sanitized ("user_x2Did", "_1st");
//   - a table with a name mapping (schema.name-mapping.default) has files
//     written without field ids, which Iceberg reads through the mapping's
//     names and aliases;
//   - a column added with an initial default (v3) reads as that default in
//     files written before it, where Druid sees null;
//   - an identity partition's source column may be absent from a file
//     (Hive-style imports): Iceberg takes its value from the partition;
//   - Druid's Parquet reader reads some types other than the row stream
//     serves them (see rawTypeHazard);
//   - a data file is Avro, which the Parquet reader cannot read at all
//     (see rawFormatHazard).
//
// Auto mode serves such a plan on the row path, which reads by field id, and
// says why in a warning; mode=files is refused, as it is with delete files.
// The checks are conservative: a hazard that may not hit any file of the
// plan still picks the row path, which is always right.

// rawSchemaHazard returns why a data file read raw could show other columns
// than the emitted schema says, judged from the table metadata alone; ""
// when nothing in it does.
func rawSchemaHazard(meta table.Metadata, schema *iceberg.Schema) string {
	if meta.Properties()[table.DefaultNameMappingKey] != "" {
		return "the table has a name mapping (schema.name-mapping.default): its data files may be written " +
			"without field ids, under names the mapping resolves"
	}
	names, err := iceberg.IndexNameByID(schema)
	if err != nil {
		return fmt.Sprintf("its schema's column names cannot be indexed: %v", err)
	}
	ids := slices.Sorted(maps.Keys(names))

	sanitized, err := iceberg.SanitizeColumnNames(schema)
	if err != nil {
		return fmt.Sprintf("its column names are not valid Parquet names as Iceberg writes them (%v)", err)
	}
	stored, err := iceberg.IndexNameByID(sanitized)
	if err != nil {
		return fmt.Sprintf("its schema's column names cannot be indexed: %v", err)
	}
	for _, id := range ids {
		if stored[id] != names[id] {
			return fmt.Sprintf("Iceberg's writers store column %q under the name %q", names[id], stored[id])
		}
	}

	for _, id := range ids {
		if f, ok := schema.FindFieldByID(id); ok && f.InitialDefault != nil {
			return fmt.Sprintf("column %q has an initial default, which data files written before it was added "+
				"do not store", names[id])
		}
	}

	byName, err := iceberg.IndexByName(schema)
	if err != nil {
		return fmt.Sprintf("its schema's column names cannot be indexed: %v", err)
	}
	for _, other := range meta.Schemas() {
		if other.ID == schema.ID {
			continue
		}
		old, err := iceberg.IndexNameByID(other)
		if err != nil {
			return fmt.Sprintf("schema %d's column names cannot be indexed: %v", other.ID, err)
		}
		for _, id := range slices.Sorted(maps.Keys(old)) {
			if now, ok := names[id]; ok && now != old[id] {
				return fmt.Sprintf("column %q was named %q in schema %d", now, old[id], other.ID)
			}
			if now, ok := byName[old[id]]; ok && now != id {
				return fmt.Sprintf("the name %q belonged to another column (field id %d) in schema %d",
					old[id], id, other.ID)
			}
		}
	}
	return ""
}

// rawFormatHazard returns why an Avro data file cannot be handed to Druid
// raw; "" when there is none (an ORC file is refused when the plan's
// splits are made, whatever the path). The raw-file path
// gives every URI of a plan the one parquet inputFormat, which cannot read
// an Avro file, and Druid's own avro_ocf format reads the file otherwise
// than Iceberg does (extensions-core/avro-extensions/src/main/java/org/
// apache/druid/data/input/avro/AvroOCFReader.java reads records with the
// writer's schema through a GenericDatumReader, by name, not field id;
// AvroFlattenerMaker.transformValue keeps a timestamp as its raw long of
// micros, a decimal and a uuid as bytes, and drops the nulls of a list).
func rawFormatHazard(tasks []table.FileScanTask) string {
	for _, t := range tasks {
		if f := t.File; f.FileFormat() == iceberg.AvroFile {
			return fmt.Sprintf("data file %s is %s, which the raw files' parquet inputFormat cannot read, and Druid's "+
				"avro_ocf format reads by name with other types (timestamps as raw microseconds, decimals as bytes)",
				f.FilePath(), f.FileFormat())
		}
	}
	return ""
}

// rawHazard returns why the plan's data files, read raw, could show other
// columns than Iceberg reads from them (see above); "" when none could. mk
// gives the identity fields of a file's partition spec.
func rawHazard(meta table.Metadata, schema *iceberg.Schema, tasks []table.FileScanTask, mk *splitMaker) (string, error) {
	if len(tasks) == 0 {
		return "", nil
	}
	if why := rawFormatHazard(tasks); why != "" {
		return why, nil
	}
	if why := rawSchemaHazard(meta, schema); why != "" {
		return why, nil
	}
	for _, f := range schema.Fields() {
		if why := rawTypeHazard(f.Name, f.Type, false); why != "" {
			return why, nil
		}
	}
	for _, t := range tasks {
		fields, err := mk.identityOf(t.File)
		if err != nil {
			return "", err
		}
		for _, field := range fields {
			if _, emitted := schema.FindFieldByID(field.sourceID); !emitted || stores(t.File, field.sourceID) {
				// A partition source the schema no longer has is not
				// emitted; one the file stores reads right.
				continue
			}
			return fmt.Sprintf("data file %s may not store the source column of identity partition %q "+
				"(its column metrics do not name it), whose value Iceberg takes from the partition",
				t.File.FilePath(), field.name), nil
		}
	}
	return "", nil
}

// stores reports whether a data file's column metrics show that it stores
// the column with field id id.
func stores(f iceberg.DataFile, id int) bool {
	for _, m := range []map[int]int64{f.ValueCounts(), f.ColumnSizes(), f.NullValueCounts()} {
		if _, ok := m[id]; ok {
			return true
		}
	}
	return false
}

// rawTypeHazard returns why Druid's Parquet reader reads a column of type t
// other than the row stream serves it, "" when it reads the same. The
// reader goes by each column's legacy OriginalType
// (extensions-core/parquet-extensions/src/main/java/org/apache/druid/data/
// input/parquet/simple/ParquetGroupConverter.java, convertPrimitiveField):
//
//   - timestamp_ns has no OriginalType: its raw nanoseconds, where the row
//     stream serves milliseconds;
//   - a uuid has none either: its 16 bytes, not its canonical text;
//   - a map whose keys are not strings is a map keyed by the keys' text,
//     where the row stream serves a list of key/value objects;
//   - inside a struct, list or map, a decimal is a number where the row
//     stream serves an exact string, and binary values are bytes where it
//     serves base64;
//   - a variant is a group without an OriginalType, which convertField
//     hands on as the group itself: its metadata and value bytes (and
//     typed_value columns), not the value they encode;
//   - geometry and geography are WKB, binary without an OriginalType:
//     bytes, where the row stream serves WKT (base64 WKB with geo=wkb, but
//     a Parquet reader older than the GEOMETRY and GEOGRAPHY logical types
//     may not read such a column at all).
//
// Other types read alike: booleans, integers, decimals from Druid 29 on
// (see rawVersionWarnings), floats and doubles (but NaN and the
// infinities, which the raw files keep as Iceberg holds them and the row
// stream, in JSON, can only serve as null: the raw files are the truer),
// dates (epoch milliseconds), times (microseconds), timestamps in microseconds (epoch
// milliseconds: parquet-java's TimestampLogicalTypeAnnotation gives
// TIMESTAMP_MICROS with or without UTC adjustment), strings, and binary
// and fixed values at the top level (Druid's string conversion writes
// bytes as base64, as the row stream does).
func rawTypeHazard(name string, t iceberg.Type, nested bool) string {
	switch t := t.(type) {
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return fmt.Sprintf("column %q is %s, which Druid's Parquet reader reads as raw nanoseconds", name, t)
	case iceberg.UUIDType:
		return fmt.Sprintf("column %q is a uuid, which Druid's Parquet reader reads as 16 bytes", name)
	case iceberg.VariantType:
		return fmt.Sprintf("column %q is a variant, which Druid's Parquet reader reads as its encoded bytes, not the value they encode", name)
	case iceberg.GeometryType, iceberg.GeographyType:
		return fmt.Sprintf("column %q is %s, which Druid's Parquet reader reads as WKB bytes, not WKT", name, t)
	case iceberg.DecimalType:
		if nested {
			return fmt.Sprintf("column %q holds a %s, which Druid's Parquet reader reads as a number, not exactly", name, t)
		}
	case iceberg.BinaryType, iceberg.FixedType:
		if nested {
			return fmt.Sprintf("column %q holds %s values, which Druid's Parquet reader keeps as bytes in nested data", name, t)
		}
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			if why := rawTypeHazard(name+"."+f.Name, f.Type, true); why != "" {
				return why
			}
		}
	case *iceberg.ListType:
		return rawTypeHazard(name+".element", t.Element, true)
	case *iceberg.MapType:
		if _, ok := t.KeyType.(iceberg.StringType); !ok {
			return fmt.Sprintf("column %q is a map with %s keys, which Druid's Parquet reader keys by their text", name, t.KeyType)
		}
		return rawTypeHazard(name+".value", t.ValueType, true)
	}
	return ""
}

// rawVersionWarnings warn of the columns of a raw-file plan that Druid
// reads right only from some version on: a decimal of precision up to 18,
// which Iceberg's writers store as INT32 or INT64, reads as its unscaled
// integer before Druid 29 (apache/druid#15715; ParquetGroupConverter). The
// plan keeps the raw files, which read right on a current Druid.
func rawVersionWarnings(schema *iceberg.Schema) []string {
	var out []string
	for _, f := range schema.Fields() {
		if d, ok := f.Type.(iceberg.DecimalType); ok && d.Precision() <= 18 {
			out = append(out, fmt.Sprintf("column %q is %s: Druid before 29 reads it from the raw files unscaled "+
				"(100 times 1.00); with an older Druid use mode=rows", f.Name, d))
		}
	}
	return out
}
