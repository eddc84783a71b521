package tablegen

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// Field ids of the Evolution table; they never change, names and types do.
const (
	evoID    = 1
	evoName  = 2 // "name", renamed "customer"
	evoQty   = 3 // int, promoted to long
	evoScore = 4 // float, promoted to double
	evoPrice = 5 // decimal(9,2), widened to decimal(18,2)
	evoNote  = 6 // added with schema 1
	evoRank  = 7 // added with schema 2
)

// evoRow is one row of the Evolution table; nil is null. score32 is set in
// rows written while score was a float, score64 in rows written after.
type evoRow struct {
	id      int64
	name    *string
	qty     *int64
	score32 *float32
	score64 *float64
	price   *int64 // unscaled, scale 2
	note    *string
	rank    *int32
}

var (
	// evoA is data file 1, written under schema 0.
	evoA = []evoRow{
		{id: 1, name: ptr("ana"), qty: ptr[int64](10), score32: ptr[float32](0.1), price: ptr[int64](1234)},
		{id: 2, name: ptr("bob"), qty: ptr[int64](30), score32: ptr[float32](1.5), price: ptr[int64](-5)},
		{id: 3, name: ptr("carol"), qty: ptr[int64](20), price: ptr[int64](999_999_999)},
		{id: 4, score32: ptr[float32](-2.25)},
		{id: 5, name: ptr("bob"), qty: ptr[int64](40), score32: ptr[float32](3.4028235e38), price: ptr[int64](100)},
		{id: 6, name: ptr("dan"), qty: ptr[int64](30), score32: ptr[float32](0.3), price: ptr[int64](1234)},
	}
	// evoB is data file 2, written under schema 1.
	evoB = []evoRow{
		{id: 7, name: ptr("eve"), qty: ptr[int64](5_000_000_000), score32: ptr[float32](0.7), price: ptr[int64](250), note: ptr("added later")},
		{id: 8, name: ptr("bob"), qty: ptr[int64](1)},
		{id: 9, name: ptr("carol"), qty: ptr[int64](30), score32: ptr[float32](2.5), price: ptr[int64](1234), note: ptr("n9")},
		{id: 10, name: ptr("frank"), qty: ptr[int64](-3_000_000_000), score32: ptr[float32](0.2), price: ptr[int64](-999_999_999)},
	}
	// evoC is data file 3, written under schema 2.
	evoC = []evoRow{
		{id: 11, name: ptr("bob"), qty: ptr[int64](30), score64: ptr(0.1), price: ptr[int64](123_456_789_012_345_678), note: ptr("c"), rank: ptr[int32](1)},
		{id: 12, name: ptr("carol"), qty: ptr[int64](7_000_000_000), price: ptr[int64](1234)},
		{id: 13, score64: ptr(-1e300), rank: ptr[int32](2147483647)},
		{id: 14, name: ptr("gina"), qty: ptr[int64](2), score64: ptr(2.5), price: ptr[int64](4242), note: ptr("z"), rank: ptr[int32](-1)},
	}
)

// evoSchemaCols are the column names of schemas 0, 1 and 2.
var evoSchemaCols = [][]string{
	{"id", "name", "qty", "score", "price"},
	{"id", "customer", "qty", "score", "price", "note"},
	{"id", "customer", "qty", "score", "price", "note", "rank"},
}

// evoJSON renders r as read under schema version v (0, 1 or 2).
func evoJSON(r evoRow, v int) string {
	score := jNull
	switch {
	case r.score64 != nil:
		score = jFloat(*r.score64, 64)
	case r.score32 != nil && v < 2:
		score = jFloat(float64(*r.score32), 32)
	case r.score32 != nil:
		// Promoted: the float's exact value, spelled as a double.
		score = jFloat(float64(*r.score32), 64)
	}
	vals := []string{jInt(&r.id), jStr(r.name), jInt(r.qty), score, jDec(r.price, 2)}
	if v >= 1 {
		vals = append(vals, jStr(r.note))
	}
	if v >= 2 {
		vals = append(vals, jInt(r.rank))
	}
	return jObject(evoSchemaCols[v], vals)
}

// evoLive renders the rows of groups whose ids are in live, under schema v.
func evoLive(v int, live []int64, groups ...[]evoRow) []string {
	out := []string{}
	for _, g := range groups {
		for _, r := range g {
			for _, id := range live {
				if r.id == id {
					out = append(out, evoJSON(r, v))
				}
			}
		}
	}
	return out
}

// Evolution writes a format-version 2 table whose schema changes between
// its writes, and returns it with the expected rows of each of its six
// snapshots. Field ids: id 1 (long, required), 2, 3, 4, 5, then 6 and 7.
//
// Schema 0: id long, name string, qty int, score float, price decimal(9,2).
// Schema 1: name renamed to customer, qty promoted to long, note string added.
// Schema 2: score promoted to double, price widened to decimal(18,2), rank int
// added. Every column but id holds nulls somewhere.
//
//  1. append A (data file 1, schema 0): ids 1-6.
//  2. append B (data file 2, schema 1): ids 7-10, qty values outside the int
//     range, note set in some rows.
//  3. equality delete on customer (field 2), written under schema 1, key
//     "bob": deletes 2, 5, 8.
//  4. (after schema 2) two equality delete files that were written under
//     schema 0 right after snapshot 1 and are only committed now, so they
//     apply to A and B: one on qty with the int key 30 (deletes 6 and 9; B
//     stores qty as long), one on name, the old name of customer, with the
//     key "carol" (deletes 3 and 9).
//  5. append C (data file 3, schema 2): ids 11-14; 11 is a "bob" with qty
//     30 and 12 a "carol": the earlier deletes do not apply to C.
//  6. an equality delete on price (decimal(18,2)), written under schema 2,
//     key 12.34 (deletes 1 of A, stored as decimal(9,2), and 12 of C), and a
//     positional delete of B pos 3 (id 10).
//
// Live ids: 1-6; 1-10; 1,3,4,6,7,9,10; 1,4,7,10; 1,4,7,10-14; 4,7,11,13,14.
// Each snapshot is read in its own schema. Date to timestamp promotion is not
// here: iceberg-go v0.7.0 refuses it (iceberg.PromoteType allows only
// int→long, float→double, decimal precision, string↔binary, fixed[16]→uuid).
func Evolution(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*Built, error) {
	sc0 := iceberg.NewSchema(0,
		iceberg.NestedField{ID: evoID, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: evoName, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: evoQty, Name: "qty", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: evoScore, Name: "score", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: evoPrice, Name: "price", Type: iceberg.DecimalTypeOf(9, 2)},
	)
	tbl, err := icewrite.CreateTable(ctx, cat, ident, sc0, 2)
	if err != nil {
		return nil, err
	}
	b := &Built{}

	// 1. A under schema 0.
	batch, err := evoBatch(tbl, evoA)
	if err != nil {
		return nil, err
	}
	if tbl, _, err = icewrite.AppendBatch(ctx, tbl, 1, batch); err != nil {
		return nil, err
	}
	b.record(tbl, "append A (ids 1-6) under schema 0", evoSchemaCols[0], evoLive(0, idRange(1, 6), evoA))

	// Delete files written now, under schema 0, committed in snapshot 4.
	oldQty, err := eqDeletes(ctx, tbl, []int{evoQty}, []any{int32(30)})
	if err != nil {
		return nil, err
	}
	oldName, err := eqDeletes(ctx, tbl, []int{evoName}, []any{"carol"})
	if err != nil {
		return nil, err
	}

	// Schema 1.
	if tbl, err = updateSchema(ctx, tbl, func(u *table.UpdateSchema) {
		u.RenameColumn([]string{"name"}, "customer").
			UpdateColumn([]string{"qty"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.PrimitiveTypes.Int64}}).
			AddColumn([]string{"note"}, iceberg.PrimitiveTypes.String, "", false, nil)
	}); err != nil {
		return nil, err
	}

	// 2. B under schema 1.
	if batch, err = evoBatch(tbl, evoB); err != nil {
		return nil, err
	}
	tbl, fileB, err := icewrite.AppendBatch(ctx, tbl, 2, batch)
	if err != nil {
		return nil, err
	}
	b.record(tbl, "append B (ids 7-10) under schema 1", evoSchemaCols[1], evoLive(1, idRange(1, 10), evoA, evoB))

	// 3. Equality delete on the renamed column.
	byCustomer, err := eqDeletes(ctx, tbl, []int{evoName}, []any{"bob"})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, byCustomer); err != nil {
		return nil, err
	}
	b.record(tbl, `equality delete on customer = "bob" (schema 1)`, evoSchemaCols[1],
		evoLive(1, []int64{1, 3, 4, 6, 7, 9, 10}, evoA, evoB))

	// Schema 2.
	if tbl, err = updateSchema(ctx, tbl, func(u *table.UpdateSchema) {
		u.UpdateColumn([]string{"score"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.PrimitiveTypes.Float64}}).
			UpdateColumn([]string{"price"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.DecimalTypeOf(18, 2)}}).
			AddColumn([]string{"rank"}, iceberg.PrimitiveTypes.Int32, "", false, nil)
	}); err != nil {
		return nil, err
	}

	// 4. The schema 0 delete files.
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, append(oldQty, oldName...)); err != nil {
		return nil, err
	}
	b.record(tbl, `equality deletes written under schema 0: qty = 30 (int), name = "carol"`, evoSchemaCols[2],
		evoLive(2, []int64{1, 4, 7, 10}, evoA, evoB))

	// 5. C under schema 2.
	if batch, err = evoBatch(tbl, evoC); err != nil {
		return nil, err
	}
	if tbl, _, err = icewrite.AppendBatch(ctx, tbl, 3, batch); err != nil {
		return nil, err
	}
	b.record(tbl, "append C (ids 11-14) under schema 2", evoSchemaCols[2],
		evoLive(2, []int64{1, 4, 7, 10, 11, 12, 13, 14}, evoA, evoB, evoC))

	// 6. Equality delete on the widened decimal, positional delete in B.
	byPrice, err := eqDeletes(ctx, tbl, []int{evoPrice}, []any{decimal128.FromI64(1234)})
	if err != nil {
		return nil, err
	}
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes.parquet"), []icewrite.PositionalDelete{{FilePath: fileB.FilePath(), Pos: 3}})
	if err != nil {
		return nil, err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, append(byPrice, pos)); err != nil {
		return nil, err
	}
	b.record(tbl, "equality delete on price = 12.34 (decimal(18,2)), positional delete of B pos 3", evoSchemaCols[2],
		evoLive(2, []int64{4, 7, 11, 13, 14}, evoA, evoB, evoC))
	return b, nil
}

// updateSchema applies change to tbl's schema in its own commit.
func updateSchema(ctx context.Context, tbl *table.Table, change func(*table.UpdateSchema), opts ...table.UpdateSchemaOption) (*table.Table, error) {
	tx := tbl.NewTransaction()
	u := tx.UpdateSchema(true, false, opts...)
	change(u)
	if err := u.Commit(); err != nil {
		return nil, fmt.Errorf("stage schema update on %s: %w", identString(tbl.Identifier()), err)
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit schema update on %s: %w", identString(tbl.Identifier()), err)
	}
	return out, nil
}

// evoBatch builds rows in tbl's current schema, whichever of the three it is.
func evoBatch(tbl *table.Table, rows []evoRow) (arrow.RecordBatch, error) {
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, f := range sc.Fields() {
		id, err := arrowFieldID(f)
		if err != nil {
			return nil, err
		}
		fb := b.Field(i)
		for _, r := range rows {
			switch id {
			case evoID:
				fb.(*array.Int64Builder).Append(r.id)
			case evoName:
				appendOpt(fb.(*array.StringBuilder), r.name, func(v string) string { return v })
			case evoQty:
				switch qb := fb.(type) {
				case *array.Int32Builder:
					appendOpt(qb, r.qty, func(v int64) int32 { return int32(v) })
				case *array.Int64Builder:
					appendOpt(qb, r.qty, func(v int64) int64 { return v })
				}
			case evoScore:
				switch sb := fb.(type) {
				case *array.Float32Builder:
					appendOpt(sb, r.score32, func(v float32) float32 { return v })
				case *array.Float64Builder:
					appendOpt(sb, r.score64, func(v float64) float64 { return v })
				}
			case evoPrice:
				appendOpt(fb.(*array.Decimal128Builder), r.price, decimal128.FromI64)
			case evoNote:
				appendOpt(fb.(*array.StringBuilder), r.note, func(v string) string { return v })
			case evoRank:
				appendOpt(fb.(*array.Int32Builder), r.rank, func(v int32) int32 { return v })
			default:
				return nil, fmt.Errorf("%w: evolution table has no field id %d", ErrInvalidArgument, id)
			}
		}
	}
	return b.NewRecordBatch(), nil
}
