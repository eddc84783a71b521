package changes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// maxDeleteRowsRead bounds the rows of one delete file that /changes reads
// to narrow a change down; a larger file is taken to apply wherever its
// bounds let it.
const maxDeleteRowsRead = 1 << 20

// deleteReader reads columns of delete files when their bounds cannot
// narrow a change down, each file once per request, through the reader's
// delete-file reading. A file that cannot be read (damaged, too large, of
// a type the reader does not read) is taken to apply wherever its bounds
// let it, which only widens the change; a failing store is kept in err, so
// that the diff fails instead of widening on a passing fault.
type deleteReader struct {
	fs     icebergio.IO
	schema token.TableSchema
	paths  map[string]map[string]bool // positional delete file → the data file paths it names
	keys   map[string][]reader.DeleteColumn
	err    error
}

func newDeleteReader(fs icebergio.IO, meta table.Metadata) *deleteReader {
	return &deleteReader{
		fs:     fs,
		schema: token.TableSchema{Schema: meta.CurrentSchema(), NameMapping: meta.NameMapping()},
		paths:  map[string]map[string]bool{},
		keys:   map[string][]reader.DeleteColumn{},
	}
}

// read reads columns of the delete file del, of the given kind.
func (r *deleteReader) read(del iceberg.DataFile, kind token.DeleteKind, ids []int) ([]reader.DeleteColumn, error) {
	cols, err := reader.ReadDeleteColumns(r.fs, splits.DeleteFileOf(kind, del), r.schema, ids, maxDeleteRowsRead)
	if err != nil && r.err == nil && (errors.Is(err, fault.ErrUnavailable) || errors.Is(err, fault.ErrDenied)) {
		r.err = err
	}
	return cols, err
}

// namesFile says whether a positional delete file may name rows of the data
// file at path: from its referenced data file or file_path bounds when they
// pin one file, else from its file_path column.
func (r *deleteReader) namesFile(del iceberg.DataFile, path string) bool {
	if ref := del.ReferencedDataFile(); ref != nil && *ref != "" {
		return *ref == path
	}
	lo, ok1 := del.LowerBoundValues()[reader.FieldIDDeleteFilePath]
	hi, ok2 := del.UpperBoundValues()[reader.FieldIDDeleteFilePath]
	if ok1 && ok2 && bytes.Equal(lo, hi) && string(lo) == path {
		// One path from lower to upper bound. (Equal bounds that are not
		// the path may be truncated prefixes: the column says.)
		return true
	}
	names, ok := r.paths[del.FilePath()]
	if !ok {
		cols, err := r.read(del, token.DeletePosition, []int{reader.FieldIDDeleteFilePath})
		if err != nil {
			return true
		}
		names = map[string]bool{}
		for i, b := range cols[0].Bytes {
			if !cols[0].Null[i] {
				names[string(b)] = true
			}
		}
		r.paths[del.FilePath()] = names
	}
	return names[path]
}

// int64Column reads one integer column of an equality delete file (a time
// key), in the unit of the table's type: nil stands for a null.
func (r *deleteReader) int64Column(del iceberg.DataFile, fid int) ([]*int64, error) {
	cols, err := r.read(del, token.DeleteEquality, []int{fid})
	if err != nil {
		return nil, err
	}
	c := cols[0]
	if c.Int == nil && len(c.Null) > 0 {
		return nil, fmt.Errorf("delete file %s: column %d is not an integer", del.FilePath(), fid)
	}
	out := make([]*int64, len(c.Null))
	for i := range c.Null {
		if !c.Null[i] {
			out[i] = &c.Int[i]
		}
	}
	return out, nil
}

// mayMatch says whether any key of an equality delete file may match a row
// of the data file f: a key matches only when each of its values lies
// within f's bounds for that column (a null only when f may hold nulls
// there). Columns it cannot compare count as matching.
func (r *deleteReader) mayMatch(del, f iceberg.DataFile) bool {
	schema := r.schema.Schema
	ids := del.EqualityFieldIDs()
	var types []iceberg.Type
	for _, id := range ids {
		field, ok := schema.FindFieldByID(id)
		if !ok || !comparable(field.Type) || !slices.ContainsFunc(schema.Fields(), func(top iceberg.NestedField) bool { return top.ID == id }) {
			return true
		}
		types = append(types, field.Type)
	}
	cols, ok := r.keys[del.FilePath()]
	if !ok {
		var err error
		if cols, err = r.read(del, token.DeleteEquality, ids); err != nil {
			return true
		}
		r.keys[del.FilePath()] = cols
	}
	for i := range cols[0].Null {
		match := true
		for j := range cols {
			if !valueMayBeIn(f, ids[j], types[j], &cols[j], i) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// comparable says whether a key column's values can be held against
// bounds: integers, dates, times, timestamps, booleans, strings and
// binaries.
func comparable(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType,
		iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType, iceberg.BooleanType,
		iceberg.StringType, iceberg.BinaryType:
		return true
	}
	return false
}

// valueMayBeIn says whether f may hold the i-th value of c in column fid.
func valueMayBeIn(f iceberg.DataFile, fid int, typ iceberg.Type, c *reader.DeleteColumn, i int) bool {
	nulls, knownNulls := f.NullValueCounts()[fid]
	if c.Null[i] {
		return !knownNulls || nulls > 0
	}
	if splits.AllNull(f, fid) {
		return false
	}
	lo, ok1 := f.LowerBoundValues()[fid]
	hi, ok2 := f.UpperBoundValues()[fid]
	if !ok1 || !ok2 {
		return true
	}
	switch {
	case c.Bytes != nil:
		// Bounds are byte prefixes (truncated lower, incremented upper):
		// still a lower and an upper bound in byte order.
		b := c.Bytes[i]
		return bytes.Compare(b, lo) >= 0 && bytes.Compare(b, hi) <= 0
	case c.Bool != nil:
		if len(lo) != 1 || len(hi) != 1 {
			return true
		}
		x := byte(0)
		if c.Bool[i] {
			x = 1
		}
		return x >= lo[0] && x <= hi[0]
	case c.Int != nil:
		a, ok1 := decodeInt(lo)
		b, ok2 := decodeInt(hi)
		if !ok1 || !ok2 {
			return true
		}
		return c.Int[i] >= a && c.Int[i] <= b
	}
	return true
}

// decodeInt decodes a 4- or 8-byte little-endian bound.
func decodeInt(b []byte) (int64, bool) {
	switch len(b) {
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	case 8:
		return int64(binary.LittleEndian.Uint64(b)), true
	}
	return 0, false
}
