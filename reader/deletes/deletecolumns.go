package deletes

import (
	"fmt"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/reader/schema"
	"github.com/druidiceberg/sidecar/reader/storage"
	"github.com/druidiceberg/sidecar/token"
)

// Column is one column of a delete file, read whole, one entry per
// row: Null[i] says the i-th value is null; otherwise it is Int[i] for
// integer, date, time and timestamp columns (in the unit of the table's
// type, as the table's bounds hold it), Bytes[i] for strings, binaries,
// fixed and UUIDs, or Bool[i] for booleans. Only the slice of the column's
// kind is set.
type Column struct {
	Null  []bool
	Int   []int64
	Bytes [][]byte
	Bool  []bool
}

// The reserved field ids of a positional delete file's columns, which
// ReadColumns also reads.
const (
	FieldIDDeleteFilePath = fieldIDDeleteFilePath
	FieldIDDeletePos      = fieldIDDeletePos
)

// ReadColumns reads the columns with the given field ids of the
// Parquet or Avro delete file d, for callers that look at a delete file's values
// rather than apply it (the /changes diff). It reads the way rows are
// read: its own page decoding and bounded decompression, a damaged file as
// readerr.ErrCorruptFile and a failing store as a storage error. Columns are found
// as the row path finds them: the reserved ids of a positional delete file
// by id or reserved name, an equality column by id or through t's name
// mapping, in t's types. A file of more than maxRows rows is refused
// before it is read.
func ReadColumns(fs icebergio.IO, d token.DeleteFile, t token.TableSchema, ids []int, maxRows int64) (_ []Column, err error) {
	what := "equality delete file"
	if d.Kind != token.DeleteEquality {
		what = "positional delete file"
	}
	if d.Records > maxRows {
		return nil, fmt.Errorf("%w: %s %s has %d rows, more than %d", readerr.ErrUnsupported, what, d.Path, d.Records, maxRows)
	}
	w := &storage.Watched{IO: fs, Records: map[string]int64{d.Path: d.Records}}
	cf, err := storage.OpenColumns(w, what, d)
	if err != nil {
		return nil, err
	}
	defer closeErr(cf, &err, "close "+what+" "+d.Path)
	if cf.Parquet != nil && cf.Parquet.NumRows() > maxRows {
		return nil, fmt.Errorf("%w: %s %s has %d rows, more than %d", readerr.ErrUnsupported, what, d.Path, cf.Parquet.NumRows(), maxRows)
	}
	r, err := schema.NewResolver(d.Path, cf.Root, t.NameMapping)
	if err != nil {
		return nil, err
	}
	leaves := make([]*column.Leaf, len(ids))
	for i, id := range ids {
		if leaves[i], err = deleteLeaf(r, cf.Root, d.Path, t.Schema, id); err != nil {
			return nil, fmt.Errorf("read %s %s: %w", what, d.Path, err)
		}
	}
	cols := make([]Column, len(ids))
	err = cf.Scan(w, r.Order, func() error {
		for i, l := range leaves {
			c := &cols[i]
			null := l.Null()
			c.Null = append(c.Null, null)
			switch {
			case l.Type.Conv == encode.ConvBool:
				c.Bool = append(c.Bool, !null && l.Cur.Bool[l.VPos])
			case encode.IntKeyed(l.Type.Conv):
				v := int64(0)
				if !null {
					v = encode.KeyInt(l.Cur, l.VPos, &l.Type)
				}
				c.Int = append(c.Int, v)
			default:
				var v []byte
				if !null {
					v = append([]byte(nil), l.Cur.ByteArray(l.VPos)...)
				}
				c.Bytes = append(c.Bytes, v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, d.Path, err)
	}
	return cols, nil
}

// deleteLeaf resolves the column with field id id of a delete file whose
// root column is root.
func deleteLeaf(r *schema.Resolver, root *parquet.Column, path string, schema *iceberg.Schema, id int) (*column.Leaf, error) {
	switch id {
	case fieldIDDeleteFilePath, fieldIDDeletePos:
		name, conv, kind := nameDeleteFilePath, encode.ConvString, parquet.ByteArray
		if id == fieldIDDeletePos {
			name, conv, kind = nameDeletePos, encode.ConvInt64, parquet.Int64
		}
		c := deleteColumn(root, id, name)
		if c == nil || c.Type().Kind() != kind {
			return nil, fmt.Errorf("%w: no %s column", readerr.ErrCorruptFile, name)
		}
		return r.AddLeaf(c, encode.ValueType{Conv: conv}), nil
	}
	field, err := equalityField(schema, id, path)
	if err != nil {
		return nil, err
	}
	c := r.FindColumn(root, id)
	if !flatLeaf(c) {
		return nil, fmt.Errorf("%w: no column with field id %d that holds one value a row", readerr.ErrCorruptFile, id)
	}
	vt, err := r.ValueTypeOf(field, c)
	if err != nil {
		return nil, err
	}
	switch vt.Conv {
	case encode.ConvBool, encode.ConvString, encode.ConvBinary, encode.ConvUUID:
	default:
		if !encode.IntKeyed(vt.Conv) {
			return nil, fmt.Errorf("%w: column %s (%s) is not read as a delete column", readerr.ErrUnsupported, field.Name, field.Type)
		}
	}
	return r.AddLeaf(c, vt), nil
}
