package reader

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
)

// nodeKind is the shape of one Iceberg field in the output.
type nodeKind uint8

const (
	nodeConst     nodeKind = iota // absent from the file (or unknown): the same value on every row
	nodePrimitive                 // one leaf column
	nodeStruct                    // nested object
	nodeList                      // array
	nodeMap                       // object, or array of key/value objects
	nodeVariant                   // a variant's JSON, from its metadata, value and typed_value columns
)

// node is one Iceberg field resolved against the Parquet schema of a file:
// what to emit and which leaf columns carry it, with the definition and
// repetition levels that tell null, empty and repeated instances apart
// (Dremel reassembly).
type node struct {
	kind nodeKind
	// key is the field's `,"name":`, pre-encoded: a field after another
	// writes all of it, the first all but the comma.
	key encode.FieldKeyBytes
	// leaf is the column of a primitive.
	leaf *column.Leaf
	// first is the first leaf under the node; its levels decide whether an
	// instance is null, empty or has more elements.
	first *column.Leaf
	// leaves are every leaf under the node, advanced together when an
	// instance is null or empty.
	leaves []*column.Leaf
	// extra are leaves read only to learn whether a struct is null (all of
	// its own fields are absent from the file); they are skipped after the
	// struct's fields are written.
	extra []*column.Leaf
	// def is the definition level at which the node is present.
	def int
	// rep is the repetition level at which an instance of the node starts.
	rep int
	// elemDef and elemRep are, for lists and maps, the levels of the
	// repeated group: def >= elemDef means at least one element, and a value
	// with repetition level elemRep starts the next element.
	elemDef, elemRep int
	// children are a struct's fields, a list's element, a map's key and value.
	children []*node
	// stringKeys is true for a map whose keys are strings (a JSON object).
	stringKeys bool
	// value is the pre-encoded JSON of a nodeConst: null, an identity
	// partition value or the field's initial-default; invalid says that it
	// replaced invalid UTF-8.
	value   []byte
	invalid bool
	// variant is a nodeVariant's columns.
	variant *variantColumn
}

// resolver matches an Iceberg schema to the columns of one Parquet file by
// field id: the ids the file carries, or those the table's name mapping
// gives its column names when it carries none.
type resolver struct {
	path   string
	leaves map[int]*column.Leaf // by leaf column index, so each column is read once
	order  []*column.Leaf
	// ids are the field ids of the file's columns from the name mapping;
	// nil when the file carries its own.
	ids map[*parquet.Column]int
	// identity holds the identity-partition values of the data file by
	// source field id; enc encodes them and the initial defaults.
	identity map[int]json.RawMessage
	enc      encode.Options
}

// newResolver returns a resolver for the Parquet file at path with the
// given root; a file without field ids resolves through nm, and fails with
// ErrNoFieldIDs when there is no mapping either.
func newResolver(path string, root *parquet.Column, nm iceberg.NameMapping) (*resolver, error) {
	r := &resolver{path: path, leaves: map[int]*column.Leaf{}}
	if hasFieldIDs(root) {
		return r, nil
	}
	if len(nm) == 0 {
		return nil, fmt.Errorf("resolve columns of %s: %w, and the table has no name mapping (schema.name-mapping.default)",
			path, ErrNoFieldIDs)
	}
	r.ids = map[*parquet.Column]int{}
	mapFields(root, nm, r.ids)
	return r, nil
}

// hasFieldIDs reports whether any column of the file carries a field id.
func hasFieldIDs(c *parquet.Column) bool {
	for _, child := range c.Columns() {
		if child.ID() != 0 || hasFieldIDs(child) {
			return true
		}
	}
	return false
}

// mapFields assigns to the children of group c the field ids that the
// mapped fields give their names, recursively.
func mapFields(c *parquet.Column, fields []iceberg.MappedField, ids map[*parquet.Column]int) {
	for _, child := range c.Columns() {
		i := slices.IndexFunc(fields, func(m iceberg.MappedField) bool { return slices.Contains(m.Names, child.Name()) })
		if i < 0 {
			continue
		}
		mapColumn(child, &fields[i], ids)
	}
}

// mapColumn assigns column c the id of m and maps what is under it: the
// element of a list, the key and value of a map, the fields of a struct.
func mapColumn(c *parquet.Column, m *iceberg.MappedField, ids map[*parquet.Column]int) {
	if m.FieldID != nil {
		ids[c] = *m.FieldID
	}
	if c.Leaf() || len(m.Fields) == 0 {
		return
	}
	elem, key, value := m.GetField("element"), m.GetField("key"), m.GetField("value")
	rc := repeatedChild(c)
	switch {
	case elem != nil && rc != nil:
		if e := listElement(c, rc); e != nil {
			mapColumn(e, elem, ids)
		}
	case key != nil && value != nil && rc != nil && !rc.Leaf() && len(rc.Columns()) == 2:
		kc, vc := rc.Column("key"), rc.Column("value")
		if kc == nil || vc == nil {
			kc, vc = rc.Columns()[0], rc.Columns()[1]
		}
		mapColumn(kc, key, ids)
		mapColumn(vc, value, ids)
	default:
		mapFields(c, m.Fields, ids)
	}
}

// id returns the field id of column c, or -1 when it has none.
func (r *resolver) id(c *parquet.Column) int {
	if r.ids == nil {
		return c.ID()
	}
	if id, ok := r.ids[c]; ok {
		return id
	}
	return -1
}

// child returns the child of group c with field id id, or nil.
func (r *resolver) child(c *parquet.Column, id int) *parquet.Column {
	for _, child := range c.Columns() {
		if r.id(child) == id {
			return child
		}
	}
	return nil
}

// addLeaf registers a leaf column with the conversion vt; a column resolved
// twice (emitted and used as an equality key) is read once.
func (r *resolver) addLeaf(c *parquet.Column, vt encode.ValueType) *column.Leaf {
	if l, ok := r.leaves[c.Index()]; ok {
		return l
	}
	l := &column.Leaf{
		Index:  c.Index(),
		Path:   strings.Join(c.Path(), "."),
		MaxRep: c.MaxRepetitionLevel(),
		MaxDef: c.MaxDefinitionLevel(),
		Length: c.Type().Length(),
		Type:   vt,
	}
	r.leaves[l.Index] = l
	r.order = append(r.order, l)
	return l
}

// resolveMember resolves a field of the table or of a struct, or a map's
// key or value, against column c: such a column repeats only as a list's
// element does (a footer that calls it repeated would make every row's
// value a list of them, or null).
func (r *resolver) resolveMember(f iceberg.NestedField, c *parquet.Column) (*node, error) {
	if c != nil && c.Repeated() {
		return nil, r.mismatch(f, c)
	}
	return r.resolveField(f, c)
}

// resolveField resolves one Iceberg field against column c (nil when the
// file has no column with the field's id). c may be repeated only as the
// element of a two-level list; resolveMember refuses it elsewhere.
func (r *resolver) resolveField(f iceberg.NestedField, c *parquet.Column) (*node, error) {
	n := &node{key: encode.NewFieldKeyBytes(f.Name)}
	if _, ok := f.Type.(iceberg.UnknownType); ok || c == nil {
		// The spec's order for a field the file lacks: the identity
		// partition value, then the initial default, then null. An
		// unknown-typed field is never read, whatever the file holds.
		k, err := r.constant(f, ok)
		if err != nil {
			return nil, err
		}
		n.value, n.invalid = k.json, k.invalid
		return n, nil
	}
	n.def = c.MaxDefinitionLevel()
	n.rep = c.MaxRepetitionLevel()
	switch t := f.Type.(type) {
	case iceberg.VariantType:
		return r.resolveVariant(f, c, n)
	case *iceberg.StructType:
		if c.Leaf() || c.Repeated() {
			return nil, r.mismatch(f, c)
		}
		n.kind = nodeStruct
		for _, cf := range t.FieldList {
			child, err := r.resolveMember(cf, r.child(c, cf.ID))
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
			n.leaves = append(n.leaves, child.leaves...)
		}
		if len(n.leaves) == 0 {
			// None of the struct's fields is in the file, but the struct
			// itself is: read one of its columns to learn when it is null.
			p := firstLeafColumn(c)
			if p == nil {
				return nil, r.mismatch(f, c)
			}
			l := r.addLeaf(p, encode.ValueType{Conv: encode.ConvNull})
			n.leaves = []*column.Leaf{l}
			n.extra = []*column.Leaf{l}
		}
		n.first = n.leaves[0]
		return n, nil
	case *iceberg.ListType:
		rc, elem, err := r.listColumns(f, c)
		if err != nil {
			return nil, err
		}
		n.kind = nodeList
		n.elemDef, n.elemRep = rc.MaxDefinitionLevel(), rc.MaxRepetitionLevel()
		en, err := r.resolveField(t.ElementField(), elem)
		if err != nil {
			return nil, err
		}
		if len(en.leaves) == 0 {
			return nil, r.mismatch(f, c)
		}
		n.children = []*node{en}
		n.leaves = en.leaves
		n.first = n.leaves[0]
		return n, nil
	case *iceberg.MapType:
		kv := repeatedChild(c)
		if kv == nil || kv.Leaf() || len(kv.Columns()) != 2 {
			return nil, r.mismatch(f, c)
		}
		n.kind = nodeMap
		n.elemDef, n.elemRep = kv.MaxDefinitionLevel(), kv.MaxRepetitionLevel()
		kc, vc := r.child(kv, t.KeyID), r.child(kv, t.ValueID)
		if kc == nil || vc == nil {
			// Ids are missing inside the map: key and value are positional.
			kc, vc = kv.Columns()[0], kv.Columns()[1]
		}
		kn, err := r.resolveMember(t.KeyField(), kc)
		if err != nil {
			return nil, err
		}
		vn, err := r.resolveMember(t.ValueField(), vc)
		if err != nil {
			return nil, err
		}
		if len(kn.leaves) == 0 {
			return nil, r.mismatch(f, c)
		}
		_, n.stringKeys = t.KeyType.(iceberg.StringType)
		if n.stringKeys && kn.kind != nodePrimitive {
			n.stringKeys = false
		}
		n.children = []*node{kn, vn}
		n.leaves = append(append([]*column.Leaf(nil), kn.leaves...), vn.leaves...)
		n.first = n.leaves[0]
		return n, nil
	default:
		if !c.Leaf() {
			return nil, r.mismatch(f, c)
		}
		vt, err := r.valueTypeOf(f, c)
		if err != nil {
			return nil, err
		}
		n.kind = nodePrimitive
		n.leaf = r.addLeaf(c, vt)
		n.leaves = []*column.Leaf{n.leaf}
		n.first = n.leaf
		return n, nil
	}
}

// listColumns finds the repeated group and the element column of a list,
// following the Parquet LIST backward-compatibility rules that Iceberg
// applies to files written by older engines (two-level lists).
func (r *resolver) listColumns(f iceberg.NestedField, c *parquet.Column) (rc, elem *parquet.Column, err error) {
	if c.Leaf() || c.Repeated() {
		return nil, nil, fmt.Errorf("%w: column %s of %s for list field %d (%s) is not a LIST group",
			ErrUnsupported, strings.Join(c.Path(), "."), r.path, f.ID, f.Name)
	}
	rc = repeatedChild(c)
	if rc == nil {
		return nil, nil, r.mismatch(f, c)
	}
	return rc, listElement(c, rc), nil
}

// listElement returns the element column of list c with repeated child rc.
func listElement(c, rc *parquet.Column) *parquet.Column {
	switch {
	case rc.Leaf(), len(rc.Columns()) != 1, rc.Name() == "array", rc.Name() == c.Name()+"_tuple":
		// Two-level list: the repeated node is the element itself.
		return rc
	}
	return rc.Columns()[0]
}

// repeatedChild returns the single repeated child of a LIST or MAP group.
func repeatedChild(c *parquet.Column) *parquet.Column {
	if c.Leaf() || len(c.Columns()) != 1 || !c.Columns()[0].Repeated() {
		return nil
	}
	return c.Columns()[0]
}

// firstLeafColumn returns the first leaf column under c.
func firstLeafColumn(c *parquet.Column) *parquet.Column {
	if c.Leaf() {
		return c
	}
	for _, child := range c.Columns() {
		if l := firstLeafColumn(child); l != nil {
			return l
		}
	}
	return nil
}

func (r *resolver) mismatch(f iceberg.NestedField, c *parquet.Column) error {
	return fmt.Errorf("%w: column %s of %s (field id %d) cannot be read as %s %s",
		ErrSchemaMismatch, strings.Join(c.Path(), "."), r.path, f.ID, f.Name, f.Type)
}

// valueTypeOf picks the conversion of leaf column c to the Iceberg type of
// f; without a column (nil c), and for an unknown f, the value is null.
func (r *resolver) valueTypeOf(f iceberg.NestedField, c *parquet.Column) (encode.ValueType, error) {
	if _, ok := f.Type.(iceberg.UnknownType); ok || c == nil {
		return encode.ValueType{Conv: encode.ConvNull}, nil
	}
	kind := c.Type().Kind()
	lt := c.Type().LogicalType()
	if _, null := logicalValue(lt).(*format.NullType); null {
		// A column annotated NULL (as writers store a column of nothing
		// but nulls, in any physical type) is null whatever its field's
		// type: the spec lets unknown be promoted to any type.
		return encode.ValueType{Conv: encode.ConvNull, NullOnly: true}, nil
	}
	vt := encode.ValueType{}
	ok := false
	switch t := f.Type.(type) {
	case iceberg.BooleanType:
		vt.Conv, ok = encode.ConvBool, kind == parquet.Boolean
	case iceberg.Int32Type:
		vt.Conv, ok = encode.ConvInt32, kind == parquet.Int32
	case iceberg.Int64Type:
		switch kind {
		case parquet.Int32:
			vt.Conv, ok = encode.ConvInt32, true
		case parquet.Int64:
			vt.Conv, ok = encode.ConvInt64, true
		}
	case iceberg.Float32Type:
		vt.Conv, ok = encode.ConvFloat, kind == parquet.Float
	case iceberg.Float64Type:
		switch kind {
		case parquet.Float:
			vt.Conv, ok = encode.ConvFloatAsDouble, true
		case parquet.Double:
			vt.Conv, ok = encode.ConvDouble, true
		}
	case iceberg.DateType:
		vt.Conv, ok = encode.ConvDate, kind == parquet.Int32
	case iceberg.TimeType:
		switch kind {
		case parquet.Int32:
			vt.Conv, vt.Unit, ok = encode.ConvTimeInt32, unitOf(lt, encode.NanosPerMilli), true
		case parquet.Int64:
			vt.Conv, vt.Unit, ok = encode.ConvTimeInt64, unitOf(lt, 1000), true
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		vt, ok = timestampType(kind, lt, false)
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		vt, ok = timestampType(kind, lt, true)
	case iceberg.StringType:
		vt.Conv, ok = encode.ConvString, kind == parquet.ByteArray || kind == parquet.FixedLenByteArray
	case iceberg.BinaryType:
		vt.Conv, ok = encode.ConvBinary, kind == parquet.ByteArray || kind == parquet.FixedLenByteArray
	case iceberg.FixedType:
		// A fixed-length column holds fixed(L) only at length L: another
		// length (a damaged footer) would cut every value elsewhere.
		vt.Conv, ok = encode.ConvBinary, kind == parquet.ByteArray || (kind == parquet.FixedLenByteArray && c.Type().Length() == t.Len())
	case iceberg.UUIDType:
		vt.Conv, ok = encode.ConvUUID, (kind == parquet.FixedLenByteArray && c.Type().Length() == 16) || kind == parquet.ByteArray
	case iceberg.GeometryType, iceberg.GeographyType:
		// WKB, with the GEOMETRY or GEOGRAPHY logical type or without
		// (plain binary, as iceberg-go writes it).
		vt.Conv, ok = encode.ConvWKT, kind == parquet.ByteArray
		if r.enc.GeoWKB {
			vt.Conv = encode.ConvBase64
		}
	case iceberg.DecimalType:
		vt.Scale = t.Scale()
		if lt != nil {
			if d, isDec := lt.Value.(*format.DecimalType); isDec && int(d.Scale) != t.Scale() {
				return encode.ValueType{}, r.mismatch(f, c)
			}
		}
		switch kind {
		case parquet.Int32:
			vt.Conv, ok = encode.ConvDecimalInt32, true
		case parquet.Int64:
			vt.Conv, ok = encode.ConvDecimalInt64, true
		case parquet.ByteArray, parquet.FixedLenByteArray:
			vt.Conv, ok = encode.ConvDecimalBytes, true
		}
	default:
		return encode.ValueType{}, fmt.Errorf("%w: field %d (%s) has type %s", ErrUnsupported, f.ID, f.Name, f.Type)
	}
	if !ok {
		return encode.ValueType{}, r.mismatch(f, c)
	}
	return vt, nil
}

// timestampType picks the conversion of a timestamp column; nanos is true
// for the Iceberg nanosecond types.
func timestampType(kind parquet.Kind, lt *format.LogicalType, nanos bool) (encode.ValueType, bool) {
	switch kind {
	case parquet.Int64:
		def := int64(1000)
		if nanos {
			def = 1
		}
		return encode.ValueType{Conv: encode.ConvTimestamp, Unit: unitOf(lt, def), Nanos: nanos}, true
	case parquet.Int96:
		return encode.ValueType{Conv: encode.ConvInt96, Unit: 1, Nanos: nanos}, true
	case parquet.Int32:
		// Iceberg v3 promotes date to timestamp and timestamp_ns: the value
		// is midnight UTC of the day.
		if _, isDate := logicalValue(lt).(*format.DateType); lt == nil || isDate {
			return encode.ValueType{Conv: encode.ConvDateTimestamp, Nanos: nanos}, true
		}
	}
	return encode.ValueType{}, false
}

// logicalValue returns the logical type of a column, or nil.
func logicalValue(lt *format.LogicalType) format.LogicalTypeValue {
	if lt == nil {
		return nil
	}
	return lt.Value
}

// unitOf returns the nanoseconds per step of a TIME or TIMESTAMP logical
// type, or def when the column carries none.
func unitOf(lt *format.LogicalType, def int64) int64 {
	if lt == nil {
		return def
	}
	var u format.TimeUnitValue
	switch t := lt.Value.(type) {
	case *format.TimestampType:
		u = t.Unit.Value
	case *format.TimeType:
		u = t.Unit.Value
	}
	if u == nil {
		return def
	}
	return int64(u.Duration())
}
