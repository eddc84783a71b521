package schema

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/token"
)

// MetaColumn is one metadata column a row carries after the table's
// columns (token.MetaColumns), resolved against one data file.
type MetaColumn struct {
	// Key is the pre-encoded `"name":` of the column.
	Key []byte
	Bit token.MetaColumns
	// Stored is, for _row_id and _last_updated_sequence_number, the column
	// as the file stores it (a writer that keeps row lineage, as a
	// compaction does): a primitive, or a null constant when the file has
	// no such column.
	Stored *Node
	// Inherit is what a row whose stored value is null inherits, when
	// inherits says there is such a value: the file's first_row_id (plus
	// the row's position) or its data sequence number.
	Inherit  int64
	Inherits bool
	// Value is the pre-encoded JSON of a column that is the same on every
	// row of the file: _file, _spec_id and _partition.
	Value []byte
}

// ResolveMeta resolves the metadata columns of split sp against the data
// file whose root column is root; pt is the table's partition type.
func (r *Resolver) ResolveMeta(sp token.Split, pt *iceberg.StructType, root *parquet.Column) ([]MetaColumn, error) {
	if !sp.Meta.Valid() {
		return nil, fmt.Errorf("%w: metadata columns %d: this sidecar knows %v", token.ErrMalformedToken, sp.Meta, token.MetaColumnNames())
	}
	var out []MetaColumn
	for _, f := range sp.Meta.Fields(pt) {
		m := MetaColumn{Key: encode.FieldKey(f.Name)}
		var err error
		switch f.ID {
		case iceberg.RowIDFieldID:
			m.Bit = token.MetaRowID
			m.Stored, err = r.ResolveMember(f, r.Child(root, f.ID))
			if v := sp.Data.FirstRowID; v != nil {
				m.Inherit, m.Inherits = *v, true
			}
		case iceberg.LastUpdatedSequenceNumberFieldID:
			m.Bit = token.MetaLastUpdated
			m.Stored, err = r.ResolveMember(f, r.Child(root, f.ID))
			if v := sp.Data.DataSequence; v != nil {
				m.Inherit, m.Inherits = *v, true
			}
		default:
			m.Bit = token.MetaColumnOf(f.ID)
			switch m.Bit {
			case token.MetaFile:
				m.Value = jsonstr.AppendString(nil, sp.Data.Path)
			case token.MetaSpecID:
				m.Value = strconv.AppendInt(nil, int64(sp.Data.SpecID), 10)
			case token.MetaPartition:
				m.Value, err = r.partitionJSON(sp, f)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("resolve metadata column %s: %w", f.Name, err)
		}
		if m.Stored != nil && m.Stored.Kind != NodePrimitive && m.Stored.Kind != NodeConst {
			return nil, fmt.Errorf("%w: column %s of %s is not a long", readerr.ErrSchemaMismatch, f.Name, r.Path)
		}
		out = append(out, m)
	}
	return out, nil
}

// partitionJSON is the _partition of sp's data file, of type f: an
// object with every field of the table's partition type, each the file's
// value encoded as the reader encodes a column of its type, or null where
// the file's spec has no such field.
func (r *Resolver) partitionJSON(sp token.Split, f iceberg.NestedField) ([]byte, error) {
	st, ok := f.Type.(*iceberg.StructType)
	if !ok {
		return nil, fmt.Errorf("%w: _partition has type %s", readerr.ErrUnsupported, f.Type)
	}
	// A resolver whose "identity partition values" are the file's
	// partition values by partition field id: a partition field then
	// resolves as a field the file lacks.
	values := &Resolver{Path: r.Path, Enc: r.Enc, Identity: make(map[int]json.RawMessage, len(sp.Data.Partition))}
	for _, v := range sp.Data.Partition {
		values.Identity[v.FieldID] = v.Value
	}
	b := []byte{'{'}
	for i, pf := range st.FieldList {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, encode.FieldKey(pf.Name)...)
		_, unknown := pf.Type.(iceberg.UnknownType)
		c, err := values.Constant(pf, unknown)
		if err != nil {
			return nil, fmt.Errorf("partition field %s of data file %s: %w", pf.Name, sp.Data.Path, err)
		}
		b = append(b, c.json...)
	}
	return append(b, '}'), nil
}
