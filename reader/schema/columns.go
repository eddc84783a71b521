// Package schema resolves a table's Iceberg schema against the columns of
// one data or delete file: by field id, or through the table's name mapping
// when the file carries no ids. Resolver builds, for each projected field, a
// Node: what a row emits for the field and which leaf columns
// (column.Leaf) carry it, with the definition and repetition levels that
// tell null, empty and repeated instances apart; each leaf gets the
// encode.ValueType that turns its stored type into the field's Iceberg type
// (promotions included) or fails with readerr.ErrSchemaMismatch. Fields the
// file lacks resolve to constants: an identity partition value, the
// field's initial-default, or null (Constant). Shredded variants resolve to
// their value and typed_value pairs (VariantColumn), and the metadata
// columns a split asks for to MetaColumn.
//
// It owns the mapping, not the reading: the walk over rows (the row encoder,
// the residual filter, the delete sets) is package reader's and its delete
// sets', and opening files is the caller's.
package schema

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
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// NodeKind is the shape of one Iceberg field in the output.
type NodeKind uint8

const (
	NodeConst     NodeKind = iota // absent from the file (or unknown): the same value on every row
	NodePrimitive                 // one leaf column
	NodeStruct                    // nested object
	NodeList                      // array
	NodeMap                       // object, or array of key/value objects
	NodeVariant                   // a variant's JSON, from its metadata, value and typed_value columns
)

// Node is one Iceberg field resolved against the Parquet schema of a file:
// what to emit and which leaf columns carry it, with the definition and
// repetition levels that tell null, empty and repeated instances apart
// (Dremel reassembly).
type Node struct {
	Kind NodeKind
	// Key is the field's `,"name":`, pre-encoded: a field after another
	// writes all of it, the first all but the comma.
	Key encode.FieldKeyBytes
	// Leaf is the column of a primitive.
	Leaf *column.Leaf
	// First is the first leaf under the node; its levels decide whether an
	// instance is null, empty or has more elements.
	First *column.Leaf
	// leaves are every leaf under the node, advanced together when an
	// instance is null or empty.
	leaves []*column.Leaf
	// Extra are leaves read only to learn whether a struct is null (all of
	// its own fields are absent from the file); they are skipped after the
	// struct's fields are written.
	Extra []*column.Leaf
	// Def is the definition level at which the node is present.
	Def int
	// Rep is the repetition level at which an instance of the node starts.
	Rep int
	// ElemDef and ElemRep are, for lists and maps, the levels of the
	// repeated group: Def >= ElemDef means at least one element, and a value
	// with repetition level ElemRep starts the next element.
	ElemDef, ElemRep int
	// Children are a struct's fields, a list's element, a map's key and value.
	Children []*Node
	// StringKeys is true for a map whose keys are strings (a JSON object).
	StringKeys bool
	// Value is the pre-encoded JSON of a NodeConst: null, an identity
	// partition value or the field's initial-default; Invalid says that it
	// replaced invalid UTF-8.
	Value   []byte
	Invalid bool
	// Variant is a NodeVariant's columns.
	Variant *VariantColumn
}

// Resolver matches an Iceberg schema to the columns of one Parquet file by
// field id: the ids the file carries, or those the table's name mapping
// gives its column names when it carries none.
type Resolver struct {
	Path   string
	Leaves map[int]*column.Leaf // by leaf column index, so each column is read once
	Order  []*column.Leaf
	// ids are the field ids of the file's columns from the name mapping;
	// nil when the file carries its own.
	ids map[*parquet.Column]int
	// Identity holds the identity-partition values of the data file by
	// source field id; Enc encodes them and the initial defaults.
	Identity map[int]json.RawMessage
	Enc      encode.Options
}

// NewResolver returns a resolver for the Parquet file at path with the
// given root; a file without field ids resolves through nm, and fails with
// readerr.ErrNoFieldIDs when there is no mapping either.
func NewResolver(path string, root *parquet.Column, nm iceberg.NameMapping) (*Resolver, error) {
	r := &Resolver{Path: path, Leaves: map[int]*column.Leaf{}}
	if hasFieldIDs(root) {
		return r, nil
	}
	if len(nm) == 0 {
		return nil, fmt.Errorf("resolve columns of %s: %w, and the table has no name mapping (schema.name-mapping.default)",
			path, readerr.ErrNoFieldIDs)
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
	rc := RepeatedChild(c)
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

// ID returns the field id of column c, or -1 when it has none.
func (r *Resolver) ID(c *parquet.Column) int {
	if r.ids == nil {
		return c.ID()
	}
	if id, ok := r.ids[c]; ok {
		return id
	}
	return -1
}

// Child returns the child of group c with field id id, or nil.
func (r *Resolver) Child(c *parquet.Column, id int) *parquet.Column {
	for _, child := range c.Columns() {
		if r.ID(child) == id {
			return child
		}
	}
	return nil
}

// AddLeaf registers a leaf column with the conversion vt; a column resolved
// twice (emitted and used as an equality key) is read once.
func (r *Resolver) AddLeaf(c *parquet.Column, vt encode.ValueType) *column.Leaf {
	if l, ok := r.Leaves[c.Index()]; ok {
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
	r.Leaves[l.Index] = l
	r.Order = append(r.Order, l)
	return l
}

// ResolveMember resolves a field of the table or of a struct, or a map's
// key or value, against column c: such a column repeats only as a list's
// element does (a footer that calls it repeated would make every row's
// value a list of them, or null).
func (r *Resolver) ResolveMember(f iceberg.NestedField, c *parquet.Column) (*Node, error) {
	if c != nil && c.Repeated() {
		return nil, r.Mismatch(f, c)
	}
	return r.resolveField(f, c)
}

// resolveField resolves one Iceberg field against column c (nil when the
// file has no column with the field's id). c may be repeated only as the
// element of a two-level list; resolveMember refuses it elsewhere.
func (r *Resolver) resolveField(f iceberg.NestedField, c *parquet.Column) (*Node, error) {
	n := &Node{Key: encode.NewFieldKeyBytes(f.Name)}
	if _, ok := f.Type.(iceberg.UnknownType); ok || c == nil {
		// The spec's order for a field the file lacks: the identity
		// partition value, then the initial default, then null. An
		// unknown-typed field is never read, whatever the file holds.
		k, err := r.Constant(f, ok)
		if err != nil {
			return nil, err
		}
		n.Value, n.Invalid = k.json, k.invalid
		return n, nil
	}
	n.Def = c.MaxDefinitionLevel()
	n.Rep = c.MaxRepetitionLevel()
	switch t := f.Type.(type) {
	case iceberg.VariantType:
		return r.resolveVariant(f, c, n)
	case *iceberg.StructType:
		if c.Leaf() || c.Repeated() {
			return nil, r.Mismatch(f, c)
		}
		n.Kind = NodeStruct
		for _, cf := range t.FieldList {
			child, err := r.ResolveMember(cf, r.Child(c, cf.ID))
			if err != nil {
				return nil, err
			}
			n.Children = append(n.Children, child)
			n.leaves = append(n.leaves, child.leaves...)
		}
		if len(n.leaves) == 0 {
			// None of the struct's fields is in the file, but the struct
			// itself is: read one of its columns to learn when it is null.
			p := FirstLeafColumn(c)
			if p == nil {
				return nil, r.Mismatch(f, c)
			}
			l := r.AddLeaf(p, encode.ValueType{Conv: encode.ConvNull})
			n.leaves = []*column.Leaf{l}
			n.Extra = []*column.Leaf{l}
		}
		n.First = n.leaves[0]
		return n, nil
	case *iceberg.ListType:
		rc, elem, err := r.listColumns(f, c)
		if err != nil {
			return nil, err
		}
		n.Kind = NodeList
		n.ElemDef, n.ElemRep = rc.MaxDefinitionLevel(), rc.MaxRepetitionLevel()
		en, err := r.resolveField(t.ElementField(), elem)
		if err != nil {
			return nil, err
		}
		if len(en.leaves) == 0 {
			return nil, r.Mismatch(f, c)
		}
		n.Children = []*Node{en}
		n.leaves = en.leaves
		n.First = n.leaves[0]
		return n, nil
	case *iceberg.MapType:
		kv := RepeatedChild(c)
		if kv == nil || kv.Leaf() || len(kv.Columns()) != 2 {
			return nil, r.Mismatch(f, c)
		}
		n.Kind = NodeMap
		n.ElemDef, n.ElemRep = kv.MaxDefinitionLevel(), kv.MaxRepetitionLevel()
		kc, vc := r.Child(kv, t.KeyID), r.Child(kv, t.ValueID)
		if kc == nil || vc == nil {
			// Ids are missing inside the map: key and value are positional.
			kc, vc = kv.Columns()[0], kv.Columns()[1]
		}
		kn, err := r.ResolveMember(t.KeyField(), kc)
		if err != nil {
			return nil, err
		}
		vn, err := r.ResolveMember(t.ValueField(), vc)
		if err != nil {
			return nil, err
		}
		if len(kn.leaves) == 0 {
			return nil, r.Mismatch(f, c)
		}
		_, n.StringKeys = t.KeyType.(iceberg.StringType)
		if n.StringKeys && kn.Kind != NodePrimitive {
			n.StringKeys = false
		}
		n.Children = []*Node{kn, vn}
		n.leaves = append(append([]*column.Leaf(nil), kn.leaves...), vn.leaves...)
		n.First = n.leaves[0]
		return n, nil
	default:
		if !c.Leaf() {
			return nil, r.Mismatch(f, c)
		}
		vt, err := r.ValueTypeOf(f, c)
		if err != nil {
			return nil, err
		}
		n.Kind = NodePrimitive
		n.Leaf = r.AddLeaf(c, vt)
		n.leaves = []*column.Leaf{n.Leaf}
		n.First = n.Leaf
		return n, nil
	}
}

// listColumns finds the repeated group and the element column of a list,
// following the Parquet LIST backward-compatibility rules that Iceberg
// applies to files written by older engines (two-level lists).
func (r *Resolver) listColumns(f iceberg.NestedField, c *parquet.Column) (rc, elem *parquet.Column, err error) {
	if c.Leaf() || c.Repeated() {
		return nil, nil, fmt.Errorf("%w: column %s of %s for list field %d (%s) is not a LIST group",
			readerr.ErrUnsupported, strings.Join(c.Path(), "."), r.Path, f.ID, f.Name)
	}
	rc = RepeatedChild(c)
	if rc == nil {
		return nil, nil, r.Mismatch(f, c)
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

// RepeatedChild returns the single repeated child of a LIST or MAP group.
func RepeatedChild(c *parquet.Column) *parquet.Column {
	if c.Leaf() || len(c.Columns()) != 1 || !c.Columns()[0].Repeated() {
		return nil
	}
	return c.Columns()[0]
}

// FirstLeafColumn returns the first leaf column under c.
func FirstLeafColumn(c *parquet.Column) *parquet.Column {
	if c.Leaf() {
		return c
	}
	for _, child := range c.Columns() {
		if l := FirstLeafColumn(child); l != nil {
			return l
		}
	}
	return nil
}

func (r *Resolver) Mismatch(f iceberg.NestedField, c *parquet.Column) error {
	return fmt.Errorf("%w: column %s of %s (field id %d) cannot be read as %s %s",
		readerr.ErrSchemaMismatch, strings.Join(c.Path(), "."), r.Path, f.ID, f.Name, f.Type)
}

// ValueTypeOf picks the conversion of leaf column c to the Iceberg type of
// f; without a column (nil c), and for an unknown f, the value is null.
func (r *Resolver) ValueTypeOf(f iceberg.NestedField, c *parquet.Column) (encode.ValueType, error) {
	if _, ok := f.Type.(iceberg.UnknownType); ok || c == nil {
		return encode.ValueType{Conv: encode.ConvNull}, nil
	}
	kind := c.Type().Kind()
	lt := c.Type().LogicalType()
	if _, null := LogicalValue(lt).(*format.NullType); null {
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
		if r.Enc.GeoWKB {
			vt.Conv = encode.ConvBase64
		}
	case iceberg.DecimalType:
		vt.Scale = t.Scale()
		if lt != nil {
			if d, isDec := lt.Value.(*format.DecimalType); isDec && int(d.Scale) != t.Scale() {
				return encode.ValueType{}, r.Mismatch(f, c)
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
		return encode.ValueType{}, fmt.Errorf("%w: field %d (%s) has type %s", readerr.ErrUnsupported, f.ID, f.Name, f.Type)
	}
	if !ok {
		return encode.ValueType{}, r.Mismatch(f, c)
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
		if _, isDate := LogicalValue(lt).(*format.DateType); lt == nil || isDate {
			return encode.ValueType{Conv: encode.ConvDateTimestamp, Nanos: nanos}, true
		}
	}
	return encode.ValueType{}, false
}

// LogicalValue returns the logical type of a column, or nil.
func LogicalValue(lt *format.LogicalType) format.LogicalTypeValue {
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

// Skip consumes a null or empty instance of n from all of its leaves.
func (n *Node) Skip() {
	for _, l := range n.leaves {
		l.Skip(n.Rep)
	}
}

// FindColumn finds the leaf or group with field id id, looking through
// structs but not into lists and maps (equality fields are never inside
// them).
func (r *Resolver) FindColumn(c *parquet.Column, id int) *parquet.Column {
	for _, child := range c.Columns() {
		if r.ID(child) == id {
			return child
		}
		if !child.Leaf() && !child.Repeated() && RepeatedChild(child) == nil {
			if found := r.FindColumn(child, id); found != nil {
				return found
			}
		}
	}
	return nil
}
