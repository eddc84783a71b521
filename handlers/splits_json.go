package handlers

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/jsonstr"
	"github.com/druidiceberg/sidecar/token"
)

// planColumn is one column the plan's rows carry: its Iceberg type, the
// Druid type it ingests as (druid.ColumnOf), and for a geometry or
// geography the coordinate reference system and, for a geography, the
// edge interpolation algorithm, which WKT does not carry.
type planColumn struct {
	Name          string `json:"name"`
	IcebergType   string `json:"icebergType"`
	DruidType     string `json:"druidType"`
	CRS           string `json:"crs,omitempty"`
	EdgeAlgorithm string `json:"edgeAlgorithm,omitempty"`
}

// planColumns describes the top-level fields a plan serves.
func planColumns(fields []iceberg.NestedField, enc token.Encoding) []planColumn {
	out := make([]planColumn, 0, len(fields))
	for _, f := range fields {
		c := planColumn{Name: f.Name, IcebergType: f.Type.String(), DruidType: druid.ColumnOf(f, enc).Druid}
		switch t := f.Type.(type) {
		case iceberg.GeometryType:
			c.CRS = t.CRS()
		case iceberg.GeographyType:
			c.CRS, c.EdgeAlgorithm = t.CRS(), t.Algorithm()
		}
		out = append(out, c)
	}
	return out
}

// writeSplits writes the answer of /splits byte for byte as writeJSON
// would, an order of magnitude faster: a wide table's answer holds 10,000
// URIs twice, megabytes that encoding/json first marshals by reflection and
// then re-scans byte by byte to indent. It hands w the answer in chunks of
// jsonChunk, holding no second copy of it; w is renderFirst's, so the
// answer is rendered whole in memory before its first byte goes to the
// client. TestWriteSplitsIsWriteJSON holds the two to the same bytes, and
// fails when a response type gains a field that writeSplits does not
// write.
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
	if f := r.InputFormat.FlattenSpec; f != nil {
		// Only a statement's EXTERN carries one; /splits never does, so
		// the slow marshaller costs nothing here.
		o.key(2, "flattenSpec", false)
		b, err := json.MarshalIndent(f, "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode flattenSpec: %w", err)
		}
		o.buf = append(o.buf, b...)
	}
	o.end(1, '}')

	o.key(1, "columns", false)
	o.objects(r.Columns == nil, len(r.Columns), func(i int) {
		c := &r.Columns[i]
		o.key(3, "name", true)
		o.str(c.Name)
		o.key(3, "icebergType", false)
		o.str(c.IcebergType)
		o.key(3, "druidType", false)
		o.str(c.DruidType)
		if c.CRS != "" {
			o.key(3, "crs", false)
			o.str(c.CRS)
		}
		if c.EdgeAlgorithm != "" {
			o.key(3, "edgeAlgorithm", false)
			o.str(c.EdgeAlgorithm)
		}
	})

	o.key(1, "splits", false)
	o.objects(r.Splits == nil, len(r.Splits), func(i int) {
		sp := &r.Splits[i]
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
	})
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

// str appends s as a JSON string.
func (o *jsonOut) str(s string) { o.buf = jsonstr.AppendString(o.buf, s) }

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

// objects appends an array of n objects, a member of the top-level
// object, whose members each writes at level 3; null for a nil slice.
func (o *jsonOut) objects(isNil bool, n int, each func(i int)) {
	switch {
	case isNil:
		o.raw("null")
		return
	case n == 0:
		o.raw("[]")
		return
	}
	o.raw("[")
	for i := range n {
		if i > 0 {
			o.raw(",")
		}
		o.raw("\n    {\n")
		each(i)
		o.end(2, '}')
		o.flushFull()
	}
	o.end(1, ']')
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
