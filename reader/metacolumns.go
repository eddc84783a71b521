package reader

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/splits/split"
)

// metaColumn is one metadata column a row carries after the table's
// columns (split.MetaColumns), resolved against one data file.
type metaColumn struct {
	// key is the pre-encoded `"name":` of the column.
	key []byte
	bit split.MetaColumns
	// stored is, for _row_id and _last_updated_sequence_number, the column
	// as the file stores it (a writer that keeps row lineage, as a
	// compaction does): a primitive, or a null constant when the file has
	// no such column.
	stored *node
	// inherit is what a row whose stored value is null inherits, when
	// inherits says there is such a value: the file's first_row_id (plus
	// the row's position) or its data sequence number.
	inherit  int64
	inherits bool
	// value is the pre-encoded JSON of a column that is the same on every
	// row of the file: _file, _spec_id and _partition.
	value []byte
}

// resolveMeta resolves the metadata columns of split sp against the data
// file whose root column is root; pt is the table's partition type.
func (r *resolver) resolveMeta(sp split.Split, pt *iceberg.StructType, root *parquet.Column) ([]metaColumn, error) {
	if !sp.Meta.Valid() {
		return nil, fmt.Errorf("%w: metadata columns %d: this sidecar knows %v", split.ErrMalformedToken, sp.Meta, split.MetaColumnNames())
	}
	var out []metaColumn
	for _, f := range sp.Meta.Fields(pt) {
		m := metaColumn{key: encode.FieldKey(f.Name)}
		var err error
		switch f.ID {
		case iceberg.RowIDFieldID:
			m.bit = split.MetaRowID
			m.stored, err = r.resolveMember(f, r.child(root, f.ID))
			if v := sp.Data.FirstRowID; v != nil {
				m.inherit, m.inherits = *v, true
			}
		case iceberg.LastUpdatedSequenceNumberFieldID:
			m.bit = split.MetaLastUpdated
			m.stored, err = r.resolveMember(f, r.child(root, f.ID))
			if v := sp.Data.DataSequence; v != nil {
				m.inherit, m.inherits = *v, true
			}
		default:
			m.bit = split.MetaColumnOf(f.ID)
			switch m.bit {
			case split.MetaFile:
				m.value = jsonstr.AppendString(nil, sp.Data.Path)
			case split.MetaSpecID:
				m.value = strconv.AppendInt(nil, int64(sp.Data.SpecID), 10)
			case split.MetaPartition:
				m.value, err = r.partitionJSON(sp, f)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("resolve metadata column %s: %w", f.Name, err)
		}
		if m.stored != nil && m.stored.kind != nodePrimitive && m.stored.kind != nodeConst {
			return nil, fmt.Errorf("%w: column %s of %s is not a long", ErrSchemaMismatch, f.Name, r.path)
		}
		out = append(out, m)
	}
	return out, nil
}

// partitionJSON is the _partition of sp's data file, of type f: an
// object with every field of the table's partition type, each the file's
// value encoded as the reader encodes a column of its type, or null where
// the file's spec has no such field.
func (r *resolver) partitionJSON(sp split.Split, f iceberg.NestedField) ([]byte, error) {
	st, ok := f.Type.(*iceberg.StructType)
	if !ok {
		return nil, fmt.Errorf("%w: _partition has type %s", ErrUnsupported, f.Type)
	}
	// A resolver whose "identity partition values" are the file's
	// partition values by partition field id: a partition field then
	// resolves as a field the file lacks.
	values := &resolver{path: r.path, enc: r.enc, identity: make(map[int]json.RawMessage, len(sp.Data.Partition))}
	for _, v := range sp.Data.Partition {
		values.identity[v.FieldID] = v.Value
	}
	b := []byte{'{'}
	for i, pf := range st.FieldList {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, encode.FieldKey(pf.Name)...)
		_, unknown := pf.Type.(iceberg.UnknownType)
		c, err := values.constant(pf, unknown)
		if err != nil {
			return nil, fmt.Errorf("partition field %s of data file %s: %w", pf.Name, sp.Data.Path, err)
		}
		b = append(b, c.json...)
	}
	return append(b, '}'), nil
}

// appendMeta appends the row's metadata columns; pos is the row's position
// in its data file, and comma says that a column comes before them.
func (e *rowEncoder) appendMeta(b []byte, pos int64, comma bool) []byte {
	for i := range e.meta {
		m := &e.meta[i]
		if comma || i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.key...)
		switch m.bit {
		case split.MetaPos:
			b = strconv.AppendInt(b, pos, 10)
		case split.MetaRowID, split.MetaLastUpdated:
			// The spec's inheritance: a stored value wins; a null (or no
			// column) is the file's first_row_id plus the position, or
			// its data sequence number.
			if n := m.stored; n.kind == nodePrimitive {
				if !n.leaf.Null() {
					b = e.appendNode(b, n)
					continue
				}
				n.leaf.Pos++
			}
			switch {
			case !m.inherits:
				b = append(b, "null"...)
			case m.bit == split.MetaRowID:
				b = strconv.AppendInt(b, m.inherit+pos, 10)
			default:
				b = strconv.AppendInt(b, m.inherit, 10)
			}
		default:
			b = append(b, m.value...)
		}
	}
	return b
}
