package tablegen

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go/table"
	geoarrow "github.com/geoarrow/geoarrow-go"
	"github.com/google/uuid"
)

// OracleRows reads tbl at snapshotID with iceberg-go alone (Scan.PlanFiles,
// then Scan.ReadTasks, which applies every kind of delete) and returns one
// JSON object per live row, keys in schema order, values encoded as DESIGN.md
// "Values" says with the default options: timestamps as integer epoch
// milliseconds truncated toward zero, dates as epoch milliseconds of midnight
// UTC, time as microseconds since midnight, decimals as exact strings that
// keep the scale, binary and fixed as standard base64, uuid as its canonical
// string, float and double as strconv 'g' -1 with the value's bit size, NaN
// and ±Infinity as null, structs and lists nested, maps with string keys as
// objects and other maps as [{"key":…,"value":…}], a variant as the JSON
// it encodes (as appendVariant spells it), geometry and geography as the
// WKT go-geom writes, unknown as null.
//
// Rows come in the order of their data files' paths (then split start), and
// in file order within a file. Strings are escaped as encoding/json escapes
// them, except that <, > and & are left alone; compare parsed JSON, not bytes,
// against an encoder that makes other choices.
func OracleRows(ctx context.Context, tbl *table.Table, snapshotID int64) ([]string, error) {
	return oracleRows(ctx, tbl, snapshotID)
}

// OracleLineageRows is OracleRows with iceberg-go's row lineage
// (table.WithRowLineage): _row_id and _last_updated_sequence_number after
// the schema's columns, stored or inherited as iceberg-go works them out.
func OracleLineageRows(ctx context.Context, tbl *table.Table, snapshotID int64) ([]string, error) {
	return oracleRows(ctx, tbl, snapshotID, table.WithRowLineage())
}

func oracleRows(ctx context.Context, tbl *table.Table, snapshotID int64, opts ...table.ScanOption) (_ []string, err error) {
	scan := tbl.Scan(append([]table.ScanOption{table.WithSnapshotID(snapshotID)}, opts...)...)
	defer func() {
		if cerr := scan.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close oracle scan of %s: %w", identString(tbl.Identifier()), cerr))
		}
	}()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan oracle scan of %s at snapshot %d: %w", identString(tbl.Identifier()), snapshotID, err)
	}
	slices.SortFunc(tasks, func(a, b table.FileScanTask) int {
		return cmp.Or(strings.Compare(a.File.FilePath(), b.File.FilePath()), cmp.Compare(a.Start, b.Start))
	})
	sc, records, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return nil, fmt.Errorf("read oracle scan of %s at snapshot %d: %w", identString(tbl.Identifier()), snapshotID, err)
	}
	keys := make([][]byte, sc.NumFields())
	for i, f := range sc.Fields() {
		keys[i] = appendJSONString(nil, f.Name)
	}
	rows := []string{}
	var buf []byte
	for rec, err := range records {
		if err != nil {
			return nil, fmt.Errorf("read oracle rows of %s at snapshot %d: %w", identString(tbl.Identifier()), snapshotID, err)
		}
		for r := range int(rec.NumRows()) {
			buf = append(buf[:0], '{')
			for c, col := range rec.Columns() {
				if c > 0 {
					buf = append(buf, ',')
				}
				buf = append(append(buf, keys[c]...), ':')
				if buf, err = appendValue(buf, col, r); err != nil {
					rec.Release()
					return nil, fmt.Errorf("encode column %s of %s: %w", sc.Field(c).Name, identString(tbl.Identifier()), err)
				}
			}
			rows = append(rows, string(append(buf, '}')))
		}
		rec.Release()
	}
	return rows, nil
}

// appendValue appends the JSON encoding of arr[i].
func appendValue(buf []byte, arr arrow.Array, i int) ([]byte, error) {
	if arr.IsNull(i) {
		return append(buf, "null"...), nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return strconv.AppendBool(buf, a.Value(i)), nil
	case *array.Int8:
		return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil
	case *array.Int16:
		return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil
	case *array.Int32:
		return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil
	case *array.Int64:
		return strconv.AppendInt(buf, a.Value(i), 10), nil
	case *array.Uint8:
		return strconv.AppendUint(buf, uint64(a.Value(i)), 10), nil
	case *array.Uint16:
		return strconv.AppendUint(buf, uint64(a.Value(i)), 10), nil
	case *array.Uint32:
		return strconv.AppendUint(buf, uint64(a.Value(i)), 10), nil
	case *array.Uint64:
		return strconv.AppendUint(buf, a.Value(i), 10), nil
	case *array.Float32:
		return appendFloat(buf, float64(a.Value(i)), 32), nil
	case *array.Float64:
		return appendFloat(buf, a.Value(i), 64), nil
	case *array.String:
		return appendJSONString(buf, a.Value(i)), nil
	case *array.LargeString:
		return appendJSONString(buf, a.Value(i)), nil
	case *array.StringView:
		return appendJSONString(buf, a.Value(i)), nil
	case *array.Binary:
		return appendBase64(buf, a.Value(i)), nil
	case *array.LargeBinary:
		return appendBase64(buf, a.Value(i)), nil
	case *array.BinaryView:
		return appendBase64(buf, a.Value(i)), nil
	case *extensions.UUIDArray:
		storage, ok := a.Storage().(*array.FixedSizeBinary)
		if !ok {
			return nil, fmt.Errorf("uuid stored as %s, want fixed_size_binary", a.Storage().DataType())
		}
		u, err := uuid.FromBytes(storage.Value(i))
		if err != nil {
			return nil, fmt.Errorf("decode uuid: %w", err)
		}
		return appendJSONString(buf, u.String()), nil
	case *array.FixedSizeBinary:
		return appendBase64(buf, a.Value(i)), nil
	case *array.Date32:
		return strconv.AppendInt(buf, int64(a.Value(i))*86_400_000, 10), nil
	case *array.Date64:
		return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return strconv.AppendInt(buf, toMillis(int64(a.Value(i)), unit), 10), nil
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		return strconv.AppendInt(buf, toMicros(int64(a.Value(i)), unit), 10), nil
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		return strconv.AppendInt(buf, toMicros(int64(a.Value(i)), unit), 10), nil
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return appendJSONString(buf, decimalString(a.Value(i).BigInt(), scale)), nil
	case *array.Decimal256:
		scale := a.DataType().(*arrow.Decimal256Type).Scale
		return appendJSONString(buf, decimalString(a.Value(i).BigInt(), scale)), nil
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		buf = append(buf, '{')
		for f := range a.NumField() {
			if f > 0 {
				buf = append(buf, ',')
			}
			buf = append(appendJSONString(buf, st.Field(f).Name), ':')
			var err error
			if buf, err = appendValue(buf, a.Field(f), i); err != nil {
				return nil, err
			}
		}
		return append(buf, '}'), nil
	case *array.Map:
		return appendMap(buf, a, i)
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		buf = append(buf, '[')
		for j := start; j < end; j++ {
			if j > start {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendValue(buf, values, int(j)); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case *array.Dictionary:
		return appendValue(buf, a.Dictionary(), a.GetValueIndex(i))
	case *array.Null:
		return append(buf, "null"...), nil
	case *extensions.VariantArray:
		v, err := a.Value(i)
		if err != nil {
			return nil, fmt.Errorf("read variant: %w", err)
		}
		return appendVariant(buf, v)
	case *geoarrow.WKBArray:
		return appendWKT(buf, a.Value(i))
	case array.ExtensionArray:
		return appendValue(buf, a.Storage(), i)
	default:
		return nil, fmt.Errorf("unsupported arrow type %s", arr.DataType())
	}
}

// appendMap encodes a map as an object when its keys are strings, else as
// [{"key":…,"value":…}] in stored order.
func appendMap(buf []byte, a *array.Map, i int) ([]byte, error) {
	start, end := a.ValueOffsets(i)
	keys, items := a.Keys(), a.Items()
	stringKeys := false
	switch keys.DataType().ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		stringKeys = true
	}
	if stringKeys {
		buf = append(buf, '{')
	} else {
		buf = append(buf, '[')
	}
	var err error
	for j := start; j < end; j++ {
		if j > start {
			buf = append(buf, ',')
		}
		if stringKeys {
			if buf, err = appendValue(buf, keys, int(j)); err != nil {
				return nil, err
			}
			buf = append(buf, ':')
		} else {
			buf = append(buf, `{"key":`...)
			if buf, err = appendValue(buf, keys, int(j)); err != nil {
				return nil, err
			}
			buf = append(buf, `,"value":`...)
		}
		if buf, err = appendValue(buf, items, int(j)); err != nil {
			return nil, err
		}
		if !stringKeys {
			buf = append(buf, '}')
		}
	}
	if stringKeys {
		return append(buf, '}'), nil
	}
	return append(buf, ']'), nil
}

// toMillis converts a count of unit since the epoch to milliseconds,
// truncating toward zero.
func toMillis(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1000
	case arrow.Millisecond:
		return v
	case arrow.Microsecond:
		return v / 1000
	default:
		return v / 1_000_000
	}
}

// toMicros converts a count of unit since midnight to microseconds.
func toMicros(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1_000_000
	case arrow.Millisecond:
		return v * 1000
	case arrow.Microsecond:
		return v
	default:
		return v / 1000
	}
}

// appendFloat encodes a float of the given bit size, NaN and ±Inf as null.
func appendFloat(buf []byte, v float64, bits int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(buf, "null"...)
	}
	return strconv.AppendFloat(buf, v, 'g', -1, bits)
}

// decimalString renders unscaled×10^-scale exactly, keeping the scale:
// 1234 at scale 2 is "12.34", -5 at scale 2 is "-0.05".
func decimalString(unscaled *big.Int, scale int32) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	if scale <= 0 {
		if digits != "0" {
			digits += strings.Repeat("0", int(-scale))
		}
		return sign + digits
	}
	if pad := int(scale) + 1 - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	at := len(digits) - int(scale)
	return sign + digits[:at] + "." + digits[at:]
}

func appendBase64(buf, v []byte) []byte {
	buf = append(buf, '"')
	buf = base64.StdEncoding.AppendEncode(buf, v)
	return append(buf, '"')
}

// appendJSONString appends s as a JSON string, escaping as encoding/json does
// except for <, > and &: invalid UTF-8 becomes U+FFFD. It stays apart from
// the sidecar's escaper (internal/jsonstr) on purpose: the oracle shares no
// code with the reader it checks.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// OracleJSONBaseline reads the current snapshot of tbl with iceberg-go's
// Scan.ToArrowRecords and marshals every row with encoding/json to
// io.Discard, the way a straightforward user would: one map[string]any per
// row, filled from Arrow's GetOneForMarshal. It returns the number of rows.
// It is the "iceberg-go ReadTasks + encoding/json" anchor for the sidecar's
// benchmarks, not a reference encoding (it fails on NaN, for one).
func OracleJSONBaseline(ctx context.Context, tbl *table.Table) (n int64, err error) {
	scan := tbl.Scan()
	defer func() {
		if cerr := scan.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close baseline scan of %s: %w", identString(tbl.Identifier()), cerr))
		}
	}()
	sc, records, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return 0, fmt.Errorf("read baseline scan of %s: %w", identString(tbl.Identifier()), err)
	}
	for rec, err := range records {
		if err != nil {
			return n, fmt.Errorf("read baseline rows of %s: %w", identString(tbl.Identifier()), err)
		}
		cols := rec.Columns()
		for r := range int(rec.NumRows()) {
			row := make(map[string]any, len(cols))
			for c, col := range cols {
				row[sc.Field(c).Name] = col.GetOneForMarshal(r)
			}
			b, err := json.Marshal(row)
			if err != nil {
				rec.Release()
				return n, fmt.Errorf("marshal baseline row of %s: %w", identString(tbl.Identifier()), err)
			}
			if _, err := io.Discard.Write(append(b, '\n')); err != nil {
				rec.Release()
				return n, fmt.Errorf("write baseline row of %s: %w", identString(tbl.Identifier()), err)
			}
			n++
		}
		rec.Release()
	}
	return n, nil
}
