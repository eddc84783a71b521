package druidsim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/druidiceberg/sidecar/internal/jsonstr"
)

// The model holds values as Druid's Java code sees them: nil, bool
// (Boolean), int64 (Long, and Integer widened), float32 (Float), float64
// (Double), Decimal (BigDecimal, from Parquet decimals), string, []byte
// (byte[], from Parquet binaries), []any (List) and map[string]any (Map).

// Decimal is a Java BigDecimal: unscaled × 10^-scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

// rat is the decimal's exact value.
func (d Decimal) rat() *big.Rat {
	r := new(big.Rat).SetInt(d.Unscaled)
	if d.Scale > 0 {
		return r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)))
	}
	return r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
}

// Float64 is BigDecimal.doubleValue: the nearest double.
func (d Decimal) Float64() float64 {
	f, _ := d.rat().Float64()
	return f
}

// Int64 is BigDecimal.longValue: the integer part, truncated toward zero
// (and wrapped past 64 bits, as Java's narrowing does).
func (d Decimal) Int64() int64 {
	r := d.rat()
	q := new(big.Int).Quo(r.Num(), r.Denom())
	return q.Int64()
}

// String is BigDecimal.toString for the scales Parquet decimals have:
// plain digits with the scale's fraction.
func (d Decimal) String() string {
	s := new(big.Int).Abs(d.Unscaled).String()
	neg := d.Unscaled.Sign() < 0
	if d.Scale > 0 {
		if len(s) <= d.Scale {
			s = strings.Repeat("0", d.Scale-len(s)+1) + s
		}
		s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON writes a decimal inside nested data as a JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// isNumber says whether v is a java.lang.Number.
func isNumber(v any) bool {
	switch v.(type) {
	case int64, float32, float64, Decimal:
		return true
	}
	return false
}

// longValue is Number.longValue.
func longValue(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float32:
		return javaDoubleToLong(float64(x))
	case float64:
		return javaDoubleToLong(x)
	case Decimal:
		return x.Int64()
	}
	return 0
}

// javaDoubleToLong is Java's (long) cast: truncation, NaN is 0, and
// out-of-range values saturate.
func javaDoubleToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// doubleValue is Number.doubleValue.
func doubleValue(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	case Decimal:
		return x.Float64()
	}
	return 0
}

// javaString is String.valueOf(v) for the values the model holds.
func javaString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return javaDouble(x, 64)
	case float32:
		return javaDouble(float64(x), 32)
	case Decimal:
		return x.String()
	case []byte:
		return fmt.Sprintf("[B@%p", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + javaString(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "null"
}

// javaDouble is Double.toString (Float.toString for bits 32): the
// shortest digits that read back, in plain notation from 10^-3 up to
// 10^7, in computerized scientific notation (1.0E10) outside it, and
// always with a fraction.
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// jacksonLine reads one JSON line as Druid's JsonInputFormat does
// (Jackson, then JSONFlattenerMaker.convertJsonNode): integers that fit
// a long are longs, every other number a double (a decimal or an integer
// past 64 bits loses precision here, in Druid), strings, booleans, lists
// and maps as they are.
func jacksonLine(line string) (map[string]any, error) {
	if obj, ok := quickLine(line); ok {
		return obj, nil
	}
	return decodeLine(line)
}

// decodeLine is jacksonLine through encoding/json.
func decodeLine(line string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a row is %T, not an object", raw)
	}
	return jacksonValue(obj).(map[string]any), nil
}

func jacksonValue(v any) any {
	return mapScalars(v, func(v any) any {
		n, ok := v.(json.Number)
		if !ok {
			return v
		}
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(n), 64)
		return f
	})
}

// mapScalars returns v, a value decoded from JSON, with every scalar in it
// (v itself, or a member or element at any depth) replaced by leaf's
// answer; lists and objects are copied, never changed in place.
func mapScalars(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapScalars(e, leaf)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapScalars(e, leaf)
		}
		return out
	}
	return leaf(v)
}

// MSQ's EXTERN conversion (processing/src/main/java/org/apache/druid/
// segment/RowBasedColumnSelectorFactory.java, which RowBasedCursor builds
// with throwParseExceptions false): a value is converted to the column's
// declared type, and a value it cannot convert becomes NULL without an
// error. ok is false for such a loss.

// externValue converts a value read from an input source to an EXTERN
// column of type typ.
func externValue(v any, typ string) (out any, ok bool) {
	if v == nil {
		return nil, true
	}
	switch typ {
	case "long":
		// Rows.objectToNumber: a Number as it is (read as a long, so
		// truncated), a String parsed as a long, anything else NULL.
		if isNumber(v) {
			return longValue(v), true
		}
		if s, isStr := v.(string); isStr {
			if n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 10, 64); err == nil {
				return n, true
			}
		}
		return nil, false
	case "double", "float":
		var f float64
		switch {
		case isNumber(v):
			f = doubleValue(v)
		default:
			s, isStr := v.(string)
			if !isStr {
				return nil, false
			}
			var err error
			if f, err = strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64); err != nil {
				return nil, false
			}
		}
		if typ == "float" {
			return float32(f), true
		}
		return f, true
	case "string":
		// Rows.objectToStrings.
		return stringValue(v), true
	case "COMPLEX<json>":
		return v, true
	case "ARRAY<LONG>", "ARRAY<DOUBLE>", "ARRAY<STRING>":
		// An ARRAY column of EXTERN is read as an auto column cast to
		// its type (DimensionSchemaUtils.createDimensionSchemaForExtern).
		return castValue(v, typ)
	}
	return nil, false
}

// Native batch's typed dimensions (processing/src/main/java/org/apache/
// druid/segment/DimensionHandlerUtils.java convertObjectToLong/Double/
// Float, StringDimensionIndexer, AutoTypeColumnIndexer): a value a typed
// dimension cannot take is a ParseException, which IncrementalIndex
// catches: the cell is NULL and the row counts as processedWithError.

// dimensionValue converts a value to a dimension of type typ ("string",
// "long", "float", "double", "auto" or "json"); ok is false for a
// ParseException.
func dimensionValue(v any, typ string) (out any, ok bool) {
	if v == nil {
		return nil, true
	}
	switch typ {
	case "long":
		switch x := v.(type) {
		case bool:
			// Evals.asLong in Druid's current DimensionHandlerUtils;
			// older versions refuse a Boolean.
			if x {
				return int64(1), true
			}
			return int64(0), true
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, true
			}
			// getExactLongFromDecimalString: "12.0" is 12, "12.34" fails.
			r, okRat := new(big.Rat).SetString(x)
			if okRat && r.IsInt() && r.Num().IsInt64() {
				return r.Num().Int64(), true
			}
			return nil, false
		}
		if isNumber(v) {
			return longValue(v), true
		}
		return nil, false
	case "double", "float":
		var f float64
		switch x := v.(type) {
		case string:
			var err error
			if f, err = strconv.ParseFloat(x, 64); err != nil {
				return nil, false
			}
		default:
			if !isNumber(v) {
				// No Boolean branch: a ParseException.
				return nil, false
			}
			f = doubleValue(v)
		}
		if typ == "float" {
			return float32(f), true
		}
		return f, true
	case "string":
		// StringDimensionIndexer.
		return stringValue(v), true
	case "auto", "json":
		return nestedValue(v), true
	}
	return nil, false
}

// stringValue is a value as a string column takes it, in MSQ
// (Rows.objectToStrings) and native ingestion (StringDimensionIndexer)
// alike: a byte[] as base64, a List as a multi-value row of strings,
// anything else String.valueOf.
func stringValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if e != nil {
				out[i] = javaString(e)
			}
		}
		return out
	}
	return javaString(v)
}

// bestEffort types a value as ExprEval.bestEffortOf does for the "auto"
// indexer (processing/src/main/java/org/apache/druid/math/expr/
// ExprEval.java): a Boolean is LONG 1/0 (useStrictBooleans, the default
// since Druid 28), a Float or Double a DOUBLE, any other Number a LONG
// (a BigDecimal truncated), a byte[] a base64 STRING, lists and maps kept
// with their leaves typed the same way.
func bestEffort(v any) any { return mapScalars(v, bestEffortScalar) }

// bestEffortScalar is bestEffort of one scalar.
func bestEffortScalar(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case float32:
		return float64(x)
	case Decimal:
		return x.Int64()
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	}
	return v
}

// nestedValue is a value as the auto (nested) indexer holds it before
// the segment's column type is known: bestEffort, but with booleans kept.
// A segment whose column is COMPLEX<json> keeps the raw JSON it read
// (StructuredData), true and false included: real Druid 27 and 33 answer
// a nested column's booleans as true and false (handlers/
// druid_real_test.go), not 1 and 0. A segment whose column the indexer
// types as a scalar or an ARRAY (LONG for a boolean) holds the typed
// values: typedValues makes those booleans 1 and 0 when the segment is
// written.
func nestedValue(v any) any {
	return mapScalars(v, func(v any) any {
		if b, ok := v.(bool); ok {
			return b
		}
		return bestEffort(v)
	})
}

// storedValue is a nestedValue as a datasource holds it when the type of
// its segment's column is not known (Expect): an object, or a list that
// holds an object or a list, is nested data whose JSON is kept; a scalar
// or a list of scalars is typed (bestEffort). A segment whose other rows
// make the column COMPLEX<json> keeps a scalar's boolean too, which
// Expect, one row at a time, does not see.
func storedValue(v any) any {
	v = nestedValue(v)
	switch x := v.(type) {
	case map[string]any:
		return v
	case []any:
		if _, ok := arrayElementType(x); !ok {
			return v
		}
	}
	return bestEffort(v)
}

// bestEffortType is the Druid type of a value bestEffort (or nestedValue)
// typed; a boolean is LONG.
func bestEffortType(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64, bool:
		return "LONG"
	case float64:
		return "DOUBLE"
	case string:
		return "STRING"
	case map[string]any:
		return "COMPLEX<json>"
	case []any:
		elem := ""
		for _, e := range x {
			switch t := bestEffortType(e); {
			case t == "":
			case t == "COMPLEX<json>" || strings.HasPrefix(t, "ARRAY"):
				return "COMPLEX<json>"
			default:
				elem = leastRestrictive(elem, t)
			}
		}
		return "ARRAY<" + cmpOr(elem, "STRING") + ">"
	}
	return "COMPLEX<json>"
}

// leastRestrictive is ColumnType.leastRestrictiveType for the scalar
// types: LONG and DOUBLE make DOUBLE, anything with STRING is STRING.
func leastRestrictive(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	case a == "STRING" || b == "STRING":
		return "STRING"
	case (a == "LONG" && b == "DOUBLE") || (a == "DOUBLE" && b == "LONG"):
		return "DOUBLE"
	}
	return "COMPLEX<json>"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// canonical writes a value as JSON the way a datasource row is compared:
// as encoding/json writes it without HTML escaping (map keys sorted), and
// as fmt's %v when encoding/json refuses it (a NaN or an infinity).
func canonical(v any) string {
	if b, ok := appendCanonical(nil, v); ok {
		return string(b)
	}
	return canonicalJSON(v)
}

// canonicalJSON is canonical through encoding/json, for the values
// appendCanonical leaves to it.
func canonicalJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// appendCanonical appends v as encoding/json writes it without HTML
// escaping, for the values the model holds most (nil, bool, int64,
// float32, float64, string, lists and maps of them), without
// reflection: rows are compared by this spelling, a few times per row
// a test checks. ok is false for anything else (a Decimal, a []byte, a
// NaN or an infinity, another type), which canonical leaves to
// encoding/json itself.
func appendCanonical(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case float64:
		return appendJSONFloat(b, x, 64)
	case float32:
		return appendJSONFloat(b, float64(x), 32)
	case string:
		return jsonstr.AppendString(b, x), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.AppendString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendJSONFloat is encoding/json's floatEncoder: ES6 number spelling,
// 'e' notation below 1e-6 and from 1e21 (compared in the value's own
// width), the exponent unpadded. ok is false for NaN and infinities,
// which encoding/json refuses.
func appendJSONFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 is e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// quickLine is jacksonLine for the lines the row stream writes most: one
// object of unescaped, valid UTF-8 strings, numbers, booleans, nulls,
// lists and objects, read without encoding/json's reflection and second
// scan. It gives the values jacksonLine gives; ok is false for any line
// it leaves to encoding/json (an escape, a control character, invalid
// UTF-8, a malformed or trailing value, deep nesting).
func quickLine(line string) (map[string]any, bool) {
	p := quickParser{s: line}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, false
	}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, false
	}
	return v.(map[string]any), true
}

type quickParser struct {
	s string
	i int
}

func (p *quickParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *quickParser) value(depth int) (any, bool) {
	if depth > 100 || p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		out := map[string]any{}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, true
		}
		for {
			p.space()
			k, ok := p.str()
			if !ok {
				return nil, false
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, false
			}
			p.i++
			p.space()
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			out[k] = v
			more, ok := p.sep('}')
			if !ok {
				return nil, false
			}
			if !more {
				return out, true
			}
		}
	case c == '[':
		p.i++
		out := []any{}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return out, true
		}
		for {
			p.space()
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			out = append(out, v)
			more, ok := p.sep(']')
			if !ok {
				return nil, false
			}
			if !more {
				return out, true
			}
		}
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return true, true
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return false, true
	case strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return nil, true
	}
	return nil, false
}

// sep reads what follows an object's member or an array's element: ','
// (more to come) or the container's close.
func (p *quickParser) sep(close byte) (more, ok bool) {
	p.space()
	if p.i >= len(p.s) {
		return false, false
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return true, true
	case close:
		p.i++
		return false, true
	}
	return false, false
}

// str reads a string without escapes or control characters, in valid
// UTF-8.
func (p *quickParser) str() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	ascii := true
	for j := start; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			v := p.s[start:j]
			if !ascii && !utf8.ValidString(v) {
				return "", false
			}
			p.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// number reads a JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?)
// as jacksonValue converts it: a long when it is an integer that fits
// one, a double otherwise.
func (p *quickParser) number() (any, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	switch n := digits(); {
	case n == 0:
		return nil, false
	case n > 1 && p.s[p.i-n] == '0':
		return nil, false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return jacksonValue(json.Number(p.s[start:p.i])), true
}
