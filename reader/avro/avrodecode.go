package avro

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
)

// An Avro file is decoded by a program compiled once per file from its
// schema (avroNode) and the leaves the stream reads (the projected
// columns, the residual filter's and the equality keys', found by field id
// or through the name mapping by the resolver, which also gives what the
// file lacks its initial default and promotes an int to a long or a float
// to a double). This is Avro's schema resolution (Java's
// ResolvingDecoder): the writer's schema read through the reader's, the
// Iceberg schema. For each record the program walks the writer's fields
// in order, decodes those a leaf reads straight into the leaf's batch
// (Parquet's levels and typed values, what the encoder reads) and skips
// the others by their lengths: a string or bytes by its length, a fixed
// by its size, an array or a map a block at a time (by the block's byte
// size when the writer gave one, as Java's BlockingBinaryEncoder does), a
// number without decoding it. Nothing is allocated per record.
//
// The counts of arrays and maps are held to the bytes left in the block
// (a value takes min bytes at least); values of no bytes (nulls) to
// maxAvroZeroByteItems an array, as github.com/twmb/avro does.

// maxAvroZeroByteItems bounds the items of an array whose items take no
// bytes (twmb/avro's maxZeroByteItems).
const maxAvroZeroByteItems = 4 << 10

// avroOp is the program's step for one node of the file's schema.
type avroOp struct {
	kind avroKind
	wire avroWire
	// skip is true when no leaf reads the node: its values are skipped.
	// flat is true for a leaf node read by a leaf without levels, not
	// through a union.
	skip, flat bool
	// branches and null are the node's union (see avroNode).
	branches, null int
	// leaf receives a leaf node's values.
	leaf *column.Leaf
	// leaves are the leaves read under the node, which a null or empty
	// value gives an entry.
	leaves  []*column.Leaf
	def     int // the definition level of a value of the node
	elemRep int // the repetition level of a list's or map's next element
	size    int // a fixed's bytes
	// min and width are the node's bytes (see avroNode); symbols an
	// enum's.
	min, width int
	symbols    [][]byte
	// children are a record's fields, a list's element, a map's key and
	// value.
	children []avroOp
	what     string
}

// compileAvro compiles the program of node n for the leaves in sinks.
func compileAvro(n *avroNode, sinks map[int]*column.Leaf) avroOp {
	op := avroOp{kind: n.kind, wire: n.wire, branches: n.branches, null: n.null, def: n.def, elemRep: n.elemRep,
		size: n.size, min: n.min, width: n.width, what: n.what}
	for _, s := range n.symbols {
		op.symbols = append(op.symbols, []byte(s))
	}
	for _, i := range n.leaves {
		if l := sinks[i]; l != nil {
			op.leaves = append(op.leaves, l)
		}
	}
	op.skip = len(op.leaves) == 0
	if n.kind == avroLeaf {
		op.leaf = sinks[n.leaves[0]]
		op.flat = op.leaf != nil && n.branches == 0 && op.leaf.MaxDef == 0 && op.leaf.MaxRep == 0
	}
	if len(n.children) > 0 {
		op.children = make([]avroOp, len(n.children))
		for i, c := range n.children {
			op.children[i] = compileAvro(c, sinks)
		}
	}
	return op
}

// avroDecoder decodes the records of one block.
type avroDecoder struct {
	buf []byte
	pos int
	// entries hold the entries of the maps being decoded, by depth.
	entries []avroEntry
}

// avroEntry is one entry of an Avro map: its key and where its value
// starts, as offsets in the block.
type avroEntry struct{ key, keyLen, value uint32 }

// record decodes one record of the block by the program prog.
func (d *avroDecoder) record(prog []avroOp) error {
	for i := range prog {
		op := &prog[i]
		if op.flat {
			// The common case, inlined: a number of a required column,
			// whose leaf has no levels. A damaged one is left to value,
			// which says what is wrong.
			b := &op.leaf.Batch
			switch op.wire {
			case wireLong:
				if v, err := d.long(); err == nil {
					b.Int64, b.N = append(b.Int64, v), b.N+1
					continue
				}
			case wireInt:
				if v, err := d.int(); err == nil {
					b.Int32, b.N = append(b.Int32, v), b.N+1
					continue
				}
			case wireDouble:
				if len(d.buf)-d.pos >= 8 {
					b.Double, b.N = append(b.Double, math.Float64frombits(le64(d.buf[d.pos:]))), b.N+1
					d.pos += 8
					continue
				}
			}
		}
		if err := d.value(op, 0); err != nil {
			return err
		}
	}
	return nil
}

// value decodes one value of op at repetition level rep.
func (d *avroDecoder) value(op *avroOp, rep int) error {
	if op.skip {
		return d.skip(op)
	}
	if null, err := d.isNull(op); null || err != nil {
		if err == nil {
			nulls(op.leaves, op.def-1, rep)
		}
		return err
	}
	switch op.kind {
	case avroLeaf:
		return d.leafValue(op, rep)
	case avroRecord:
		for i := range op.children {
			if err := d.value(&op.children[i], rep); err != nil {
				return err
			}
		}
		return nil
	case avroList, avroKVList:
		return d.list(op, rep)
	case avroMap:
		return d.mapValue(op, rep)
	}
	// avroNullOnly: the null type.
	nulls(op.leaves, op.def-1, rep)
	return nil
}

// isNull reads the branch of op's union, if it is one, and reports
// whether the value is null.
func (d *avroDecoder) isNull(op *avroOp) (bool, error) {
	if op.branches == 0 {
		return false, nil
	}
	i, err := d.int()
	if err != nil {
		return false, d.fail(op, err)
	}
	if i < 0 || int(i) >= op.branches {
		return false, d.fail(op, fmt.Errorf("union branch %d of %d", i, op.branches))
	}
	return int(i) == op.null || op.kind == avroNullOnly, nil
}

// nulls appends an entry without a value, at definition level def, to each
// of the leaves.
func nulls(leaves []*column.Leaf, def, rep int) {
	for _, l := range leaves {
		l.AppendEntry(def, rep)
	}
}

// leafValue decodes a primitive value into the op's leaf.
func (d *avroDecoder) leafValue(op *avroOp, rep int) error {
	l := op.leaf
	b := &l.Batch
	switch op.wire {
	case wireLong:
		v, err := d.long()
		if err != nil {
			return d.fail(op, err)
		}
		b.Int64 = append(b.Int64, v)
	case wireInt:
		v, err := d.int()
		if err != nil {
			return d.fail(op, err)
		}
		b.Int32 = append(b.Int32, v)
	case wireDouble:
		if len(d.buf)-d.pos < 8 {
			return d.fail(op, errBlockShort)
		}
		b.Double = append(b.Double, math.Float64frombits(le64(d.buf[d.pos:])))
		d.pos += 8
	case wireFloat:
		if len(d.buf)-d.pos < 4 {
			return d.fail(op, errBlockShort)
		}
		b.Float = append(b.Float, math.Float32frombits(le32(d.buf[d.pos:])))
		d.pos += 4
	case wireBool:
		if d.pos >= len(d.buf) {
			return d.fail(op, errBlockShort)
		}
		// Only 1 is true, as in Java's BinaryDecoder.
		b.Bool = append(b.Bool, d.buf[d.pos] == 1)
		d.pos++
	default:
		raw, err := d.bytesOf(op)
		if err != nil {
			return d.fail(op, err)
		}
		if len(b.Bytes)+len(raw) > math.MaxUint32 {
			return fmt.Errorf("column %s: values larger than 4 GiB in one chunk", op.what)
		}
		b.Refs = append(b.Refs, parquetpage.Ref{Off: uint32(len(b.Bytes)), Len: uint32(len(raw))})
		b.Bytes = append(b.Bytes, raw...)
	}
	l.AppendEntry(l.MaxDef, rep)
	return nil
}

// bytesOf decodes a string, bytes, fixed or enum value.
func (d *avroDecoder) bytesOf(op *avroOp) ([]byte, error) {
	switch op.wire {
	case wireFixed:
		if len(d.buf)-d.pos < op.size {
			return nil, errBlockShort
		}
		d.pos += op.size
		return d.buf[d.pos-op.size : d.pos], nil
	case wireEnum:
		i, err := d.int()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= len(op.symbols) {
			return nil, fmt.Errorf("enum symbol %d of %d", i, len(op.symbols))
		}
		return op.symbols[i], nil
	}
	n, err := d.length()
	if err != nil {
		return nil, err
	}
	d.pos += n
	return d.buf[d.pos-n : d.pos], nil
}

// list decodes an array: a list, or a map with keys other than strings.
func (d *avroDecoder) list(op *avroOp, rep int) error {
	items, first := int64(0), true
	for {
		count, err := d.blockCount(op, items, false)
		if err != nil {
			return err
		}
		if count == 0 {
			break
		}
		items += count
		for range count {
			r := op.elemRep
			if first {
				r, first = rep, false
			}
			for i := range op.children {
				if err := d.value(&op.children[i], r); err != nil {
					return err
				}
			}
		}
	}
	if first {
		nulls(op.leaves, op.def, rep)
	}
	return nil
}

// mapValue decodes an Avro map. Its entries are written in the byte order
// of their keys, and a key written twice keeps its last value: the
// documented order of an Avro map (docs/values.md). The entries are
// collected first (their values skipped), then sorted, then their values
// decoded where they lie.
func (d *avroDecoder) mapValue(op *avroOp, rep int) error {
	key, val := &op.children[0], &op.children[1]
	start, compacted := len(d.entries), 0
	for {
		count, err := d.blockCount(op, 0, false)
		if err != nil {
			return err
		}
		if count == 0 {
			break
		}
		for range count {
			n, err := d.length()
			if err != nil {
				return d.fail(key, err)
			}
			e := avroEntry{key: uint32(d.pos), keyLen: uint32(n)}
			d.pos += n
			e.value = uint32(d.pos)
			if err := d.skip(val); err != nil {
				return err
			}
			d.entries = append(d.entries, e)
			// Keys written again and again would hold an entry each: fold
			// them now and then.
			if n := len(d.entries) - start; n >= maxAvroZeroByteItems && n >= 2*compacted {
				compacted = d.sortEntries(start)
			}
		}
	}
	end := d.pos
	n := d.sortEntries(start)
	if n == 0 {
		nulls(op.leaves, op.def, rep)
	}
	for i := range n {
		e := d.entries[start+i]
		r := op.elemRep
		if i == 0 {
			r = rep
		}
		if l := key.leaf; l != nil {
			b := &l.Batch
			if len(b.Bytes)+int(e.keyLen) > math.MaxUint32 {
				return fmt.Errorf("column %s: values larger than 4 GiB in one chunk", key.what)
			}
			b.Refs = append(b.Refs, parquetpage.Ref{Off: uint32(len(b.Bytes)), Len: e.keyLen})
			b.Bytes = append(b.Bytes, d.buf[e.key:e.key+e.keyLen]...)
			l.AppendEntry(l.MaxDef, r)
		}
		d.pos = int(e.value)
		if err := d.value(val, r); err != nil {
			return err
		}
	}
	d.pos, d.entries = end, d.entries[:start]
	return nil
}

// sortEntries sorts the entries from start by key, keeps the last of each
// key, and returns how many are left.
func (d *avroDecoder) sortEntries(start int) int {
	es := d.entries[start:]
	keyOf := func(e avroEntry) []byte { return d.buf[e.key : e.key+e.keyLen] }
	slices.SortStableFunc(es, func(a, b avroEntry) int { return bytes.Compare(keyOf(a), keyOf(b)) })
	w := 0
	for i, e := range es {
		if i+1 < len(es) && bytes.Equal(keyOf(e), keyOf(es[i+1])) {
			continue
		}
		es[w] = e
		w++
	}
	d.entries = d.entries[:start+w]
	return w
}

// blockCount reads the count of the next block of an array or map of op,
// after items items; 0 at its end. A block with a byte size is skipped
// whole when skip is set.
func (d *avroDecoder) blockCount(op *avroOp, items int64, skip bool) (int64, error) {
	for {
		count, err := d.long()
		if err != nil {
			return 0, d.fail(op, err)
		}
		if count == 0 {
			return 0, nil
		}
		if count < 0 {
			if count = -count; count < 0 {
				return 0, d.fail(op, fmt.Errorf("a block of %d items", count))
			}
			size, err := d.long()
			if err != nil {
				return 0, d.fail(op, err)
			}
			if skip {
				if size < 0 || size > int64(len(d.buf)-d.pos) {
					return 0, d.fail(op, fmt.Errorf("a block of %d bytes, with %d left", size, len(d.buf)-d.pos))
				}
				d.pos += int(size)
				continue
			}
		}
		left := int64(len(d.buf) - d.pos)
		least := itemMin(op)
		switch {
		case least > 0 && count > left/int64(least):
			return 0, d.fail(op, fmt.Errorf("a block of %d items in %d bytes", count, left))
		case least == 0 && count > maxAvroZeroByteItems-items:
			return 0, d.fail(op, fmt.Errorf("more than %d items that take no bytes", maxAvroZeroByteItems))
		}
		return count, nil
	}
}

// itemMin is the fewest bytes an item of an array or map op takes.
func itemMin(op *avroOp) int {
	switch op.kind {
	case avroList:
		return op.children[0].min
	case avroMap:
		return satAdd(1, op.children[1].min) // the key's length, at least
	}
	return satAdd(op.children[0].min, op.children[1].min)
}

// skip moves past one value of op.
func (d *avroDecoder) skip(op *avroOp) error {
	if op.width >= 0 {
		if len(d.buf)-d.pos < op.width {
			return d.fail(op, errBlockShort)
		}
		d.pos += op.width
		return nil
	}
	if null, err := d.isNull(op); null || err != nil {
		return err
	}
	switch op.kind {
	case avroRecord:
		for i := range op.children {
			if err := d.skip(&op.children[i]); err != nil {
				return err
			}
		}
		return nil
	case avroList, avroKVList, avroMap:
		items := int64(0)
		for {
			count, err := d.blockCount(op, items, true)
			if err != nil || count == 0 {
				return err
			}
			items += count
			if w := itemWidth(op); w >= 0 {
				// count is held to the bytes left.
				d.pos += int(count) * w
				continue
			}
			for range count {
				if op.kind == avroMap {
					n, err := d.length()
					if err != nil {
						return d.fail(op, err)
					}
					d.pos += n
					if err := d.skip(&op.children[1]); err != nil {
						return err
					}
					continue
				}
				for i := range op.children {
					if err := d.skip(&op.children[i]); err != nil {
						return err
					}
				}
			}
		}
	case avroNullOnly:
		return nil
	}
	var err error
	switch op.wire {
	case wireInt, wireEnum:
		_, err = d.int()
	case wireLong:
		_, err = d.long()
	case wireBytes:
		var n int
		if n, err = d.length(); err == nil {
			d.pos += n
		}
	default:
		// One of a fixed width, read through a union.
		w := op.size
		switch op.wire {
		case wireBool:
			w = 1
		case wireFloat:
			w = 4
		case wireDouble:
			w = 8
		}
		if len(d.buf)-d.pos < w {
			err = errBlockShort
		} else {
			d.pos += w
		}
	}
	if err != nil {
		return d.fail(op, err)
	}
	return nil
}

// itemWidth is the bytes every item of an array op takes, -1 when they
// differ (and for a map, whose keys differ).
func itemWidth(op *avroOp) int {
	switch op.kind {
	case avroList:
		return op.children[0].width
	case avroKVList:
		if k, v := op.children[0].width, op.children[1].width; k >= 0 && v >= 0 && k+v > 0 {
			return k + v
		}
	}
	return -1
}

// fail names the column of op in err.
func (d *avroDecoder) fail(op *avroOp, err error) error {
	return fmt.Errorf("column %s: %w", op.what, err)
}

// length reads the length of a string or bytes value, held to the bytes
// left in the block.
func (d *avroDecoder) length() (int, error) {
	n, err := d.long()
	if err != nil {
		return 0, err
	}
	if n < 0 || n > int64(len(d.buf)-d.pos) {
		return 0, fmt.Errorf("a value of %d bytes, with %d left in the block", n, len(d.buf)-d.pos)
	}
	return int(n), nil
}

// errVarint is a varint longer than its type allows.
var errVarint = errors.New("a varint too long for its type")

// errBlockShort is a block that ends inside a record.
var errBlockShort = errors.New("the block ends inside a record")

// long reads a zigzag varint of 64 bits.
func (d *avroDecoder) long() (int64, error) {
	if d.pos < len(d.buf) && d.buf[d.pos] < 0x80 {
		u := uint64(d.buf[d.pos])
		d.pos++
		return int64(u>>1) ^ -int64(u&1), nil
	}
	u, err := d.uvarint(64)
	return int64(u>>1) ^ -int64(u&1), err
}

// int reads a zigzag varint of 32 bits.
func (d *avroDecoder) int() (int32, error) {
	if d.pos < len(d.buf) && d.buf[d.pos] < 0x80 {
		u := uint32(d.buf[d.pos])
		d.pos++
		return int32(u>>1) ^ -int32(u&1), nil
	}
	v, err := d.uvarint(32)
	u := uint32(v)
	return int32(u>>1) ^ -int32(u&1), err
}

// uvarint reads a varint of at most bits bits: its last byte (the fifth
// of an int, the tenth of a long) may hold no more.
func (d *avroDecoder) uvarint(bits uint) (uint64, error) {
	buf, i := d.buf, d.pos
	var u uint64
	for s := uint(0); ; s += 7 {
		if i >= len(buf) {
			return 0, errBlockShort
		}
		b := buf[i]
		i++
		if s+7 >= bits {
			if b>>(bits-s) != 0 {
				return 0, errVarint
			}
			u |= uint64(b) << s
			break
		}
		u |= uint64(b&0x7f) << s
		if b < 0x80 {
			break
		}
	}
	d.pos = i
	return u, nil
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
