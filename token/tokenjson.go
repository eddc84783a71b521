package token

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
)

// appendClaims appends c as JSON, the very bytes encoding/json gives for it
// with HTML escaping off (as every JSON string of the sidecar is written),
// without reflection: a wide plan signs thousands of tokens, and encoding
// them was most of the signing cost. TestAppendClaimsIsMarshal holds the two
// to the same bytes for a split with every field set (found by reflection),
// so a field added to Split, DataFile or DeleteFile and not written here
// fails it.
func appendClaims(b []byte, c claims) ([]byte, error) {
	b = append(b, `{"t":`...)
	b = jsonstr.AppendString(b, string(c.Kind))
	var err error
	if c.Split != nil {
		b = append(b, `,"s":`...)
		if b, err = appendSplit(b, *c.Split); err != nil {
			return nil, err
		}
	}
	if len(c.More) > 0 {
		b = append(b, `,"p":[`...)
		for i, p := range c.More {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendPart(b, p); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if c.Ref != nil {
		// A plan's references are as many as its splits, and short: the
		// reflecting encoder is fast enough for them.
		ref, err := marshalNoHTML(c.Ref)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"r":`...)
		b = append(b, ref...)
	}
	if c.Expires != 0 {
		b = append(b, `,"x":`...)
		b = strconv.AppendInt(b, c.Expires, 10)
	}
	if c.AsIs {
		b = append(b, `,"a":true`...)
	}
	return append(b, '}'), nil
}

func appendSplit(b []byte, s Split) ([]byte, error) {
	b = append(b, '{')
	if s.Catalog != "" {
		b = append(b, `"cat":`...)
		b = jsonstr.AppendString(b, s.Catalog)
		b = append(b, ',')
	}
	b = append(b, `"tb":`...)
	b = appendStrings(b, s.Table)
	b = append(b, ',')
	if s.Location != "" {
		b = append(b, `"loc":`...)
		b = jsonstr.AppendString(b, s.Location)
		b = append(b, ',')
	}
	b = append(b, `"m":`...)
	b = jsonstr.AppendString(b, s.MetadataLocation)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, s.SnapshotID, 10)
	b = append(b, `,"sc":`...)
	b = strconv.AppendInt(b, int64(s.SchemaID), 10)
	b = append(b, `,"d":`...)
	b, err := appendDataFile(b, s.Data)
	if err != nil {
		return nil, err
	}
	b = appendDeletes(b, s.Deletes)
	if len(s.Columns) > 0 {
		b = append(b, `,"c":`...)
		b = appendInts(b, s.Columns)
	}
	if s.Encoding != (Encoding{}) {
		b = append(b, `,"e":{`...)
		comma := false
		if s.Encoding.Version != 0 {
			b = append(b, `"v":`...)
			b = strconv.AppendInt(b, int64(s.Encoding.Version), 10)
			comma = true
		}
		if s.Encoding.ISOTimestamps {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"iso":true`...)
			comma = true
		}
		if s.Encoding.BinaryAsString {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"bas":true`...)
			comma = true
		}
		if s.Encoding.GeoWKB {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"wkb":true`...)
		}
		b = append(b, '}')
	}
	if s.Meta != 0 {
		b = append(b, `,"mc":`...)
		b = strconv.AppendUint(b, uint64(s.Meta), 10)
	}
	if len(s.Filter) > 0 {
		b = append(b, `,"r":`...)
		if b, err = appendRawJSON(b, s.Filter); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendPart(b []byte, p Part) ([]byte, error) {
	b = append(b, `{"d":`...)
	b, err := appendDataFile(b, p.Data)
	if err != nil {
		return nil, err
	}
	b = appendDeletes(b, p.Deletes)
	if len(p.Filter) > 0 {
		b = append(b, `,"r":`...)
		if b, err = appendRawJSON(b, p.Filter); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendDeletes appends the "x" field of a split or part, when it has
// delete files.
func appendDeletes(b []byte, ds []DeleteFile) []byte {
	if len(ds) == 0 {
		return b
	}
	b = append(b, `,"x":[`...)
	for i, d := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDeleteFile(b, d)
	}
	return append(b, ']')
}

func appendDataFile(b []byte, d DataFile) ([]byte, error) {
	b = appendFileFields(append(b, '{'), d.Path, d.Format, d.Size, d.Records)
	if d.SpecID != 0 {
		b = append(b, `,"sp":`...)
		b = strconv.AppendInt(b, int64(d.SpecID), 10)
	}
	var err error
	if len(d.Identity) > 0 {
		b = append(b, `,"i":`...)
		if b, err = appendValues(b, d.Identity); err != nil {
			return nil, err
		}
	}
	if r := d.Range; r != nil {
		b = append(b, `,"g":{"s":`...)
		b = strconv.AppendInt(b, r.Start, 10)
		b = append(b, `,"l":`...)
		b = strconv.AppendInt(b, r.Length, 10)
		if r.Records != nil {
			b = append(b, `,"n":`...)
			b = strconv.AppendInt(b, *r.Records, 10)
		}
		b = append(b, '}')
	}
	if d.FirstRowID != nil {
		b = append(b, `,"fr":`...)
		b = strconv.AppendInt(b, *d.FirstRowID, 10)
	}
	if d.DataSequence != nil {
		b = append(b, `,"ds":`...)
		b = strconv.AppendInt(b, *d.DataSequence, 10)
	}
	if len(d.Partition) > 0 {
		b = append(b, `,"pt":`...)
		if b, err = appendValues(b, d.Partition); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendFileFields appends the fields a data file and a delete file share:
// path, format (empty when the token leaves out the usual one), size and
// records.
func appendFileFields(b []byte, path, format string, size, records int64) []byte {
	b = append(b, `"p":`...)
	b = jsonstr.AppendString(b, path)
	if format != "" {
		b = append(b, `,"f":`...)
		b = jsonstr.AppendString(b, format)
	}
	b = append(b, `,"z":`...)
	b = strconv.AppendInt(b, size, 10)
	b = append(b, `,"n":`...)
	return strconv.AppendInt(b, records, 10)
}

// appendValues appends identity or partition values as a JSON array.
func appendValues(b []byte, vs []IdentityValue) ([]byte, error) {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"f":`...)
		b = strconv.AppendInt(b, int64(v.FieldID), 10)
		b = append(b, `,"v":`...)
		var err error
		if b, err = appendRawJSON(b, v.Value); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func appendDeleteFile(b []byte, d DeleteFile) []byte {
	b = append(b, '{')
	if d.Kind != "" {
		b = append(b, `"k":`...)
		b = jsonstr.AppendString(b, string(d.Kind))
		b = append(b, ',')
	}
	b = appendFileFields(b, d.Path, d.Format, d.Size, d.Records)
	if len(d.EqualityIDs) > 0 {
		b = append(b, `,"e":`...)
		b = appendInts(b, d.EqualityIDs)
	}
	if d.ContentOffset != nil {
		b = append(b, `,"o":`...)
		b = strconv.AppendInt(b, *d.ContentOffset, 10)
	}
	if d.ContentSize != nil {
		b = append(b, `,"l":`...)
		b = strconv.AppendInt(b, *d.ContentSize, 10)
	}
	if d.ReferencedDataFile != "" {
		b = append(b, `,"r":`...)
		b = jsonstr.AppendString(b, d.ReferencedDataFile)
	}
	return append(b, '}')
}

// marshalNoHTML is json.Marshal without HTML escaping, as every JSON of the
// sidecar is written, and without the encoder's trailing newline.
func marshalNoHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendStrings appends v as a JSON array; nil is null, as encoding/json
// writes it.
func appendStrings(b []byte, v []string) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.AppendString(b, x)
	}
	return append(b, ']')
}

func appendInts(b []byte, v []int) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// appendRawJSON appends raw as an Encoder without HTML escaping embeds a
// json.RawMessage: compacted, "null" when nil, an error when it is not JSON (empty included). An integer,
// what identity partition values mostly are, is its own compact form.
func appendRawJSON(b []byte, raw json.RawMessage) ([]byte, error) {
	switch {
	case raw == nil:
		return append(b, "null"...), nil
	case isJSONInteger(raw):
		return append(b, raw...), nil
	}
	var q bytes.Buffer
	if err := json.Compact(&q, raw); err != nil {
		return nil, err
	}
	return append(b, q.Bytes()...), nil
}

// isJSONInteger reports whether raw is -?(0|[1-9][0-9]*).
func isJSONInteger(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
	}
	if len(raw) == 0 || raw[0] == '0' && len(raw) > 1 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
