package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/readerr"
)

// constant is the value that every row of a data file has for a field the
// file does not store, encoded once at Open.
type constant struct {
	// json is the encoded value.
	json []byte
	// Key is the equality key of a primitive value (see appendKey).
	Key []byte
	// invalid says that encoding replaced invalid UTF-8.
	invalid bool
}

var nullConstant = constant{json: []byte("null"), Key: []byte{0}}

// Constant returns the value of field f for a data file without its
// column, in the order the spec gives: the identity partition value, the
// initial-default, null. An unknown-typed field is always null.
func (r *Resolver) Constant(f iceberg.NestedField, unknown bool) (constant, error) {
	switch f.Type.(type) {
	case iceberg.VariantType, iceberg.GeometryType, iceberg.GeographyType:
		// The spec allows them no default but null, and no identity
		// partition.
		return nullConstant, nil
	}
	if unknown {
		return nullConstant, nil
	}
	_, identity := r.Identity[f.ID]
	if _, primitive := f.Type.(iceberg.PrimitiveType); identity || primitive || f.InitialDefault == nil {
		v, vt, err := r.PrimitiveValue(f)
		if err != nil {
			return constant{}, err
		}
		return r.primitiveConstant(v, vt)
	}
	var s encode.Scratch
	b, err := appendDefault(nil, f.Type, f.InitialDefault, &r.Enc, &s)
	if err == nil {
		err = s.Err
	}
	if err != nil {
		return constant{}, fmt.Errorf("%w: initial-default of field %d (%s): %w", readerr.ErrSchemaMismatch, f.ID, f.Name, err)
	}
	return constant{json: b, invalid: s.Invalid > 0}, nil
}

// PrimitiveValue returns the value of primitive field f for a data file
// without its column: the identity partition value, the initial-default,
// or null.
func (r *Resolver) PrimitiveValue(f iceberg.NestedField) (parquet.Value, encode.ValueType, error) {
	if raw, ok := r.Identity[f.ID]; ok {
		v, vt, err := identityValue(f.Type, raw)
		if err != nil {
			return v, vt, fmt.Errorf("%w: identity partition value %s of field %d (%s): %w",
				readerr.ErrSchemaMismatch, raw, f.ID, f.Name, err)
		}
		return v, vt, nil
	}
	if f.InitialDefault == nil {
		return parquet.NullValue(), encode.ValueType{}, nil
	}
	v, vt, err := defaultValue(f.Type, f.InitialDefault)
	if err != nil {
		return v, vt, fmt.Errorf("%w: initial-default %v of field %d (%s): %w",
			readerr.ErrSchemaMismatch, f.InitialDefault, f.ID, f.Name, err)
	}
	return v, vt, nil
}

// primitiveConstant encodes one primitive value and its equality key.
func (r *Resolver) primitiveConstant(v parquet.Value, vt encode.ValueType) (constant, error) {
	if v.IsNull() {
		return nullConstant, nil
	}
	var s encode.Scratch
	one := encode.ValuesOf(v)
	k := constant{json: encode.AppendValue(nil, one, 0, &vt, &r.Enc, &s), Key: encode.AppendKey(nil, one, 0, &vt)}
	if s.Err != nil {
		return constant{}, s.Err
	}
	k.invalid = s.Invalid > 0
	return k, nil
}

// identityValue decodes an identity partition value in the form that
// split.IdentityValue documents as a value of type t.
func identityValue(t iceberg.Type, raw json.RawMessage) (parquet.Value, encode.ValueType, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return parquet.Value{}, encode.ValueType{}, err
	}
	if x == nil {
		return parquet.NullValue(), encode.ValueType{}, nil
	}
	num, isNum := x.(json.Number)
	str, isStr := x.(string)
	integer := func() (int64, error) {
		if !isNum {
			return 0, fmt.Errorf("not an integer")
		}
		return num.Int64()
	}
	switch t := t.(type) {
	case iceberg.BooleanType:
		if b, ok := x.(bool); ok {
			return parquet.BooleanValue(b), encode.ValueType{Conv: encode.ConvBool}, nil
		}
	case iceberg.Int32Type:
		n, err := integer()
		if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			return parquet.Value{}, encode.ValueType{}, fmt.Errorf("not an int: %w", err)
		}
		return parquet.Int32Value(int32(n)), encode.ValueType{Conv: encode.ConvInt32}, nil
	case iceberg.Int64Type:
		n, err := integer()
		return parquet.Int64Value(n), encode.ValueType{Conv: encode.ConvInt64}, err
	case iceberg.DateType:
		n, err := integer()
		if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
			return parquet.Value{}, encode.ValueType{}, fmt.Errorf("not a day number: %w", err)
		}
		return parquet.Int32Value(int32(n)), encode.ValueType{Conv: encode.ConvDate}, nil
	case iceberg.TimeType:
		n, err := integer()
		return parquet.Int64Value(n), encode.ValueType{Conv: encode.ConvTimeInt64, Unit: 1000}, err
	case iceberg.TimestampType, iceberg.TimestampTzType:
		n, err := integer()
		return parquet.Int64Value(n), encode.ValueType{Conv: encode.ConvTimestamp, Unit: 1000}, err
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		n, err := integer()
		return parquet.Int64Value(n), encode.ValueType{Conv: encode.ConvTimestamp, Unit: 1, Nanos: true}, err
	case iceberg.Float32Type:
		if isNum {
			f, err := strconv.ParseFloat(num.String(), 32)
			return parquet.FloatValue(float32(f)), encode.ValueType{Conv: encode.ConvFloat}, err
		}
	case iceberg.Float64Type:
		if isNum {
			f, err := strconv.ParseFloat(num.String(), 64)
			return parquet.DoubleValue(f), encode.ValueType{Conv: encode.ConvDouble}, err
		}
	case iceberg.StringType:
		if isStr {
			return parquet.ByteArrayValue([]byte(str)), encode.ValueType{Conv: encode.ConvString}, nil
		}
	case iceberg.UUIDType:
		if isStr {
			u, err := uuid.Parse(str)
			return parquet.FixedLenByteArrayValue(u[:]), encode.ValueType{Conv: encode.ConvUUID}, err
		}
	case iceberg.BinaryType, iceberg.FixedType:
		if isStr {
			b, err := base64.StdEncoding.DecodeString(str)
			return parquet.ByteArrayValue(b), encode.ValueType{Conv: encode.ConvBinary}, err
		}
	case iceberg.DecimalType:
		if isStr {
			v, ok := new(big.Int).SetString(str, 10)
			if !ok {
				return parquet.Value{}, encode.ValueType{}, fmt.Errorf("not an unscaled decimal")
			}
			b, err := decimalBytes(v)
			return parquet.FixedLenByteArrayValue(b), encode.ValueType{Conv: encode.ConvDecimalBytes, Scale: t.Scale()}, err
		}
	default:
		return parquet.Value{}, encode.ValueType{}, fmt.Errorf("%w: identity value of type %s", readerr.ErrUnsupported, t)
	}
	return parquet.Value{}, encode.ValueType{}, fmt.Errorf("a JSON %T does not encode a %s", x, t)
}

// decimalBytes returns an unscaled decimal as 16 bytes of big-endian two's
// complement.
func decimalBytes(v *big.Int) ([]byte, error) {
	if v.BitLen() > 127 {
		return nil, fmt.Errorf("unscaled decimal %s is wider than decimal(38)", v)
	}
	out := make([]byte, 16)
	if v.Sign() >= 0 {
		v.FillBytes(out)
		return out, nil
	}
	// Two's complement of a negative value: 2^128 + v.
	w := new(big.Int).Lsh(big.NewInt(1), 128)
	w.Add(w, v)
	w.FillBytes(out)
	return out, nil
}

// defaultValue converts a primitive initial-default to a value of type t.
// Defaults parsed from table metadata arrive as encoding/json gives them
// (bool, float64, string in the spec's single-value JSON form: ISO dates
// and times, hex binary, decimal strings); defaults built in Go may be Go
// numbers, []byte or iceberg-go literals and their value types.
func defaultValue(t iceberg.Type, v any) (parquet.Value, encode.ValueType, error) {
	lit, err := defaultLiteral(t, v)
	if err != nil {
		return parquet.Value{}, encode.ValueType{}, err
	}
	switch l := lit.(type) {
	case iceberg.BoolLiteral:
		return parquet.BooleanValue(bool(l)), encode.ValueType{Conv: encode.ConvBool}, nil
	case iceberg.Int32Literal:
		return parquet.Int32Value(int32(l)), encode.ValueType{Conv: encode.ConvInt32}, nil
	case iceberg.Int64Literal:
		return parquet.Int64Value(int64(l)), encode.ValueType{Conv: encode.ConvInt64}, nil
	case iceberg.Float32Literal:
		return parquet.FloatValue(float32(l)), encode.ValueType{Conv: encode.ConvFloat}, nil
	case iceberg.Float64Literal:
		return parquet.DoubleValue(float64(l)), encode.ValueType{Conv: encode.ConvDouble}, nil
	case iceberg.DateLiteral:
		return parquet.Int32Value(int32(l)), encode.ValueType{Conv: encode.ConvDate}, nil
	case iceberg.TimeLiteral:
		return parquet.Int64Value(int64(l)), encode.ValueType{Conv: encode.ConvTimeInt64, Unit: 1000}, nil
	case iceberg.TimestampLiteral:
		return parquet.Int64Value(int64(l)), encode.ValueType{Conv: encode.ConvTimestamp, Unit: 1000}, nil
	case iceberg.TimestampNsLiteral:
		return parquet.Int64Value(int64(l)), encode.ValueType{Conv: encode.ConvTimestamp, Unit: 1, Nanos: true}, nil
	case iceberg.StringLiteral:
		return parquet.ByteArrayValue([]byte(l)), encode.ValueType{Conv: encode.ConvString}, nil
	case iceberg.BinaryLiteral:
		return parquet.ByteArrayValue(l), encode.ValueType{Conv: encode.ConvBinary}, nil
	case iceberg.FixedLiteral:
		return parquet.ByteArrayValue(l), encode.ValueType{Conv: encode.ConvBinary}, nil
	case iceberg.UUIDLiteral:
		return parquet.FixedLenByteArrayValue(l[:]), encode.ValueType{Conv: encode.ConvUUID}, nil
	case iceberg.DecimalLiteral:
		b, err := decimalBytes(l.Val.BigInt())
		return parquet.FixedLenByteArrayValue(b), encode.ValueType{Conv: encode.ConvDecimalBytes, Scale: l.Scale}, err
	}
	return parquet.Value{}, encode.ValueType{}, fmt.Errorf("%w: default of type %s", readerr.ErrUnsupported, t)
}

// defaultLiteral converts an initial-default to a literal of type t.
func defaultLiteral(t iceberg.Type, v any) (iceberg.Literal, error) {
	switch x := v.(type) {
	case iceberg.Literal:
		return x.To(t)
	case bool:
		return iceberg.BoolLiteral(x).To(t)
	case int:
		return iceberg.Int64Literal(x).To(t)
	case int32:
		return iceberg.Int32Literal(x).To(t)
	case int64:
		return iceberg.Int64Literal(x).To(t)
	case float32:
		return iceberg.Float32Literal(x).To(t)
	case float64:
		// iceberg-go v0.7.0 writes the default of a timestamp, date or time
		// as a JSON number in the type's unit (the spec's form is an ISO
		// string), which reads back as a float64.
		switch t.(type) {
		case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType,
			iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			if x != math.Trunc(x) || math.Abs(x) > 1<<63 {
				return nil, fmt.Errorf("%v is not an integer", x)
			}
			return iceberg.Int64Literal(int64(x)).To(t)
		}
		return iceberg.Float64Literal(x).To(t)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return defaultLiteral(t, n)
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return defaultLiteral(t, f)
	case string:
		switch tt := t.(type) {
		case iceberg.BinaryType, iceberg.FixedType:
			// The spec's form is hex; iceberg-go v0.6.0 wrote base64.
			b, err := hex.DecodeString(x)
			if err != nil || isFixedOfOtherLength(tt, len(b)) {
				if b64, err64 := base64.StdEncoding.DecodeString(x); err64 == nil {
					b, err = b64, nil
				}
			}
			if err != nil {
				return nil, err
			}
			return iceberg.BinaryLiteral(b).To(t)
		}
		return iceberg.StringLiteral(x).To(t)
	case []byte:
		return iceberg.BinaryLiteral(x).To(t)
	case iceberg.Decimal:
		return iceberg.DecimalLiteral(x).To(t)
	case iceberg.Date:
		return iceberg.DateLiteral(x).To(t)
	case iceberg.Time:
		return iceberg.TimeLiteral(x).To(t)
	case iceberg.Timestamp:
		return iceberg.TimestampLiteral(x).To(t)
	case iceberg.TimestampNano:
		return iceberg.TimestampNsLiteral(x).To(t)
	case uuid.UUID:
		return iceberg.UUIDLiteral(x).To(t)
	}
	return nil, fmt.Errorf("%w: default of Go type %T", readerr.ErrUnsupported, v)
}

func isFixedOfOtherLength(t iceberg.Type, n int) bool {
	f, ok := t.(iceberg.FixedType)
	return ok && f.Len() != n
}

// appendDefault appends the JSON of a default of any type: structs are
// objects keyed by field id (a missing key takes the field's own
// initial-default), lists arrays, maps {"keys":[…],"values":[…]}.
func appendDefault(b []byte, t iceberg.Type, v any, enc *encode.Options, s *encode.Scratch) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	switch t := t.(type) {
	case *iceberg.StructType:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("struct default is a %T, not an object", v)
		}
		b = append(b, '{')
		for i, f := range t.FieldList {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, encode.FieldKey(f.Name)...)
			fv, ok := m[strconv.Itoa(f.ID)]
			if !ok {
				fv = f.InitialDefault
			}
			var err error
			if b, err = appendDefault(b, f.Type, fv, enc, s); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case *iceberg.ListType:
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("list default is a %T, not an array", v)
		}
		b = append(b, '[')
		for i, e := range l {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendDefault(b, t.Element, e, enc, s); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case *iceberg.MapType:
		m, ok := v.(map[string]any)
		keys, kok := m["keys"].([]any)
		values, vok := m["values"].([]any)
		if !ok || !kok || !vok || len(keys) != len(values) {
			return nil, fmt.Errorf("map default is not {\"keys\":[…],\"values\":[…]} of equal lengths")
		}
		_, stringKeys := t.KeyType.(iceberg.StringType)
		open, end := byte('['), byte(']')
		if stringKeys {
			open, end = '{', '}'
		}
		b = append(b, open)
		for i := range keys {
			if stringKeys && keys[i] == nil {
				return nil, fmt.Errorf("map default has a null key")
			}
			if i > 0 {
				b = append(b, ',')
			}
			if !stringKeys {
				b = append(b, `{"key":`...)
			}
			var err error
			if b, err = appendDefault(b, t.KeyType, keys[i], enc, s); err != nil {
				return nil, err
			}
			if stringKeys {
				b = append(b, ':')
			} else {
				b = append(b, `,"value":`...)
			}
			if b, err = appendDefault(b, t.ValueType, values[i], enc, s); err != nil {
				return nil, err
			}
			if !stringKeys {
				b = append(b, '}')
			}
		}
		return append(b, end), nil
	case iceberg.UnknownType:
		return append(b, "null"...), nil
	}
	pv, vt, err := defaultValue(t, v)
	if err != nil {
		return nil, err
	}
	if pv.IsNull() {
		return append(b, "null"...), nil
	}
	return encode.AppendValue(b, encode.ValuesOf(pv), 0, &vt, enc, s), nil
}
