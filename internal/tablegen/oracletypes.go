package tablegen

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet/variant"
	"github.com/google/uuid"
	"github.com/twpayne/go-geom"
	"github.com/twpayne/go-geom/encoding/wkb"
	"github.com/twpayne/go-geom/encoding/wkbcommon"
	"github.com/twpayne/go-geom/encoding/wkt"
)

// appendVariant encodes a variant value as DESIGN.md "Values" says, from
// arrow-go's reading of it (the oracle shares no code with the reader's
// variant decoder): objects in stored order, decimals as exact strings,
// dates as epoch milliseconds of midnight, timestamps as epoch
// milliseconds truncated toward zero, times as microseconds, binary as
// base64, uuids in their canonical form.
func appendVariant(buf []byte, v variant.Value) ([]byte, error) {
	switch x := v.Value().(type) {
	case nil:
		return append(buf, "null"...), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case int8:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case float32:
		return appendFloat(buf, float64(x), 32), nil
	case float64:
		return appendFloat(buf, x, 64), nil
	case string:
		return appendJSONString(buf, x), nil
	case []byte:
		return appendBase64(buf, x), nil
	case uuid.UUID:
		return appendJSONString(buf, x.String()), nil
	case arrow.Date32:
		return strconv.AppendInt(buf, int64(x)*86_400_000, 10), nil
	case arrow.Time64:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case arrow.Timestamp:
		unit := arrow.Microsecond
		if t := v.Type(); t == variant.TimestampNanos || t == variant.TimestampNanosNTZ {
			unit = arrow.Nanosecond
		}
		return strconv.AppendInt(buf, toMillis(int64(x), unit), 10), nil
	case variant.DecimalValue[decimal.Decimal32]:
		return appendJSONString(buf, decimalString(big.NewInt(int64(x.Value.(decimal.Decimal32))), int32(x.Scale))), nil
	case variant.DecimalValue[decimal.Decimal64]:
		return appendJSONString(buf, decimalString(big.NewInt(int64(x.Value.(decimal.Decimal64))), int32(x.Scale))), nil
	case variant.DecimalValue[decimal.Decimal128]:
		return appendJSONString(buf, decimalString(x.Value.(decimal128.Num).BigInt(), int32(x.Scale))), nil
	case variant.ObjectValue:
		buf = append(buf, '{')
		first := true
		for k, fv := range x.Values() {
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(appendJSONString(buf, k), ':')
			var err error
			if buf, err = appendVariant(buf, fv); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case variant.ArrayValue:
		buf = append(buf, '[')
		first := true
		for ev := range x.Values() {
			if !first {
				buf = append(buf, ',')
			}
			first = false
			var err error
			if buf, err = appendVariant(buf, ev); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	default:
		return nil, fmt.Errorf("variant value of Go type %T", x)
	}
}

// appendWKT encodes WKB as OracleWKT spells it, a JSON string.
func appendWKT(buf, raw []byte) ([]byte, error) {
	s, err := OracleWKT(raw)
	if err != nil {
		return nil, err
	}
	return appendJSONString(buf, s), nil
}

// OracleWKT decodes WKB with go-geom (empty points as NaN coordinates) and
// writes it as WKT with go-geom, but for the members of a multi-geometry,
// which it writes one by one as the OGC grammar and JTS do: a multipoint's
// points parenthesized ("MULTIPOINT ((1 2), (3 4))", where go-geom writes
// "MULTIPOINT (1 2, 3 4)"), an empty member as EMPTY ("MULTIPOLYGON
// (EMPTY)", where go-geom writes "MULTIPOLYGON ((EMPTY))"). Numbers are
// go-geom's: no exponent. A point whose coordinates are all NaN is empty
// whatever the NaNs' bits, as GEOS and the spec's readers test it
// (isnan); go-geom takes only its own NaN for empty.
func OracleWKT(raw []byte) (string, error) {
	g, err := wkb.Unmarshal(raw, wkbcommon.WKBOptionEmptyPointHandling(wkbcommon.EmptyPointHandlingNaN))
	if err != nil {
		return "", fmt.Errorf("decode WKB: %w", err)
	}
	return oracleWKT(g)
}

func oracleWKT(g geom.T) (string, error) {
	var elems []geom.T
	switch g := g.(type) {
	case *geom.Point:
		if !g.Empty() && !slices.ContainsFunc(g.FlatCoords(), func(f float64) bool { return !math.IsNaN(f) }) {
			return wkt.Marshal(geom.NewPointEmpty(g.Layout()))
		}
		return wkt.Marshal(g)
	case *geom.MultiPoint:
		for i := range g.NumPoints() {
			elems = append(elems, g.Point(i))
		}
	case *geom.MultiLineString:
		for i := range g.NumLineStrings() {
			elems = append(elems, g.LineString(i))
		}
	case *geom.MultiPolygon:
		for i := range g.NumPolygons() {
			elems = append(elems, g.Polygon(i))
		}
	case *geom.GeometryCollection:
		elems = g.Geoms()
	default:
		return wkt.Marshal(g)
	}
	// The type and dimensions, as go-geom writes them for the empty
	// geometry of the same layout.
	head, err := wkt.Marshal(g)
	if err != nil {
		return "", fmt.Errorf("encode WKT: %w", err)
	}
	head, _, _ = strings.Cut(head, "(")
	if len(elems) == 0 {
		return head, nil
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteByte('(')
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		s, err := oracleWKT(e)
		if err != nil {
			return "", err
		}
		if _, gc := g.(*geom.GeometryCollection); !gc {
			// A member of a multi-geometry without its type: "POINT (1 2)"
			// as "(1 2)", "POLYGON EMPTY" as "EMPTY".
			_, s, _ = strings.Cut(s, " ")
			s = strings.TrimLeft(s, "ZM ")
		}
		b.WriteString(s)
	}
	b.WriteByte(')')
	return b.String(), nil
}
