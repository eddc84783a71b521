package token

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// MetaColumns is a set of the metadata columns of the Iceberg spec
// ("Reserved Field IDs") that a split's rows carry after the schema's
// columns, each only when asked for: the v3 row-lineage fields and the
// columns that say where a row is stored. A raw data file carries none of
// them, so asking for one takes the row path.
type MetaColumns uint8

// The metadata columns, in the order the rows carry them.
const (
	// MetaRowID is _row_id: the row's stored _row_id, or (when the file
	// stores none or null) the data file's first_row_id plus the row's
	// position; null when the file has no first_row_id (written before
	// the table had row lineage).
	MetaRowID MetaColumns = 1 << iota
	// MetaLastUpdated is _last_updated_sequence_number: the stored value,
	// or (when the file stores none or null) the data sequence number of
	// the file's manifest entry.
	MetaLastUpdated
	// MetaFile is _file: the data file's path as the manifest spells it.
	MetaFile
	// MetaPos is _pos: the row's position in its data file, from 0.
	MetaPos
	// MetaSpecID is _spec_id: the id of the data file's partition spec.
	MetaSpecID
	// MetaPartition is _partition: the data file's partition as an object
	// of the table's partition type (every partition field of every spec,
	// null where the file's spec has none).
	MetaPartition

	metaAll = MetaPartition<<1 - 1
)

// metaColumns are the metadata columns by bit, in order: their names and
// field ids are the spec's.
var metaColumns = [...]struct {
	bit  MetaColumns
	name string
	id   int
}{
	{MetaRowID, iceberg.RowIDColumnName, iceberg.RowIDFieldID},
	{MetaLastUpdated, iceberg.LastUpdatedSequenceNumberColumnName, iceberg.LastUpdatedSequenceNumberFieldID},
	{MetaFile, "_file", math.MaxInt32 - 1},
	{MetaPos, "_pos", math.MaxInt32 - 2},
	{MetaSpecID, "_spec_id", math.MaxInt32 - 4},
	{MetaPartition, "_partition", math.MaxInt32 - 5},
}

// MetaColumnNames are the names ParseMetaColumns takes, in the order the
// rows carry them.
func MetaColumnNames() []string {
	out := make([]string, len(metaColumns))
	for i, c := range metaColumns {
		out[i] = c.name
	}
	return out
}

// ParseMetaColumns reads metadata column names, in any order; a name
// given twice counts once. An unknown name is an fault.ErrBadRequest that lists
// the known ones.
func ParseMetaColumns(names []string) (MetaColumns, error) {
	var m MetaColumns
	for _, n := range names {
		found := false
		for _, c := range metaColumns {
			if c.name == n {
				m |= c.bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("%w: metadata column %s: want one of %s", fault.ErrBadRequest, fault.Quote(n),
				strings.Join(MetaColumnNames(), ", "))
		}
	}
	return m, nil
}

// MetaColumnOf is the metadata column of field id, or 0 when id is no
// metadata column's.
func MetaColumnOf(id int) MetaColumns {
	for _, c := range metaColumns {
		if c.id == id {
			return c.bit
		}
	}
	return 0
}

// Has reports whether m holds every column of c.
func (m MetaColumns) Has(c MetaColumns) bool { return m&c == c }

// Valid reports whether m names only metadata columns that exist.
func (m MetaColumns) Valid() bool { return m&^metaAll == 0 }

// Names are m's column names, in the order the rows carry them.
func (m MetaColumns) Names() []string {
	var out []string
	for _, c := range metaColumns {
		if m.Has(c.bit) {
			out = append(out, c.name)
		}
	}
	return out
}

// Fields are m's columns as schema fields, in the order the rows carry
// them, with the spec's field ids and types; partition is the table's
// partition type, the type of _partition.
func (m MetaColumns) Fields(partition *iceberg.StructType) []iceberg.NestedField {
	var out []iceberg.NestedField
	for _, c := range metaColumns {
		if !m.Has(c.bit) {
			continue
		}
		var t iceberg.Type
		switch c.bit {
		case MetaFile:
			t = iceberg.PrimitiveTypes.String
		case MetaSpecID:
			t = iceberg.PrimitiveTypes.Int32
		case MetaPartition:
			t = partition
			if partition == nil {
				t = &iceberg.StructType{}
			}
		default:
			t = iceberg.PrimitiveTypes.Int64
		}
		out = append(out, iceberg.NestedField{ID: c.id, Name: c.name, Type: t, Required: c.bit == MetaFile || c.bit == MetaPos || c.bit == MetaSpecID})
	}
	return out
}
