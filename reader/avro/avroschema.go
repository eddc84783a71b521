package avro

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/avro"

	"github.com/druidiceberg/sidecar/reader/readerr"
)

// An Avro file's schema is turned into the Parquet schema that Iceberg
// would write for the same fields, field ids included (the Avro schema
// carries them as "field-id", "element-id", "key-id" and "value-id"
// attributes), so that the columns of an Avro file are resolved against
// the table schema by the same resolver as a Parquet file's: schema
// evolution, name mapping, defaults and identity partition values alike.
// The records are then decoded straight into that schema's leaves by a
// program compiled from the nodes (avrodecode.go).
//
// The mapping is the Iceberg spec's (Avro section), read backwards:
//
//	boolean, int, long, float, double   BOOLEAN, INT32, INT64, FLOAT, DOUBLE
//	int date, int time-millis           INT32 DATE, INT32 TIME(millis)
//	long time-micros, timestamp-*       INT64 TIME(micros), INT64 TIMESTAMP(unit)
//	string, enum                        BYTE_ARRAY STRING
//	bytes, fixed(L)                     BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY(L)
//	bytes or fixed decimal(P,S)         DECIMAL(P,S) on the same carrier
//	fixed(16) uuid                      FIXED_LEN_BYTE_ARRAY(16) UUID
//	record                              group
//	array                               LIST (element-id)
//	map                                 MAP with string keys (key-id, value-id)
//	array of key/value records "map"    MAP (the key and value fields' ids)
//	union of null and T                 optional T
//	null                                an optional column that is always null

// avroKind is the shape of one node of an Avro schema as it is shredded.
type avroKind uint8

const (
	avroLeaf     avroKind = iota // one leaf column
	avroRecord                   // a group of fields
	avroList                     // an array: one repeated element
	avroMap                      // an Avro map: string keys, in key order
	avroKVList                   // an array of key/value records (Iceberg's map with other keys)
	avroNullOnly                 // the null type: a leaf column that is always null
)

// avroWire is how a leaf's value is encoded in an Avro record.
type avroWire uint8

const (
	wireNull   avroWire = iota // nothing: the null type
	wireBool                   // one byte
	wireInt                    // a zigzag varint of 32 bits: int, date, time-millis
	wireLong                   // a zigzag varint of 64 bits: long, time-micros, timestamps
	wireFloat                  // 4 bytes, little-endian
	wireDouble                 // 8 bytes, little-endian
	wireBytes                  // a length, then the bytes: string, bytes
	wireFixed                  // size bytes
	wireEnum                   // a symbol's index, as an int
)

// avroNode is one node of an Avro file's schema, with the Parquet column
// its values are decoded into.
type avroNode struct {
	kind avroKind
	// wire is how a leaf's value is encoded; size is a fixed's byte count,
	// symbols an enum's.
	wire    avroWire
	size    int
	symbols []string
	// branches is the number of branches of the union the node is read
	// through (0 when it is not a union), null the branch that holds null
	// (-1: none).
	branches, null int
	// min is the fewest bytes a value of the node takes (for a union, its
	// branch index included), which bounds the counts of arrays and maps of
	// it; width is the bytes every value takes, -1 when they differ.
	min, width int
	// name is a record field's name, the name of its Parquet column.
	name string
	// optional is true for a union of null and the node's type.
	optional bool
	// children are a record's fields, a list's element, a map's key and
	// value.
	children []*avroNode
	// what names the node in errors.
	what string

	// Set from the node's column once the Parquet schema is built: def is
	// the definition level at which the node holds a value (its column's
	// maximum), elemRep the repetition level of a list's or map's next
	// element, and leaves the column indexes of every leaf under the node.
	def     int
	elemRep int
	leaves  []int
}

// avroSchema converts the record schema of an Avro file.
type avroSchema struct {
	// named are the named types (records, fixed, enums) defined so far, by
	// full name and by short name, for references to them.
	named map[string]*avro.SchemaNode
	// depth guards against recursive records, which Iceberg never writes.
	depth int
}

// maxAvroDepth bounds the nesting of an Avro schema (recursive types
// included) that a file may declare.
const maxAvroDepth = 64

// avroColumns returns the Parquet root column and the shredding plan of the
// Avro record schema s: the plan's nodes are the record's fields.
func avroColumns(s *avro.Schema) (_ *parquet.Column, _ []*avroNode, err error) {
	root := s.Root()
	if root.Type != "record" {
		return nil, nil, fmt.Errorf("%w: the file's schema is %s, not a record", readerr.ErrCorruptFile, root.Type)
	}
	conv := &avroSchema{named: map[string]*avro.SchemaNode{}}
	conv.define(root)
	group, fields, err := conv.record(root, "")
	if err != nil {
		return nil, nil, err
	}
	// The Parquet schema becomes columns (with their levels and indexes)
	// only in a file: write an empty one and open it.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the file's schema has no Parquet equivalent: %v", readerr.ErrUnsupported, r)
		}
	}()
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.NewSchema("avro", group))
	if err := w.Close(); err != nil {
		return nil, nil, fmt.Errorf("%w: the file's schema has no Parquet equivalent: %w", readerr.ErrUnsupported, err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the file's schema has no Parquet equivalent: %w", readerr.ErrUnsupported, err)
	}
	col := pf.Root()
	byName := columnsByName(col)
	for _, f := range fields {
		if err := f.attach(byName[f.name]); err != nil {
			return nil, nil, err
		}
	}
	return col, fields, nil
}

// columnsByName indexes the child columns of c by name: parquet's
// Column.Column scans them, which for every field of a record of n fields
// cost time in n squared (a file's schema of 20,000 fields took seconds,
// one of the millions its header can hold, hours).
func columnsByName(c *parquet.Column) map[string]*parquet.Column {
	children := c.Columns()
	m := make(map[string]*parquet.Column, len(children))
	for _, ch := range children {
		m[ch.Name()] = ch
	}
	return m
}

// define records the named types defined in n (and under it), so that a
// later reference by name finds them.
func (c *avroSchema) define(n *avro.SchemaNode) {
	switch n.Type {
	case "record", "error", "fixed", "enum":
		if n.Name != "" {
			if _, ok := c.named[n.Name]; !ok {
				c.named[n.Name] = n
			}
			if n.Namespace != "" && !strings.Contains(n.Name, ".") {
				c.named[n.Namespace+"."+n.Name] = n
			}
			if i := strings.LastIndexByte(n.Name, '.'); i >= 0 {
				if _, ok := c.named[n.Name[i+1:]]; !ok {
					c.named[n.Name[i+1:]] = n
				}
			}
		}
	}
	for i := range n.Fields {
		c.define(&n.Fields[i].Type)
	}
	for i := range n.Branches {
		c.define(&n.Branches[i])
	}
	if n.Items != nil {
		c.define(n.Items)
	}
	if n.Values != nil {
		c.define(n.Values)
	}
}

// resolve follows a reference to a named type.
func (c *avroSchema) resolve(n *avro.SchemaNode) (*avro.SchemaNode, error) {
	switch n.Type {
	case "null", "boolean", "int", "long", "float", "double", "bytes", "string",
		"record", "error", "enum", "array", "map", "fixed", "union":
		return n, nil
	}
	if d, ok := c.named[n.Type]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: the file's schema names an undefined type %q", readerr.ErrCorruptFile, n.Type)
}

// record converts the fields of a record.
func (c *avroSchema) record(n *avro.SchemaNode, what string) (parquet.Group, []*avroNode, error) {
	group := parquet.Group{}
	var fields []*avroNode
	for i := range n.Fields {
		f := &n.Fields[i]
		name := f.Name
		if what != "" {
			name = what + "." + f.Name
		}
		pn, an, err := c.node(&f.Type, name)
		if err != nil {
			return nil, nil, err
		}
		if id, ok := intProp(f.Props, "field-id"); ok {
			pn = parquet.FieldID(pn, id)
		}
		an.name = f.Name
		group[f.Name] = pn
		fields = append(fields, an)
	}
	return group, fields, nil
}

// node converts one Avro type; what names it in errors.
func (c *avroSchema) node(n *avro.SchemaNode, what string) (parquet.Node, *avroNode, error) {
	if c.depth++; c.depth > maxAvroDepth {
		return nil, nil, fmt.Errorf("%w: the file's schema nests deeper than %d at %s", readerr.ErrUnsupported, maxAvroDepth, what)
	}
	defer func() { c.depth-- }()
	n, err := c.resolve(n)
	if err != nil {
		return nil, nil, err
	}
	if n.Type == "union" {
		var nonNull []avro.SchemaNode
		for _, b := range n.Branches {
			if b.Type != "null" {
				nonNull = append(nonNull, b)
			}
		}
		switch {
		case len(nonNull) == 0:
			an := &avroNode{kind: avroNullOnly, optional: true, what: what, branches: len(n.Branches), null: 0}
			an.min, an.width = 1, -1
			return parquet.Optional(parquet.Leaf(parquet.Int32Type)), an, nil
		case len(nonNull) > 1 || len(n.Branches) > 2:
			return nil, nil, fmt.Errorf("%w: column %s is an Avro union of %d types; Iceberg writes only a union of null and one type",
				readerr.ErrUnsupported, what, len(n.Branches))
		}
		pn, an, err := c.node(&nonNull[0], what)
		if err != nil {
			return nil, nil, err
		}
		an.optional = true
		an.branches, an.null = len(n.Branches), slices.IndexFunc(n.Branches, func(b avro.SchemaNode) bool { return b.Type == "null" })
		// The branch index takes a byte at least, and a null nothing more.
		valueMin := an.min
		an.min, an.width = 1, -1
		if an.null < 0 {
			an.min = satAdd(1, valueMin)
		}
		return parquet.Optional(pn), an, nil
	}
	an := &avroNode{kind: avroLeaf, what: what, null: -1}
	pn, err := c.typed(n, an)
	if err != nil {
		return nil, nil, err
	}
	an.min, an.width = an.sizes()
	return pn, an, nil
}

// typed converts an Avro type that is not a union into an, and returns
// its Parquet node.
func (c *avroSchema) typed(n *avro.SchemaNode, an *avroNode) (parquet.Node, error) {
	what := an.what
	switch n.Type {
	case "null":
		an.kind, an.optional, an.wire = avroNullOnly, true, wireNull
		return parquet.Optional(parquet.Leaf(parquet.Int32Type)), nil
	case "boolean":
		an.wire = wireBool
		return parquet.Required(parquet.Leaf(parquet.BooleanType)), nil
	case "int":
		an.wire = wireInt
		switch n.LogicalType {
		case "date":
			return parquet.Required(parquet.Date()), nil
		case "time-millis":
			return parquet.Required(parquet.Time(parquet.Millisecond)), nil
		}
		return parquet.Required(parquet.Leaf(parquet.Int32Type)), nil
	case "long":
		an.wire = wireLong
		switch n.LogicalType {
		case "time-micros":
			return parquet.Required(parquet.Time(parquet.Microsecond)), nil
		case "timestamp-millis", "local-timestamp-millis":
			return parquet.Required(parquet.Timestamp(parquet.Millisecond)), nil
		case "timestamp-micros", "local-timestamp-micros":
			return parquet.Required(parquet.Timestamp(parquet.Microsecond)), nil
		case "timestamp-nanos", "local-timestamp-nanos":
			return parquet.Required(parquet.Timestamp(parquet.Nanosecond)), nil
		}
		return parquet.Required(parquet.Leaf(parquet.Int64Type)), nil
	case "float":
		an.wire = wireFloat
		return parquet.Required(parquet.Leaf(parquet.FloatType)), nil
	case "double":
		an.wire = wireDouble
		return parquet.Required(parquet.Leaf(parquet.DoubleType)), nil
	case "string":
		an.wire = wireBytes
		return parquet.Required(parquet.String()), nil
	case "enum":
		an.wire, an.symbols = wireEnum, n.Symbols
		return parquet.Required(parquet.String()), nil
	case "bytes":
		an.wire = wireBytes
		if n.LogicalType == "decimal" {
			return parquet.Required(parquet.Decimal(n.Scale, n.Precision, parquet.ByteArrayType)), nil
		}
		return parquet.Required(parquet.Leaf(parquet.ByteArrayType)), nil
	case "fixed":
		an.wire, an.size = wireFixed, n.Size
		switch {
		case n.Size <= 0:
			return nil, fmt.Errorf("%w: column %s is a fixed of %d bytes", readerr.ErrCorruptFile, what, n.Size)
		case n.LogicalType == "decimal":
			return parquet.Required(parquet.Decimal(n.Scale, n.Precision, parquet.FixedLenByteArrayType(n.Size))), nil
		case n.LogicalType == "uuid" && n.Size == 16:
			return parquet.Required(parquet.UUID()), nil
		}
		return parquet.Required(parquet.Leaf(parquet.FixedLenByteArrayType(n.Size))), nil
	case "record", "error":
		group, fields, err := c.record(n, what)
		if err != nil {
			return nil, err
		}
		an.kind, an.children = avroRecord, fields
		return parquet.Required(group), nil
	case "array":
		if n.Items == nil {
			return nil, fmt.Errorf("%w: column %s is an array without items", readerr.ErrCorruptFile, what)
		}
		items, err := c.resolve(n.Items)
		if err != nil {
			return nil, err
		}
		if n.LogicalType == "map" && items.Type == "record" && len(items.Fields) == 2 {
			return c.kvList(items, an)
		}
		pe, ae, err := c.node(n.Items, what+".element")
		if err != nil {
			return nil, err
		}
		if id, ok := intProp(n.Props, "element-id"); ok {
			pe = parquet.FieldID(pe, id)
		}
		an.kind, an.children = avroList, []*avroNode{ae}
		return parquet.Required(parquet.List(pe)), nil
	case "map":
		if n.Values == nil {
			return nil, fmt.Errorf("%w: column %s is a map without values", readerr.ErrCorruptFile, what)
		}
		pk := parquet.Node(parquet.String())
		if id, ok := intProp(n.Props, "key-id"); ok {
			pk = parquet.FieldID(pk, id)
		}
		pv, av, err := c.node(n.Values, what+".value")
		if err != nil {
			return nil, err
		}
		if id, ok := intProp(n.Props, "value-id"); ok {
			pv = parquet.FieldID(pv, id)
		}
		key := &avroNode{kind: avroLeaf, what: what + ".key", wire: wireBytes, null: -1}
		key.min, key.width = key.sizes()
		an.kind, an.children = avroMap, []*avroNode{key, av}
		return parquet.Required(parquet.Map(pk, pv)), nil
	}
	return nil, fmt.Errorf("%w: column %s has the Avro type %q", readerr.ErrUnsupported, what, n.Type)
}

// kvList converts into an Iceberg's map with keys other than strings: an
// array of records of a key and a value field, each with its field id.
func (c *avroSchema) kvList(rec *avro.SchemaNode, an *avroNode) (parquet.Node, error) {
	var pn [2]parquet.Node
	var kv [2]*avroNode
	for i := range rec.Fields {
		f := &rec.Fields[i]
		var err error
		if pn[i], kv[i], err = c.node(&f.Type, an.what+"."+f.Name); err != nil {
			return nil, err
		}
		if id, ok := intProp(f.Props, "field-id"); ok {
			pn[i] = parquet.FieldID(pn[i], id)
		}
		kv[i].name = f.Name
	}
	if kv[0].optional {
		return nil, fmt.Errorf("%w: column %s is a map with optional keys", readerr.ErrCorruptFile, an.what)
	}
	an.kind, an.children = avroKVList, []*avroNode{kv[0], kv[1]}
	return parquet.Required(parquet.Map(pn[0], pn[1])), nil
}

// sizes returns the fewest bytes a value of n (not read through a union)
// takes, and the bytes every value takes (-1 when they differ).
func (n *avroNode) sizes() (least, width int) {
	switch n.kind {
	case avroNullOnly:
		return 0, 0
	case avroRecord:
		for _, c := range n.children {
			least = satAdd(least, c.min)
			if width >= 0 && c.width >= 0 {
				width = satAdd(width, c.width)
			} else {
				width = -1
			}
		}
		return least, width
	case avroList, avroKVList, avroMap:
		return 1, -1 // an empty one is its end marker, a 0
	}
	switch n.wire {
	case wireBool:
		return 1, 1
	case wireFloat:
		return 4, 4
	case wireDouble:
		return 8, 8
	case wireFixed:
		return n.size, n.size
	}
	return 1, -1 // a varint, or a length and the bytes
}

// satAdd adds sizes, saturating far past any block's bytes.
func satAdd(a, b int) int { return min(a+b, 1<<40) }

// attach sets the column of n, and of the nodes under it, from c, the
// column its Parquet node became.
func (n *avroNode) attach(c *parquet.Column) error {
	if c == nil {
		return fmt.Errorf("%w: no column for %s", readerr.ErrUnsupported, n.what)
	}
	n.def = c.MaxDefinitionLevel()
	switch n.kind {
	case avroLeaf, avroNullOnly:
		n.leaves = []int{c.Index()}
		return nil
	case avroRecord:
		byName := columnsByName(c)
		for _, ch := range n.children {
			if err := ch.attach(byName[ch.name]); err != nil {
				return err
			}
			n.leaves = append(n.leaves, ch.leaves...)
		}
		return nil
	}
	// A LIST or MAP group: its one repeated child holds the element, or
	// the key and the value.
	cs := c.Columns()
	if c.Leaf() || len(cs) != 1 || !cs[0].Repeated() {
		return fmt.Errorf("%w: no repeated column for %s", readerr.ErrUnsupported, n.what)
	}
	rc := cs[0]
	n.elemRep = rc.MaxRepetitionLevel()
	names := []string{"element"}
	if n.kind != avroList {
		names = []string{"key", "value"}
	}
	for i, ch := range n.children {
		if err := ch.attach(rc.Column(names[i])); err != nil {
			return err
		}
		n.leaves = append(n.leaves, ch.leaves...)
	}
	return nil
}

// intProp returns an integer attribute of an Avro schema node, such as its
// field id.
func intProp(props map[string]any, key string) (int, bool) {
	switch v := props[key].(type) {
	case int64:
		return int(v), v >= 0 && v <= 1<<31-1
	case float64:
		return int(v), v == float64(int64(v)) && v >= 0 && v <= 1<<31-1
	}
	return 0, false
}
