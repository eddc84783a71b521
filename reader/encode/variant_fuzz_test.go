package encode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet/variant"
	"github.com/google/uuid"
)

// variantSeeds are well-formed values of every kind, built with arrow-go's
// variant builder, as metadata and value.
func variantSeeds(t testing.TB) [][2][]byte {
	t.Helper()
	var seeds [][2][]byte
	add := func(build func(b *variant.Builder) error) {
		var b variant.Builder
		if err := build(&b); err != nil {
			t.Fatal(err)
		}
		v, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, [2][]byte{v.Metadata().Bytes(), v.Bytes()})
	}
	for _, x := range []any{
		nil, true, false, int8(-8), int16(-300), int32(1 << 20), int64(-1 << 40), float32(0.1), 0.1, math.Inf(1),
		"short", strings.Repeat("long ", 20), "bad \xff utf-8", []byte{0, 1, 2},
		uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7"), arrow.Date32(-1), arrow.Time64(86_399_999_999),
		[]any{int64(1), "two", []any{}, map[string]any{}},
		map[string]any{"b": int64(2), "a": []any{nil, 1.5}, "c": map[string]any{"x\"y": "z"}},
	} {
		add(func(b *variant.Builder) error { return b.Append(x) })
	}
	add(func(b *variant.Builder) error { return b.AppendTimestamp(-1_500, true, true) })
	add(func(b *variant.Builder) error { return b.AppendTimestamp(1_700_000_000_123_456_789, false, false) })
	add(func(b *variant.Builder) error { return b.AppendDecimal4(2, decimal.Decimal32(-12345)) })
	add(func(b *variant.Builder) error { return b.AppendDecimal8(10, decimal.Decimal64(1)) })
	add(func(b *variant.Builder) error {
		return b.AppendDecimal16(38, decimal.Decimal128(decimal128.New(-1, 0)))
	})
	return seeds
}

// FuzzVariant feeds arbitrary metadata and value bytes to the variant
// decoder and holds it to arrow-go's parquet/variant, an independent
// decoder (the one iceberg-go reads variants with): the decoder accepts
// exactly the values arrow-go validates, but for those nested deeper than
// maxVariantDepth or whose JSON passes maxVariantJSON; it never panics;
// what it rejects is errVariant; and the JSON of what it accepts is, value
// for value, what arrow-go reads from it, by the value contract (see
// matchVariant), with and without ISO timestamps.
//
//	go test ./reader/encode -run '^$' -fuzz '^FuzzVariant$' -fuzztime 60s
func FuzzVariant(f *testing.F) {
	for _, s := range variantSeeds(f) {
		f.Add(s[0], s[1])
	}
	// Damaged: a key id past the dictionary, a depth bomb, offsets that
	// read one element twice.
	f.Add([]byte{1, 0, 0}, []byte{2, 1, 5, 0, 1, 0})
	f.Add([]byte{1, 0, 0}, bytes.Repeat([]byte{3, 1, 0, 0}, 300))
	f.Add([]byte{1, 0, 0}, []byte{3, 2, 0, 1, 1, 0x0c})
	f.Fuzz(checkVariant)
}

// checkVariant is the body of FuzzVariant.
func checkVariant(t *testing.T, meta, value []byte) {
	if len(meta) > maxFuzzBytes {
		meta = meta[:maxFuzzBytes]
	}
	if len(value) > maxFuzzBytes {
		value = value[:maxFuzzBytes]
	}
	want, arrowErr := variant.New(meta, value)
	for _, iso := range []bool{false, true} {
		var e VariantEncoder
		var s Scratch
		out, err := []byte("x"), e.SetMeta(meta)
		if err == nil {
			e.Begin()
			out, err = e.AppendVariant(out, value, 0, &Options{ISOTimestamps: iso}, &s)
		}
		switch {
		case err != nil && !errors.Is(err, ErrVariant):
			t.Fatalf("%x / %x: error %v without errVariant", meta, value, err)
		case err != nil && arrowErr == nil:
			if strings.Contains(err.Error(), "nested deeper") || strings.Contains(err.Error(), "keys pass") {
				continue
			}
			t.Fatalf("%x / %x: arrow-go reads %s, the decoder fails: %v", meta, value, want, err)
		case err == nil && arrowErr != nil:
			t.Fatalf("%x / %x: the decoder writes %s, arrow-go fails: %v", meta, value, out[1:], arrowErr)
		case err != nil:
			continue
		}
		text := out[1:]
		// The keys are bounded, everything else by a few dozen bytes a
		// byte (a decimal of scale 255 takes 257 for its 6).
		if bound := variantKeysFloor + (variantKeysPerByte+48)*(len(meta)+len(value)); len(text) > bound {
			t.Fatalf("%x / %x: %d bytes of JSON, past the %d its size allows", meta, value, len(text), bound)
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		got, perr := orderedJSON(dec)
		if perr != nil || dec.More() {
			t.Fatalf("%x / %x: not one JSON value: %s (%v)", meta, value, text, perr)
		}
		if msg := matchVariant(got, want, iso); msg != "" {
			t.Fatalf("%x / %x: %s\nJSON %s", meta, value, msg, text)
		}
	}
}

// field is one member of an object parsed in order.
type orderedField struct {
	key string
	val any
}

// orderedJSON parses one JSON value keeping the order of object members
// ([]orderedField) and numbers as json.Number.
func orderedJSON(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		fields := []orderedField{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := orderedJSON(dec)
			if err != nil {
				return nil, err
			}
			fields = append(fields, orderedField{k.(string), v})
		}
		_, err = dec.Token()
		return fields, err
	case json.Delim('['):
		elems := []any{}
		for dec.More() {
			v, err := orderedJSON(dec)
			if err != nil {
				return nil, err
			}
			elems = append(elems, v)
		}
		_, err = dec.Token()
		return elems, err
	}
	return tok, nil
}

// matchVariant holds the parsed JSON got to the value want as arrow-go
// reads it; "" when it matches.
func matchVariant(got any, want variant.Value, iso bool) string {
	fail := func(what string) string {
		return what + ": got " + stringOf(got) + " for a value of type " + strconv.Itoa(int(want.Type()))
	}
	num := func() (json.Number, bool) { n, ok := got.(json.Number); return n, ok }
	integer := func(w int64) string {
		if n, ok := num(); !ok || n.String() != strconv.FormatInt(w, 10) {
			return fail("want " + strconv.FormatInt(w, 10))
		}
		return ""
	}
	instant := func(v int64, unit arrow.TimeUnit) string {
		if !iso {
			per := int64(1000)
			if unit == arrow.Nanosecond {
				per = 1_000_000
			}
			return integer(v / per)
		}
		s, ok := got.(string)
		if v < 0 {
			// Before 1970, the millisecond toward zero (what Druid reads).
			per := int64(1000)
			if unit == arrow.Nanosecond {
				per = 1_000_000
			}
			v = v / per * per
		}
		tm := arrow.Timestamp(v).ToTime(unit)
		if y := tm.Year(); y < 1 || y > 9999 {
			return "" // outside RFC 3339; the JSON was checked
		}
		back, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil || !back.Equal(tm) || !strings.HasSuffix(s, "Z") {
			return fail("want the instant " + tm.UTC().Format(time.RFC3339Nano))
		}
		return ""
	}
	if b := want.Bytes(); want.BasicType() == variant.BasicPrimitive && want.Type() == variant.String && len(b) >= 5 && binary.LittleEndian.Uint32(b[1:5]) == 0 {
		// An empty long string (basic type primitive, length 0), which
		// the spec allows: arrow-go v18.8.0's Value panics on it when it
		// ends the buffer (unsafe.String(&v.value[5], 0)).
		if got != "" {
			return fail(`want ""`)
		}
		return ""
	}
	switch x := want.Value().(type) {
	case nil:
		if got != nil {
			return fail("want null")
		}
	case bool:
		if got != x {
			return fail("want " + strconv.FormatBool(x))
		}
	case int8:
		return integer(int64(x))
	case int16:
		return integer(int64(x))
	case int32:
		return integer(int64(x))
	case int64:
		return integer(x)
	case float32, float64:
		f, bits := 0.0, 64
		if v, ok := x.(float32); ok {
			f, bits = float64(v), 32
		} else {
			f = x.(float64)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if got != nil {
				return fail("want null for NaN or an infinity")
			}
			return ""
		}
		n, ok := num()
		back, err := strconv.ParseFloat(n.String(), bits)
		if !ok || err != nil || math.Float64bits(back) != math.Float64bits(f) {
			return fail("want the same float")
		}
	case string:
		if got != replaceInvalid([]byte(x)) {
			return fail("want the same text")
		}
	case []byte:
		s, ok := got.(string)
		back, err := base64.StdEncoding.DecodeString(s)
		if !ok || err != nil || !bytes.Equal(back, x) {
			return fail("want the same bytes in base64")
		}
	case uuid.UUID:
		if got != x.String() {
			return fail("want " + x.String())
		}
	case arrow.Date32:
		return integer(int64(x) * 86_400_000)
	case arrow.Time64:
		return integer(int64(x))
	case arrow.Timestamp:
		switch want.Type() {
		case variant.TimestampNanos, variant.TimestampNanosNTZ:
			return instant(int64(x), arrow.Nanosecond)
		}
		return instant(int64(x), arrow.Microsecond)
	case variant.DecimalValue[decimal.Decimal32]:
		return matchDecimal(got, big.NewInt(int64(x.Value.(decimal.Decimal32))), int(x.Scale), fail)
	case variant.DecimalValue[decimal.Decimal64]:
		return matchDecimal(got, big.NewInt(int64(x.Value.(decimal.Decimal64))), int(x.Scale), fail)
	case variant.DecimalValue[decimal.Decimal128]:
		return matchDecimal(got, x.Value.(decimal128.Num).BigInt(), int(x.Scale), fail)
	case variant.ObjectValue:
		fields, ok := got.([]orderedField)
		if !ok || len(fields) != int(x.NumElements()) {
			return fail("want an object of " + strconv.Itoa(int(x.NumElements())) + " fields")
		}
		i := 0
		for k, v := range x.Values() {
			if fields[i].key != replaceInvalid([]byte(k)) {
				return fail("want the key " + strconv.Quote(k) + " at " + strconv.Itoa(i))
			}
			if msg := matchVariant(fields[i].val, v, iso); msg != "" {
				return k + "." + msg
			}
			i++
		}
	case variant.ArrayValue:
		elems, ok := got.([]any)
		if !ok || len(elems) != int(x.Len()) {
			return fail("want an array of " + strconv.Itoa(int(x.Len())))
		}
		i := 0
		for v := range x.Values() {
			if msg := matchVariant(elems[i], v, iso); msg != "" {
				return "[" + strconv.Itoa(i) + "]" + msg
			}
			i++
		}
	default:
		return fail("an arrow-go value of an unexpected Go type")
	}
	return ""
}

// matchDecimal holds a decimal string to its unscaled value and scale.
func matchDecimal(got any, unscaled *big.Int, scale int, fail func(string) string) string {
	s, ok := got.(string)
	want := unscaled.String()
	neg := strings.HasPrefix(want, "-")
	want = strings.TrimPrefix(want, "-")
	for len(want) <= scale {
		want = "0" + want
	}
	if scale > 0 {
		want = want[:len(want)-scale] + "." + want[len(want)-scale:]
	}
	if neg {
		want = "-" + want
	}
	if !ok || s != want {
		return fail("want the decimal " + want)
	}
	return ""
}

// stringOf spells a parsed JSON value for a message.
func stringOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
