package deletes

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/reader/schema"
	"github.com/druidiceberg/sidecar/reader/storage"
	"github.com/druidiceberg/sidecar/token"
)

// EqualitySet holds the deleted keys of the equality delete files that share one
// list of equality field ids. Keys are the canonical bytes of the values
// converted to their Iceberg types (appendKey), so an int32-stored key
// matches an int64 data value and a null matches a null.
type EqualitySet struct {
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

// Contains reports whether the current row of the data file matches a key
// of the set; kb is scratch space, returned for reuse.
func (e *EqualitySet) Contains(kb []byte) ([]byte, bool) {
	if len(e.cols) == 1 {
		// One integer column (an id, the usual case): its filter hash
		// comes from the integer, so most rows are told apart without
		// building the key.
		if l := e.cols[0]; l != nil && encode.IntKeyed(l.Type.Conv) && !l.Null() {
			v := encode.KeyInt(l.Cur, l.VPos, &l.Type)
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

// LoadEqualitySets reads every equality delete file of the split into one
// set per distinct list of equality ids, and registers with r the data-file
// columns the sets compare (read even when they are not emitted).
func LoadEqualitySets(l *Loader, s token.Split, t token.TableSchema, dataRoot *parquet.Column, r *schema.Resolver) ([]*EqualitySet, error) {
	var sets []*EqualitySet
	for _, d := range s.Deletes {
		if d.Kind != token.DeleteEquality {
			continue
		}
		if len(d.EqualityIDs) == 0 {
			return nil, fmt.Errorf("read equality delete file %s: %w: no equality field ids", d.Path, readerr.ErrCorruptFile)
		}
		i := slices.IndexFunc(sets, func(e *EqualitySet) bool { return slices.Equal(e.ids, d.EqualityIDs) })
		var set *EqualitySet
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
		if len(set.cols) == 1 && set.cols[0] != nil && encode.IntKeyed(set.cols[0].Type.Conv) {
			set.walks = make([]intWalk, len(set.keys))
		}
	}
	return sets, nil
}

// equalityKeys returns the keys of the equality delete file d, encoded for
// the table schema t.
func (l *Loader) equalityKeys(d token.DeleteFile, t token.TableSchema) (*eqKeys, error) {
	if l.cfg.Cache == nil {
		if k, ok := l.eqKeys[d.Path]; ok {
			return k, nil
		}
	}
	key := ""
	if l.cfg.Cache != nil {
		var err error
		if key, err = equalityKey(l.cfg.Space, d, t); err != nil {
			return nil, err
		}
	}
	v, err := l.cached(func() string { return key }, token.DeleteEquality, "equality delete file "+d.Path, func(res *memory.Reservation) (any, int64, error) {
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
	if l.cfg.Cache == nil {
		if l.eqKeys == nil {
			l.eqKeys = map[string]*eqKeys{}
		}
		l.eqKeys[d.Path] = k
	}
	return k, nil
}

// newEqSet resolves the equality columns of d in the data file.
func newEqSet(d token.DeleteFile, schema *iceberg.Schema, dataRoot *parquet.Column, r *schema.Resolver) (*EqualitySet, error) {
	set := &EqualitySet{ids: slices.Clone(d.EqualityIDs)}
	for _, id := range d.EqualityIDs {
		f, err := equalityField(schema, id, d.Path)
		if err != nil {
			return nil, err
		}
		c := r.FindColumn(dataRoot, id)
		_, unknown := f.Type.(iceberg.UnknownType)
		if c == nil || unknown {
			// Not in the file: every row has the identity partition value,
			// the initial default or null.
			k, err := r.Constant(f, unknown)
			if err != nil {
				return nil, fmt.Errorf("resolve equality column %d of %s: %w", id, d.Path, err)
			}
			set.cols = append(set.cols, nil)
			set.consts = append(set.consts, k.Key)
			continue
		}
		if !c.Leaf() {
			return nil, r.Mismatch(f, c)
		}
		vt, err := r.ValueTypeOf(f, c)
		if err != nil {
			return nil, err
		}
		set.cols = append(set.cols, r.AddLeaf(c, vt))
		set.consts = append(set.consts, nil)
	}
	return set, nil
}

// equalityField returns the schema field of an equality id; it must be a
// primitive.
func equalityField(schema *iceberg.Schema, id int, path string) (iceberg.NestedField, error) {
	f, ok := schema.FindFieldByID(id)
	if !ok {
		return f, fmt.Errorf("%w: equality delete file %s: field id %d is not in the schema", readerr.ErrUnsupported, path, id)
	}
	if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
		return f, fmt.Errorf("%w: equality delete file %s: field %d (%s) is not a primitive", readerr.ErrUnsupported, path, id, f.Name)
	}
	return f, nil
}

// readEqualityDeletes reads the keys of the equality delete file d,
// reading its equality columns by field id, or through the table's name
// mapping when the file has no ids (the file may hold more columns, such as
// the whole rows Flink writes). Keys are in the table schema's types, so a
// key column written under an older, narrower type still matches. What it
// decodes is reserved from res as it goes, its filter included.
func readEqualityDeletes(fs *storage.Watched, d token.DeleteFile, t token.TableSchema, res *memory.Reservation) (_ map[string]struct{}, err error) {
	cf, err := storage.OpenColumns(fs, "equality delete file", d)
	if err != nil {
		return nil, err
	}
	defer closeErr(cf, &err, "close equality delete file "+d.Path)
	r, err := schema.NewResolver(d.Path, cf.Root, t.NameMapping)
	if err != nil {
		return nil, err
	}
	cols := make([]*column.Leaf, len(d.EqualityIDs))
	for i, id := range d.EqualityIDs {
		field, err := equalityField(t.Schema, id, d.Path)
		if err != nil {
			return nil, err
		}
		c := r.FindColumn(cf.Root, id)
		if !flatLeaf(c) {
			return nil, fmt.Errorf("read equality delete file %s: %w: no column with field id %d that holds one value a row", d.Path, readerr.ErrCorruptFile, id)
		}
		vt, err := r.ValueTypeOf(field, c)
		if err != nil {
			return nil, err
		}
		cols[i] = r.AddLeaf(c, vt)
	}
	keys := map[string]struct{}{}
	var kb []byte
	mem := charge{res: res}
	err = cf.Scan(fs, r.Order, func() error {
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
	return encode.AppendKey(b, l.Cur, l.VPos, &l.Type)
}
