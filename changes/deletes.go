package changes

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/parquet-go/parquet-go"
)

// maxDeleteRowsRead bounds the rows of one delete file that /changes reads
// to narrow a change down; a larger file is taken to apply wherever its
// bounds let it.
const maxDeleteRowsRead = 1 << 20

// The reserved field id and name of a positional delete file's path column.
const (
	deleteFilePathID   = 2147483546
	deleteFilePathName = "file_path"
)

// deleteReader reads columns of delete files when their bounds cannot
// narrow a change down, each file once per request. Errors are not
// returned to the caller: a delete file that cannot be read is taken to
// apply wherever its bounds let it, which only widens the change.
type deleteReader struct {
	fs    icebergio.IO
	paths map[string]map[string]bool // positional delete file → the data file paths it names
	keys  map[string][][]parquet.Value
}

func newDeleteReader(fs icebergio.IO) *deleteReader {
	return &deleteReader{fs: fs, paths: map[string]map[string]bool{}, keys: map[string][][]parquet.Value{}}
}

// namesFile says whether a positional delete file may name rows of the data
// file at path: from its referenced data file or file_path bounds when they
// pin one file, else from its file_path column.
func (r *deleteReader) namesFile(del iceberg.DataFile, path string) bool {
	if ref := del.ReferencedDataFile(); ref != nil && *ref != "" {
		return *ref == path
	}
	lo, ok1 := del.LowerBoundValues()[deleteFilePathID]
	hi, ok2 := del.UpperBoundValues()[deleteFilePathID]
	if ok1 && ok2 && bytes.Equal(lo, hi) && string(lo) == path {
		// One path from lower to upper bound. (Equal bounds that are not
		// the path may be truncated prefixes: the column says.)
		return true
	}
	names, ok := r.paths[del.FilePath()]
	if !ok {
		cols, err := r.read(del, []int{deleteFilePathID}, []string{deleteFilePathName})
		if err != nil {
			return true
		}
		names = map[string]bool{}
		for _, v := range cols[0] {
			if !v.IsNull() {
				names[string(v.ByteArray())] = true
			}
		}
		r.paths[del.FilePath()] = names
	}
	return names[path]
}

// int64Column reads one integer column of a delete file (a time key):
// nil stands for a null.
func (r *deleteReader) int64Column(del iceberg.DataFile, fid int, name string) ([]*int64, error) {
	cols, err := r.read(del, []int{fid}, []string{name})
	if err != nil {
		return nil, err
	}
	out := make([]*int64, 0, len(cols[0]))
	for _, v := range cols[0] {
		if v.IsNull() {
			out = append(out, nil)
			continue
		}
		var x int64
		switch v.Kind() {
		case parquet.Int32:
			x = int64(v.Int32())
		case parquet.Int64:
			x = v.Int64()
		default:
			return nil, fmt.Errorf("delete file %s: column %s is %s, want an integer", del.FilePath(), name, v.Kind())
		}
		out = append(out, &x)
	}
	return out, nil
}

// mayMatch says whether any key of an equality delete file may match a row
// of the data file f: a key matches only when each of its values lies
// within f's bounds for that column (a null only when f may hold nulls
// there). Columns it cannot compare count as matching.
func (r *deleteReader) mayMatch(del, f iceberg.DataFile, schema *iceberg.Schema) bool {
	ids := del.EqualityFieldIDs()
	var names []string
	var types []iceberg.Type
	for _, id := range ids {
		field, ok := schema.FindFieldByID(id)
		if !ok || !comparable(field.Type) || !slices.ContainsFunc(schema.Fields(), func(top iceberg.NestedField) bool { return top.ID == id }) {
			return true
		}
		names = append(names, field.Name)
		types = append(types, field.Type)
	}
	key := del.FilePath()
	rows, ok := r.keys[key]
	if !ok {
		cols, err := r.read(del, ids, names)
		if err != nil {
			return true
		}
		rows = make([][]parquet.Value, len(cols[0]))
		for i := range rows {
			rows[i] = make([]parquet.Value, len(cols))
			for j := range cols {
				rows[i][j] = cols[j][i]
			}
		}
		r.keys[key] = rows
	}
	for _, row := range rows {
		match := true
		for j, v := range row {
			if !valueMayBeIn(f, ids[j], types[j], v) {
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

// valueMayBeIn says whether f may hold the value v in column fid.
func valueMayBeIn(f iceberg.DataFile, fid int, typ iceberg.Type, v parquet.Value) bool {
	nulls, knownNulls := f.NullValueCounts()[fid]
	if v.IsNull() {
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
	switch typ.(type) {
	case iceberg.StringType, iceberg.BinaryType:
		if v.Kind() != parquet.ByteArray {
			return true
		}
		// Bounds are byte prefixes (truncated lower, incremented upper):
		// still a lower and an upper bound in byte order.
		b := v.ByteArray()
		return bytes.Compare(b, lo) >= 0 && bytes.Compare(b, hi) <= 0
	case iceberg.BooleanType:
		if v.Kind() != parquet.Boolean || len(lo) != 1 || len(hi) != 1 {
			return true
		}
		x := byte(0)
		if v.Boolean() {
			x = 1
		}
		return x >= lo[0] && x <= hi[0]
	}
	var x int64
	switch v.Kind() {
	case parquet.Int32:
		x = int64(v.Int32())
	case parquet.Int64:
		x = v.Int64()
	default:
		return true
	}
	a, ok1 := decodeInt(lo)
	b, ok2 := decodeInt(hi)
	if !ok1 || !ok2 {
		return true
	}
	return x >= a && x <= b
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

// read reads top-level columns of a Parquet delete file, found by field id
// (or by name in a file written without ids), value by value: one slice per
// column, all of the file's rows, nulls included.
func (r *deleteReader) read(del iceberg.DataFile, ids []int, names []string) (cols [][]parquet.Value, err error) {
	if del.FileFormat() != iceberg.ParquetFile {
		return nil, fmt.Errorf("delete file %s is %s, not Parquet", del.FilePath(), del.FileFormat())
	}
	if del.Count() > maxDeleteRowsRead {
		return nil, fmt.Errorf("delete file %s has %d rows, more than %d", del.FilePath(), del.Count(), maxDeleteRowsRead)
	}
	f, err := r.fs.Open(del.FilePath())
	if err != nil {
		return nil, fmt.Errorf("open delete file %s: %w", del.FilePath(), err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close delete file %s: %w", del.FilePath(), cerr)
		}
	}()
	defer func() {
		// parquet-go panics on some malformed files.
		if p := recover(); p != nil {
			err = fmt.Errorf("read delete file %s: %v", del.FilePath(), p)
		}
	}()
	size := del.FileSizeBytes()
	if st, serr := f.Stat(); serr == nil && st.Size() > 0 {
		size = st.Size()
	}
	pf, err := parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("read delete file %s: %w", del.FilePath(), err)
	}
	leaves := make([]*parquet.Column, len(ids))
	for i, id := range ids {
		if leaves[i] = topLeaf(pf.Root(), id, names[i]); leaves[i] == nil {
			return nil, fmt.Errorf("delete file %s has no column %d (%s)", del.FilePath(), id, names[i])
		}
	}
	cols = make([][]parquet.Value, len(ids))
	buf := make([]parquet.Value, 256)
	for _, rg := range pf.RowGroups() {
		for i, leaf := range leaves {
			if err := readChunk(rg.ColumnChunks()[leaf.Index()], buf, &cols[i]); err != nil {
				return nil, fmt.Errorf("read column %s of delete file %s: %w", names[i], del.FilePath(), err)
			}
		}
	}
	for i := range cols {
		if len(cols[i]) != len(cols[0]) {
			return nil, fmt.Errorf("delete file %s: columns of %d and %d values", del.FilePath(), len(cols[0]), len(cols[i]))
		}
	}
	return cols, nil
}

// topLeaf finds a top-level leaf column by field id, or by name.
func topLeaf(root *parquet.Column, id int, name string) *parquet.Column {
	for _, c := range root.Columns() {
		if c.ID() == id && c.Leaf() {
			return c
		}
	}
	for _, c := range root.Columns() {
		if c.ID() == 0 && c.Leaf() && strings.EqualFold(c.Name(), name) {
			return c
		}
	}
	return nil
}

// readChunk appends the values of one column chunk to out, copied out of
// the pages they were read from.
func readChunk(chunk parquet.ColumnChunk, buf []parquet.Value, out *[]parquet.Value) error {
	pages := chunk.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		values := p.Values()
		for {
			n, err := values.ReadValues(buf)
			for _, v := range buf[:n] {
				*out = append(*out, v.Clone())
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(p)
				return err
			}
		}
		parquet.Release(p)
	}
}
