package tablegen

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// Field ids of the mixed schema the scenarios use.
const (
	mixedID      = 1
	mixedQty     = 2
	mixedName    = 3
	mixedScore   = 4
	mixedActive  = 5
	mixedDay     = 6
	mixedTS      = 7
	mixedTSTZ    = 8
	mixedPrice   = 9
	mixedPayload = 10
)

// MixedSchema is the schema of every scenario table: id long (required), qty
// int, name string, score double, active boolean, day date, ts timestamp,
// ts_tz timestamptz, price decimal(10,2), payload binary. All columns but id
// hold nulls in some rows; score also holds NaN and ±Infinity, ts and ts_tz
// hold instants before 1970 with sub-millisecond parts, price holds negative
// values, payload holds empty values.
func MixedSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: mixedID, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: mixedQty, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: mixedName, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: mixedScore, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: mixedActive, Name: "active", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: mixedDay, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: mixedTS, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: mixedTSTZ, Name: "ts_tz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: mixedPrice, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: mixedPayload, Name: "payload", Type: iceberg.PrimitiveTypes.Binary},
	)
}

// mixedRow is one row of MixedSchema; a nil pointer (or nil payload) is null.
type mixedRow struct {
	id      int64
	qty     *int32
	name    *string
	score   *float64
	active  *bool
	day     *int32 // days since 1970-01-01
	ts      *int64 // microseconds since the epoch
	tsTZ    *int64 // microseconds since the epoch, UTC
	price   *int64 // unscaled, scale 2
	payload []byte
}

func ptr[T any](v T) *T { return &v }

// mixedNames are the non-null names genMixedRow cycles through; they carry
// what a JSON encoder must escape.
var mixedNames = []string{"ana", "bob", "carol", "dan", `quote "q" and \`, "émile 日本", "<b>&amp;</b>", "tab\tnew\nline"}

// genMixedRow is the deterministic row with the given id.
func genMixedRow(id int64) mixedRow {
	r := mixedRow{id: id}
	if id%5 != 0 {
		r.qty = ptr(int32(id*7%100 - 20))
	}
	if id%7 != 0 {
		r.name = ptr(mixedNames[id%int64(len(mixedNames))])
	}
	switch {
	case id%11 == 0:
	case id%12 == 0:
		r.score = ptr(math.Inf(1))
	case id%13 == 0:
		r.score = ptr(math.NaN())
	case id%14 == 0:
		r.score = ptr(math.Inf(-1))
	default:
		r.score = ptr(float64(id)*0.1 - 0.75)
	}
	if id%3 != 0 {
		r.active = ptr(id%2 == 0)
	}
	if id%9 != 0 {
		r.day = ptr(int32(id*3677%40000 - 10000))
	}
	if id%4 != 0 {
		// Odd microsecond counts on both sides of the epoch: truncation
		// toward zero and the sign of sub-millisecond parts both show.
		r.ts = ptr(id*79_191_234_567_891%2_000_000_000_000_000 - 500_000_000_000_000)
	}
	if id%6 != 0 {
		r.tsTZ = ptr(1_700_000_000_000_000 - id*86_400_000_123 + 1)
	}
	if id%8 != 0 {
		r.price = ptr(id*12_345%2_000_000 - 500_000)
	}
	switch id % 10 {
	case 0:
	case 5:
		r.payload = []byte{}
	default:
		r.payload = []byte{byte(id), 0xff, 0x00, byte(id * 31)}
	}
	return r
}

// genMixedRows returns the rows with ids from..to, inclusive.
func genMixedRows(from, to int64) []mixedRow {
	rows := make([]mixedRow, 0, to-from+1)
	for id := from; id <= to; id++ {
		rows = append(rows, genMixedRow(id))
	}
	return rows
}

// mixedBatch builds rows as a record batch of sc, MixedSchema in Arrow.
func mixedBatch(sc *arrow.Schema, rows []mixedRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		appendOpt(b.Field(1).(*array.Int32Builder), r.qty, func(v int32) int32 { return v })
		appendOpt(b.Field(2).(*array.StringBuilder), r.name, func(v string) string { return v })
		appendOpt(b.Field(3).(*array.Float64Builder), r.score, func(v float64) float64 { return v })
		appendOpt(b.Field(4).(*array.BooleanBuilder), r.active, func(v bool) bool { return v })
		appendOpt(b.Field(5).(*array.Date32Builder), r.day, func(v int32) arrow.Date32 { return arrow.Date32(v) })
		appendOpt(b.Field(6).(*array.TimestampBuilder), r.ts, func(v int64) arrow.Timestamp { return arrow.Timestamp(v) })
		appendOpt(b.Field(7).(*array.TimestampBuilder), r.tsTZ, func(v int64) arrow.Timestamp { return arrow.Timestamp(v) })
		appendOpt(b.Field(8).(*array.Decimal128Builder), r.price, decimal128.FromI64)
		if r.payload == nil {
			b.Field(9).AppendNull()
		} else {
			b.Field(9).(*array.BinaryBuilder).Append(r.payload)
		}
	}
	return b.NewRecordBatch()
}

// appendOpt appends conv(*v), or a null when v is nil.
func appendOpt[T, A any](b interface {
	Append(A)
	AppendNull()
}, v *T, conv func(T) A) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(conv(*v))
}
