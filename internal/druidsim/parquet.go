package druidsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// parquetRows reads a Parquet file as Druid's Parquet input format does
// (extensions-core/parquet-extensions/src/main/java/org/apache/druid/data/
// input/parquet/simple/ParquetGroupConverter.java, convertPrimitiveField),
// which goes by a column's legacy OriginalType:
//
//   - DATE → epoch milliseconds; TIME_MICROS and TIME_MILLIS → the raw
//     value; TIMESTAMP_MICROS → milliseconds (truncated toward zero),
//     TIMESTAMP_MILLIS as it is; INT96 → milliseconds;
//   - a TIMESTAMP(NANOS) has no OriginalType: its raw nanoseconds;
//   - DECIMAL over INT32 or INT64 → a BigDecimal of the scaled value (Druid
//     29 and later, apache/druid#15715; before, the unscaled integer); over
//     FIXED_LEN_BYTE_ARRAY or BINARY → exact above precision 18, and
//     through a double division (unscaled / 10^scale, BigDecimal.valueOf)
//     up to it;
//   - UTF8, ENUM, JSON → String; a UUID has no OriginalType: its 16 bytes,
//     like any other binary (byte[], or a UTF-8 String with
//     binaryAsString);
//   - lists → List, maps → Map with keys as strings, structs → Map.
//
// Columns are keyed by the file's names: Druid finds a column by name.
func (d *Druid) parquetRows(data []byte, binaryAsString bool) ([]map[string]any, error) {
	if bytes.HasPrefix(data, []byte("Obj\x01")) {
		// An Avro Object Container File: parquet-java's ParquetFileReader
		// (readFooter) refuses any file without the PAR1 magic at its end.
		return nil, errors.New("open parquet: an Avro file is not a Parquet file (no PAR1 magic): " +
			"the raw-file path must never carry one")
	}
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("open parquet: %w", err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read parquet schema: %w", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("read parquet: %w", err)
	}
	defer tbl.Release()
	conv := parquetConverter{schema: pr.MetaData().Schema, binaryAsString: binaryAsString, version: d.version()}
	rows := make([]map[string]any, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for c := range int(tbl.NumCols()) {
		field := fr.Manifest.Fields[c]
		r := 0
		for _, ch := range tbl.Column(c).Data().Chunks() {
			for i := range ch.Len() {
				v, err := conv.value(ch, i, &field)
				if err != nil {
					return nil, fmt.Errorf("column %s: %w", field.Field.Name, err)
				}
				rows[r][field.Field.Name] = v
				r++
			}
		}
	}
	return rows, nil
}

type parquetConverter struct {
	schema         *schema.Schema
	binaryAsString bool
	version        int
}

// physical is the physical type of the Parquet column a leaf field reads.
func (c parquetConverter) physical(f *pqarrow.SchemaField) parquet.Type {
	if f.ColIndex < 0 || f.ColIndex >= c.schema.NumColumns() {
		return parquet.Types.Undefined
	}
	return c.schema.Column(f.ColIndex).PhysicalType()
}

func (c parquetConverter) value(arr arrow.Array, i int, f *pqarrow.SchemaField) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	physical := c.physical(f)
	bin := func(b []byte) any {
		if c.binaryAsString {
			return string(b)
		}
		return append([]byte(nil), b...)
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint32:
		return int64(a.Value(i)), nil
	case *array.Uint64:
		return int64(a.Value(i)), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return bin(a.Value(i)), nil
	case *array.LargeBinary:
		return bin(a.Value(i)), nil
	case *array.FixedSizeBinary:
		return bin(a.Value(i)), nil
	case array.ExtensionArray:
		// A UUID: no OriginalType, so its bytes.
		if fb, ok := a.Storage().(*array.FixedSizeBinary); ok {
			return bin(fb.Value(i)), nil
		}
		return nil, fmt.Errorf("extension %s is not modelled", a.DataType())
	case *array.Date32:
		return int64(a.Value(i)) * 86_400_000, nil
	case *array.Time32:
		return int64(a.Value(i)), nil
	case *array.Time64:
		// TIME_MICROS as it is; TIME(NANOS) has no OriginalType, so its
		// raw value too.
		return int64(a.Value(i)), nil
	case *array.Timestamp:
		v := int64(a.Value(i))
		switch unit := a.DataType().(*arrow.TimestampType).Unit; {
		case physical == parquet.Types.Int96:
			return floorDiv(v, 1_000_000), nil
		case unit == arrow.Millisecond:
			return v, nil
		case unit == arrow.Microsecond:
			return v / 1000, nil
		default:
			return v, nil
		}
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		return c.decimal(a.Value(i).BigInt(), int(dt.Precision), int(dt.Scale), physical), nil
	case *array.Decimal256:
		dt := a.DataType().(*arrow.Decimal256Type)
		return c.decimal(a.Value(i).BigInt(), int(dt.Precision), int(dt.Scale), physical), nil
	case *array.Struct:
		out := map[string]any{}
		for k := range a.NumField() {
			v, err := c.value(a.Field(k), i, &f.Children[k])
			if err != nil {
				return nil, err
			}
			out[f.Children[k].Field.Name] = v
		}
		return out, nil
	case *array.Map:
		start, end := a.ValueOffsets(i)
		kv := &f.Children[0]
		out := map[string]any{}
		for j := int(start); j < int(end); j++ {
			k, err := c.value(a.Keys(), j, &kv.Children[0])
			if err != nil {
				return nil, err
			}
			v, err := c.value(a.Items(), j, &kv.Children[1])
			if err != nil {
				return nil, err
			}
			out[javaString(k)] = v
		}
		return out, nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		var out []any
		for j := int(start); j < int(end); j++ {
			v, err := c.value(a.ListValues(), j, &f.Children[0])
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("arrow type %s is not modelled", arr.DataType())
}

// decimal converts a Parquet DECIMAL as ParquetGroupConverter does.
func (c parquetConverter) decimal(unscaled *big.Int, precision, scale int, physical parquet.Type) any {
	switch physical {
	case parquet.Types.Int32, parquet.Types.Int64:
		if c.version < 29 {
			return unscaled.Int64()
		}
		return Decimal{Unscaled: unscaled, Scale: scale}
	}
	if precision > 18 {
		return Decimal{Unscaled: unscaled, Scale: scale}
	}
	// convertBinaryToDecimal: BigDecimal.valueOf(unscaledNew / Math.pow(10, scale)).
	f := float64(unscaled.Int64()) / math.Pow(10, float64(scale))
	r, _ := new(big.Rat).SetString(javaDouble(f, 64))
	return ratDecimal(r)
}

// ratDecimal is the BigDecimal of a decimal fraction read from
// Double.toString's digits.
func ratDecimal(r *big.Rat) Decimal {
	scale := 0
	x := new(big.Rat).Set(r)
	ten := big.NewRat(10, 1)
	for !x.IsInt() && scale < 40 {
		x.Mul(x, ten)
		scale++
	}
	return Decimal{Unscaled: new(big.Int).Set(x.Num()), Scale: scale}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
