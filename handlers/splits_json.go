package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// writeSplits writes the answer of /splits byte for byte as writeJSON
// would, an order of magnitude faster: a wide table's answer holds 10,000
// URIs twice, megabytes that encoding/json first marshals by reflection and
// then re-scans byte by byte to indent. It streams in chunks, so the client
// reads while the rest is written. TestWriteSplitsIsWriteJSON holds the two
// to the same bytes, and fails when a response type gains a field that
// writeSplits does not write.
func writeSplits(w http.ResponseWriter, r splitsResponse) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	o := &jsonOut{w: w, buf: make([]byte, 0, jsonChunk+4<<10)}
	o.raw("{\n")
	o.key(1, "table", true)
	o.str(r.Table)
	o.key(1, "snapshotId", false)
	if r.SnapshotID == nil {
		o.raw("null")
	} else {
		o.buf = strconv.AppendInt(o.buf, *r.SnapshotID, 10)
	}
	o.key(1, "mode", false)
	o.str(string(r.Mode))

	o.key(1, "inputSource", false)
	o.raw("{\n")
	o.key(2, "type", true)
	o.str(r.InputSource.Type)
	o.key(2, "uris", false)
	o.strings(2, r.InputSource.URIs)
	if r.InputSource.Username != "" {
		o.key(2, "httpAuthenticationUsername", false)
		o.str(r.InputSource.Username)
	}
	if p := r.InputSource.Password; p != nil {
		o.key(2, "httpAuthenticationPassword", false)
		o.raw("{\n")
		o.key(3, "type", true)
		o.str(p.Type)
		o.key(3, "variable", false)
		o.str(p.Variable)
		o.end(2, '}')
	}
	o.end(1, '}')

	o.key(1, "inputFormat", false)
	o.raw("{\n")
	o.key(2, "type", true)
	o.str(r.InputFormat.Type)
	if r.InputFormat.BinaryAsString {
		o.key(2, "binaryAsString", false)
		o.raw("true")
	}
	o.end(1, '}')

	o.key(1, "splits", false)
	switch {
	case r.Splits == nil:
		o.raw("null")
	case len(r.Splits) == 0:
		o.raw("[]")
	default:
		o.raw("[")
		for i, sp := range r.Splits {
			if i > 0 {
				o.raw(",")
			}
			o.raw("\n    {\n")
			o.key(3, "id", true)
			o.str(sp.ID)
			o.key(3, "uri", false)
			o.str(sp.URI)
			o.key(3, "dataFile", false)
			o.str(sp.DataFile)
			o.key(3, "dataFiles", false)
			o.int(int64(sp.DataFiles))
			o.key(3, "recordCount", false)
			o.int(sp.RecordCount)
			o.key(3, "positionDeleteFiles", false)
			o.int(int64(sp.PositionDeleteFiles))
			o.key(3, "equalityDeleteFiles", false)
			o.int(int64(sp.EqualityDeleteFiles))
			o.key(3, "deletionVectorFiles", false)
			o.int(int64(sp.DeletionVectorFiles))
			o.key(3, "dataFileSizeInBytes", false)
			o.int(sp.DataFileSizeInBytes)
			o.key(3, "deleteFileSizeInBytes", false)
			o.int(sp.DeleteFileSizeInBytes)
			if sp.RecordCountEstimated {
				o.key(3, "recordCountEstimated", false)
				o.raw("true")
			}
			if r := sp.Range; r != nil {
				o.key(3, "range", false)
				o.raw("{\n")
				o.key(4, "start", true)
				o.int(r.Start)
				o.key(4, "length", false)
				o.int(r.Length)
				o.end(3, '}')
			}
			o.end(2, '}')
			o.flushFull()
		}
		o.end(1, ']')
	}
	o.key(1, "warnings", false)
	o.strings(1, r.Warnings)
	o.end(0, '}')
	o.raw("\n")
	o.flush()
	return o.err
}

// jsonChunk is how much writeSplits buffers before it writes.
const jsonChunk = 32 << 10

// jsonOut appends indented JSON (two spaces a level, as writeJSON) to a
// buffer that it writes out in chunks; the first write error sticks.
type jsonOut struct {
	w   io.Writer
	buf []byte
	err error
}

func (o *jsonOut) raw(s string) { o.buf = append(o.buf, s...) }

func (o *jsonOut) indent(level int) {
	for range level {
		o.buf = append(o.buf, "  "...)
	}
}

// key starts a member of an object at level: after a comma unless it is
// the first.
func (o *jsonOut) key(level int, name string, first bool) {
	if !first {
		o.buf = append(o.buf, ",\n"...)
	}
	o.indent(level)
	o.buf = append(o.buf, '"')
	o.buf = append(o.buf, name...)
	o.buf = append(o.buf, `": `...)
}

// end closes an object or array whose members are at level+1.
func (o *jsonOut) end(level int, c byte) {
	o.buf = append(o.buf, '\n')
	o.indent(level)
	o.buf = append(o.buf, c)
}

func (o *jsonOut) int(v int64) { o.buf = strconv.AppendInt(o.buf, v, 10) }

// str appends s as a JSON string, escaped as encoding/json escapes it
// without HTML escaping.
func (o *jsonOut) str(s string) {
	if !plainJSON(s) {
		// Rare in URIs and paths: let encoding/json spell it.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s) // a string always encodes
		o.buf = append(o.buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
		return
	}
	o.buf = append(o.buf, '"')
	o.buf = append(o.buf, s...)
	o.buf = append(o.buf, '"')
}

// plainJSON reports whether s goes between quotes as it is: no byte below
// 0x20 or above 0x7e, no quote, no backslash. A wide plan's answer is
// megabytes of URIs and paths, so it tests eight bytes at a time (the
// "has less", "has more" and "has zero byte" word tricks, each exact as a
// yes or no).
func plainJSON(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		below := (x - ones*0x20) &^ x
		above := (x + ones) | x
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		quote = (quote - ones) &^ quote
		backslash = (backslash - ones) &^ backslash
		if (below|above|quote|backslash)&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// strings appends an array of strings whose elements are at level+1.
func (o *jsonOut) strings(level int, ss []string) {
	switch {
	case ss == nil:
		o.raw("null")
		return
	case len(ss) == 0:
		o.raw("[]")
		return
	}
	o.raw("[")
	for i, s := range ss {
		if i > 0 {
			o.raw(",")
		}
		o.raw("\n")
		o.indent(level + 1)
		o.str(s)
		o.flushFull()
	}
	o.end(level, ']')
}

// flushFull writes the buffer out once it holds a chunk.
func (o *jsonOut) flushFull() {
	if len(o.buf) >= jsonChunk {
		o.flush()
	}
}

func (o *jsonOut) flush() {
	if o.err == nil && len(o.buf) > 0 {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
}
