package reader

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/splits/split"
)

// eqSet holds the deleted keys of the equality delete files that share one
// list of equality field ids. Keys are the canonical bytes of the values
// converted to their Iceberg types (appendKey), so an int32-stored key
// matches an int64 data value and a null matches a null.
type eqSet struct {
	ids []int
	// cols are the data file's leaves of the ids, in order; nil for a column
	// the data file does not have, whose key is then in consts.
	cols   []*column.Leaf
	consts [][]byte
	// keys are the key sets of the set's delete files, one per file; they
	// may be shared with other streams through the cache and are never
	// modified.
	keys []*eqKeys
	// walks look up the values of a single integer column in each keys'
	// ints (nil: through the filter and the map); backs counts the values
	// below the one before, past maxBacks of which the set stops walking.
	walks []intWalk
	backs int
}

// maxBacks is how many times a column's values may go down before a set
// stops walking its keys: a column in no order costs a binary search a
// row that way, and the filter less.
const maxBacks = 64

// contains reports whether the current row of the data file matches a key
// of the set; kb is scratch space, returned for reuse.
func (e *eqSet) contains(kb []byte) ([]byte, bool) {
	if len(e.cols) == 1 {
		// One integer column (an id, the usual case): its filter hash
		// comes from the integer, so most rows are told apart without
		// building the key.
		if l := e.cols[0]; l != nil && intKeyed(l.Type.Conv) && !l.Null() {
			v := keyInt(l.Cur, l.VPos, &l.Type)
			if e.walks != nil {
				// Exact: a value is deleted when its key (appendKeyInt's)
				// is in the set, that is when it is among the ints.
				found, back := false, false
				for i, keys := range e.keys {
					var f bool
					if f, back = e.walks[i].contains(keys.ints, v); f {
						found = true
					}
				}
				if back {
					if e.backs++; e.backs > maxBacks {
						e.walks = nil
					}
				}
				return kb, found
			}
			u := uint64(v)
			maybe := false
			for _, keys := range e.keys {
				if keys.mayContain(keys.intHash(u)) {
					maybe = true
					break
				}
			}
			if !maybe {
				return kb, false
			}
		}
	}
	kb = kb[:0]
	for i, l := range e.cols {
		if l == nil {
			kb = append(kb, e.consts[i]...)
			continue
		}
		kb = appendLeafKey(kb, l)
	}
	for _, keys := range e.keys {
		if keys.contains(kb) {
			return kb, true
		}
	}
	return kb, false
}

// loadEqualitySets reads every equality delete file of the split into one
// set per distinct list of equality ids, and registers with r the data-file
// columns the sets compare (read even when they are not emitted).
func loadEqualitySets(l *deleteLoader, s split.Split, t split.TableSchema, dataRoot *parquet.Column, r *resolver) ([]*eqSet, error) {
	var sets []*eqSet
	for _, d := range s.Deletes {
		if d.Kind != split.DeleteEquality {
			continue
		}
		if len(d.EqualityIDs) == 0 {
			return nil, fmt.Errorf("read equality delete file %s: %w: no equality field ids", d.Path, ErrCorruptFile)
		}
		i := slices.IndexFunc(sets, func(e *eqSet) bool { return slices.Equal(e.ids, d.EqualityIDs) })
		var set *eqSet
		if i >= 0 {
			set = sets[i]
		} else {
			var err error
			if set, err = newEqSet(d, t.Schema, dataRoot, r); err != nil {
				return nil, err
			}
			sets = append(sets, set)
		}
		keys, err := l.equalityKeys(d, t)
		if err != nil {
			return nil, err
		}
		if keys.len() > 0 {
			set.keys = append(set.keys, keys)
		}
	}
	for _, set := range sets {
		if len(set.cols) == 1 && set.cols[0] != nil && intKeyed(set.cols[0].Type.Conv) {
			set.walks = make([]intWalk, len(set.keys))
		}
	}
	return sets, nil
}

// equalityKeys returns the keys of the equality delete file d, encoded for
// the table schema t.
func (l *deleteLoader) equalityKeys(d split.DeleteFile, t split.TableSchema) (*eqKeys, error) {
	if l.r.cache == nil {
		if k, ok := l.eqKeys[d.Path]; ok {
			return k, nil
		}
	}
	key := ""
	if l.r.cache != nil {
		var err error
		if key, err = equalityKey(l.r.space, d, t); err != nil {
			return nil, err
		}
	}
	v, err := l.cached(func() string { return key }, split.DeleteEquality, "equality delete file "+d.Path, func(res *memory.Reservation) (any, int64, error) {
		keys, err := readEqualityDeletes(l.watched(), d, t, res)
		if err != nil {
			return nil, 0, err
		}
		k := newEqKeys(keys)
		return k, k.size(), nil
	})
	if err != nil {
		return nil, err
	}
	k := v.(*eqKeys)
	if l.r.cache == nil {
		if l.eqKeys == nil {
			l.eqKeys = map[string]*eqKeys{}
		}
		l.eqKeys[d.Path] = k
	}
	return k, nil
}

// newEqSet resolves the equality columns of d in the data file.
func newEqSet(d split.DeleteFile, schema *iceberg.Schema, dataRoot *parquet.Column, r *resolver) (*eqSet, error) {
	set := &eqSet{ids: slices.Clone(d.EqualityIDs)}
	for _, id := range d.EqualityIDs {
		f, err := equalityField(schema, id, d.Path)
		if err != nil {
			return nil, err
		}
		c := r.findColumn(dataRoot, id)
		_, unknown := f.Type.(iceberg.UnknownType)
		if c == nil || unknown {
			// Not in the file: every row has the identity partition value,
			// the initial default or null.
			k, err := r.constant(f, unknown)
			if err != nil {
				return nil, fmt.Errorf("resolve equality column %d of %s: %w", id, d.Path, err)
			}
			set.cols = append(set.cols, nil)
			set.consts = append(set.consts, k.key)
			continue
		}
		if !c.Leaf() {
			return nil, r.mismatch(f, c)
		}
		vt, err := r.valueTypeOf(f, c)
		if err != nil {
			return nil, err
		}
		set.cols = append(set.cols, r.addLeaf(c, vt))
		set.consts = append(set.consts, nil)
	}
	return set, nil
}

// equalityField returns the schema field of an equality id; it must be a
// primitive.
func equalityField(schema *iceberg.Schema, id int, path string) (iceberg.NestedField, error) {
	f, ok := schema.FindFieldByID(id)
	if !ok {
		return f, fmt.Errorf("%w: equality delete file %s: field id %d is not in the schema", ErrUnsupported, path, id)
	}
	if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
		return f, fmt.Errorf("%w: equality delete file %s: field %d (%s) is not a primitive", ErrUnsupported, path, id, f.Name)
	}
	return f, nil
}

// findColumn finds the leaf or group with field id id, looking through
// structs but not into lists and maps (equality fields are never inside
// them).
func (r *resolver) findColumn(c *parquet.Column, id int) *parquet.Column {
	for _, child := range c.Columns() {
		if r.id(child) == id {
			return child
		}
		if !child.Leaf() && !child.Repeated() && repeatedChild(child) == nil {
			if found := r.findColumn(child, id); found != nil {
				return found
			}
		}
	}
	return nil
}

// readEqualityDeletes reads the keys of the equality delete file d,
// reading its equality columns by field id, or through the table's name
// mapping when the file has no ids (the file may hold more columns, such as
// the whole rows Flink writes). Keys are in the table schema's types, so a
// key column written under an older, narrower type still matches. What it
// decodes is reserved from res as it goes, its filter included.
func readEqualityDeletes(fs *watchedIO, d split.DeleteFile, t split.TableSchema, res *memory.Reservation) (_ map[string]struct{}, err error) {
	cf, err := openColumns(fs, "equality delete file", d)
	if err != nil {
		return nil, err
	}
	defer closeErr(cf, &err, "close equality delete file "+d.Path)
	r, err := newResolver(d.Path, cf.root, t.NameMapping)
	if err != nil {
		return nil, err
	}
	cols := make([]*column.Leaf, len(d.EqualityIDs))
	for i, id := range d.EqualityIDs {
		field, err := equalityField(t.Schema, id, d.Path)
		if err != nil {
			return nil, err
		}
		c := r.findColumn(cf.root, id)
		if !flatLeaf(c) {
			return nil, fmt.Errorf("read equality delete file %s: %w: no column with field id %d that holds one value a row", d.Path, ErrCorruptFile, id)
		}
		vt, err := r.valueTypeOf(field, c)
		if err != nil {
			return nil, err
		}
		cols[i] = r.addLeaf(c, vt)
	}
	keys := map[string]struct{}{}
	var kb []byte
	mem := charge{res: res}
	err = cf.scan(fs, r.order, func() error {
		kb = kb[:0]
		for _, l := range cols {
			kb = appendLeafKey(kb, l)
		}
		if _, ok := keys[string(kb)]; !ok {
			keys[string(kb)] = struct{}{}
			return mem.add(int64(len(kb)) + mapEntryOverhead + filterBytesPerKey)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read equality delete file %s: %w", d.Path, err)
	}
	return keys, nil
}

// appendLeafKey appends the equality key of the leaf's current entry.
func appendLeafKey(b []byte, l *column.Leaf) []byte {
	if l.Null() {
		return append(b, 0)
	}
	return appendKey(b, l.Cur, l.VPos, &l.Type)
}

// intKeyed reports whether the keys of a conversion are integers
// (appendKeyInt's 9 bytes): keyInt gives them.
func intKeyed(c encode.Conv) bool {
	switch c {
	case encode.ConvInt32, encode.ConvDate, encode.ConvInt64, encode.ConvTimeInt32, encode.ConvTimeInt64, encode.ConvTimestamp, encode.ConvDateTimestamp, encode.ConvInt96:
		return true
	}
	return false
}

// keyInt returns the integer key of the i-th value of v, of a conversion
// that intKeyed accepts.
func keyInt(v *parquetpage.Values, i int, t *encode.ValueType) int64 {
	switch t.Conv {
	case encode.ConvInt32, encode.ConvDate:
		return int64(v.Int32[i])
	case encode.ConvInt64:
		return v.Int64[i]
	case encode.ConvTimeInt32:
		return encode.TimeMicros(int64(v.Int32[i]), t.Unit)
	case encode.ConvTimeInt64:
		return encode.TimeMicros(v.Int64[i], t.Unit)
	case encode.ConvTimestamp:
		return timestampIn(v.Int64[i], t.Unit, t.Nanos)
	case encode.ConvDateTimestamp:
		perDay := encode.NanosPerDay / 1000
		if t.Nanos {
			perDay = encode.NanosPerDay
		}
		return int64(v.Int32[i]) * perDay
	case encode.ConvInt96:
		return timestampIn(encode.Int96Nanos(v.Int96[i]), 1, t.Nanos)
	}
	return 0
}

// appendKey appends the canonical bytes of the i-th value of v as a value
// of its Iceberg type: 1 and a payload that is equal for equal Iceberg
// values whatever the physical type that stored them (0 is null).
func appendKey(b []byte, v *parquetpage.Values, i int, t *encode.ValueType) []byte {
	if intKeyed(t.Conv) {
		return appendKeyInt(b, keyInt(v, i, t))
	}
	switch t.Conv {
	case encode.ConvNull:
		return append(b, 0)
	case encode.ConvBool:
		if v.Bool[i] {
			return append(b, 1, 1)
		}
		return append(b, 1, 0)
	case encode.ConvFloat:
		f := v.Float[i]
		u := math.Float32bits(f)
		if f != f {
			u = 0x7fc00000 // every NaN is one key, as Java's Float.equals has it
		}
		return binary.BigEndian.AppendUint32(append(b, 1), u)
	case encode.ConvFloatAsDouble, encode.ConvDouble:
		var f float64
		if t.Conv == encode.ConvFloatAsDouble {
			f = float64(v.Float[i])
		} else {
			f = v.Double[i]
		}
		u := math.Float64bits(f)
		if f != f {
			u = 0x7ff8000000000000
		}
		return binary.BigEndian.AppendUint64(append(b, 1), u)
	case encode.ConvDecimalInt32:
		return appendKeyDecimal(b, int64(v.Int32[i]))
	case encode.ConvDecimalInt64:
		return appendKeyDecimal(b, v.Int64[i])
	case encode.ConvDecimalBytes:
		return appendKeyDecimalBytes(b, v.ByteArray(i))
	default: // strings, binary, fixed, uuid: the bytes
		raw := v.ByteArray(i)
		b = binary.AppendUvarint(append(b, 1), uint64(len(raw)))
		return append(b, raw...)
	}
}

func appendKeyInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 1), uint64(v))
}

// timestampIn converts a timestamp of v steps of unit nanoseconds to the
// unit of its Iceberg type: nanoseconds, or microseconds (floored).
func timestampIn(v, unit int64, nanos bool) int64 {
	target := int64(1000)
	if nanos {
		target = 1
	}
	if unit >= target {
		return v * (unit / target)
	}
	d := target / unit
	q := v / d
	if v%d < 0 {
		q--
	}
	return q
}

// appendKeyDecimal appends an unscaled decimal as 16 bytes of two's
// complement; the scale is the field's, the same on both sides.
func appendKeyDecimal(b []byte, v int64) []byte {
	hi := uint64(0)
	if v < 0 {
		hi = math.MaxUint64
	}
	b = binary.BigEndian.AppendUint64(append(b, 1), hi)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

// appendKeyDecimalBytes appends a big-endian two's complement unscaled
// decimal in the same form as appendKeyDecimal, whatever its stored width.
func appendKeyDecimalBytes(b []byte, raw []byte) []byte {
	raw = encode.TrimSignExtension(raw)
	if len(raw) > 16 {
		b = binary.AppendUvarint(append(b, 2), uint64(len(raw)))
		return append(b, raw...)
	}
	var buf [16]byte
	if len(raw) > 0 && raw[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(raw):], raw)
	return append(append(b, 1), buf[:]...)
}
