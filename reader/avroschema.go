package reader

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/avro"
)

// An Avro file's schema is turned into the Parquet schema that Iceberg
// would write for the same fields, field ids included (the Avro schema
// carries them as "field-id", "element-id", "key-id" and "value-id"
// attributes), so that the columns of an Avro file are resolved against
// the table schema by the same resolver as a Parquet file's: schema
// evolution, name mapping, defaults and identity partition values alike.
// The records are then shredded into that schema's leaves (avrorows.go).
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

// avroNode is one node of an Avro file's schema, with the Parquet column
// its values are shredded into.
type avroNode struct {
	kind avroKind
	// name is a record field's name, the key of its value in the decoded
	// record.
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
	// element, leaves the column indexes of every leaf under the node, and
	// phys a leaf's physical type.
	def     int
	elemRep int
	leaves  []int
	phys    parquet.Kind
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
		return nil, nil, fmt.Errorf("%w: the file's schema is %s, not a record", ErrCorruptFile, root.Type)
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
			err = fmt.Errorf("%w: the file's schema has no Parquet equivalent: %v", ErrUnsupported, r)
		}
	}()
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.NewSchema("avro", group))
	if err := w.Close(); err != nil {
		return nil, nil, fmt.Errorf("%w: the file's schema has no Parquet equivalent: %w", ErrUnsupported, err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the file's schema has no Parquet equivalent: %w", ErrUnsupported, err)
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
	return nil, fmt.Errorf("%w: the file's schema names an undefined type %q", ErrCorruptFile, n.Type)
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
		return nil, nil, fmt.Errorf("%w: the file's schema nests deeper than %d at %s", ErrUnsupported, maxAvroDepth, what)
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
			return parquet.Optional(parquet.Leaf(parquet.Int32Type)), &avroNode{kind: avroNullOnly, optional: true, what: what}, nil
		case len(nonNull) > 1 || len(n.Branches) > 2:
			return nil, nil, fmt.Errorf("%w: column %s is an Avro union of %d types; Iceberg writes only a union of null and one type",
				ErrUnsupported, what, len(n.Branches))
		}
		pn, an, err := c.node(&nonNull[0], what)
		if err != nil {
			return nil, nil, err
		}
		an.optional = true
		return parquet.Optional(pn), an, nil
	}
	an := &avroNode{kind: avroLeaf, what: what}
	switch n.Type {
	case "null":
		an.kind, an.optional = avroNullOnly, true
		return parquet.Optional(parquet.Leaf(parquet.Int32Type)), an, nil
	case "boolean":
		return parquet.Required(parquet.Leaf(parquet.BooleanType)), an, nil
	case "int":
		switch n.LogicalType {
		case "date":
			return parquet.Required(parquet.Date()), an, nil
		case "time-millis":
			return parquet.Required(parquet.Time(parquet.Millisecond)), an, nil
		}
		return parquet.Required(parquet.Leaf(parquet.Int32Type)), an, nil
	case "long":
		switch n.LogicalType {
		case "time-micros":
			return parquet.Required(parquet.Time(parquet.Microsecond)), an, nil
		case "timestamp-millis", "local-timestamp-millis":
			return parquet.Required(parquet.Timestamp(parquet.Millisecond)), an, nil
		case "timestamp-micros", "local-timestamp-micros":
			return parquet.Required(parquet.Timestamp(parquet.Microsecond)), an, nil
		case "timestamp-nanos", "local-timestamp-nanos":
			return parquet.Required(parquet.Timestamp(parquet.Nanosecond)), an, nil
		}
		return parquet.Required(parquet.Leaf(parquet.Int64Type)), an, nil
	case "float":
		return parquet.Required(parquet.Leaf(parquet.FloatType)), an, nil
	case "double":
		return parquet.Required(parquet.Leaf(parquet.DoubleType)), an, nil
	case "string", "enum":
		return parquet.Required(parquet.String()), an, nil
	case "bytes":
		if n.LogicalType == "decimal" {
			return parquet.Required(parquet.Decimal(n.Scale, n.Precision, parquet.ByteArrayType)), an, nil
		}
		return parquet.Required(parquet.Leaf(parquet.ByteArrayType)), an, nil
	case "fixed":
		switch {
		case n.Size <= 0:
			return nil, nil, fmt.Errorf("%w: column %s is a fixed of %d bytes", ErrCorruptFile, what, n.Size)
		case n.LogicalType == "decimal":
			return parquet.Required(parquet.Decimal(n.Scale, n.Precision, parquet.FixedLenByteArrayType(n.Size))), an, nil
		case n.LogicalType == "uuid" && n.Size == 16:
			return parquet.Required(parquet.UUID()), an, nil
		}
		return parquet.Required(parquet.Leaf(parquet.FixedLenByteArrayType(n.Size))), an, nil
	case "record", "error":
		group, fields, err := c.record(n, what)
		if err != nil {
			return nil, nil, err
		}
		an.kind, an.children = avroRecord, fields
		return parquet.Required(group), an, nil
	case "array":
		if n.Items == nil {
			return nil, nil, fmt.Errorf("%w: column %s is an array without items", ErrCorruptFile, what)
		}
		items, err := c.resolve(n.Items)
		if err != nil {
			return nil, nil, err
		}
		if n.LogicalType == "map" && items.Type == "record" && len(items.Fields) == 2 {
			return c.kvList(items, what)
		}
		pe, ae, err := c.node(n.Items, what+".element")
		if err != nil {
			return nil, nil, err
		}
		if id, ok := intProp(n.Props, "element-id"); ok {
			pe = parquet.FieldID(pe, id)
		}
		an.kind, an.children = avroList, []*avroNode{ae}
		return parquet.Required(parquet.List(pe)), an, nil
	case "map":
		if n.Values == nil {
			return nil, nil, fmt.Errorf("%w: column %s is a map without values", ErrCorruptFile, what)
		}
		pk := parquet.Node(parquet.String())
		if id, ok := intProp(n.Props, "key-id"); ok {
			pk = parquet.FieldID(pk, id)
		}
		pv, av, err := c.node(n.Values, what+".value")
		if err != nil {
			return nil, nil, err
		}
		if id, ok := intProp(n.Props, "value-id"); ok {
			pv = parquet.FieldID(pv, id)
		}
		an.kind, an.children = avroMap, []*avroNode{{kind: avroLeaf, what: what + ".key"}, av}
		return parquet.Required(parquet.Map(pk, pv)), an, nil
	}
	return nil, nil, fmt.Errorf("%w: column %s has the Avro type %q", ErrUnsupported, what, n.Type)
}

// kvList converts Iceberg's map with keys other than strings: an array of
// records of a key and a value field, each with its field id.
func (c *avroSchema) kvList(rec *avro.SchemaNode, what string) (parquet.Node, *avroNode, error) {
	var pn [2]parquet.Node
	var an [2]*avroNode
	for i := range rec.Fields {
		f := &rec.Fields[i]
		var err error
		if pn[i], an[i], err = c.node(&f.Type, what+"."+f.Name); err != nil {
			return nil, nil, err
		}
		if id, ok := intProp(f.Props, "field-id"); ok {
			pn[i] = parquet.FieldID(pn[i], id)
		}
		an[i].name = f.Name
	}
	if an[0].optional {
		return nil, nil, fmt.Errorf("%w: column %s is a map with optional keys", ErrCorruptFile, what)
	}
	return parquet.Required(parquet.Map(pn[0], pn[1])),
		&avroNode{kind: avroKVList, what: what, children: []*avroNode{an[0], an[1]}}, nil
}

// attach sets the column of n, and of the nodes under it, from c, the
// column its Parquet node became.
func (n *avroNode) attach(c *parquet.Column) error {
	if c == nil {
		return fmt.Errorf("%w: no column for %s", ErrUnsupported, n.what)
	}
	n.def = c.MaxDefinitionLevel()
	switch n.kind {
	case avroLeaf, avroNullOnly:
		n.phys = c.Type().Kind()
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
	rc := repeatedChild(c)
	if rc == nil {
		return fmt.Errorf("%w: no repeated column for %s", ErrUnsupported, n.what)
	}
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
