// Package demo writes the sidecar's demo tables (sidecar serve --demo): two
// small format-version 2 tables, one with positional and equality deletes and
// one without, built with internal/icewrite so that the same call writes the
// same data and delete files every time. The package example writes the
// demo warehouse the sidecar serves with --demo.
package demo

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// Identifiers of the demo tables.
var (
	Orders    = table.Identifier{"demo", "orders"}
	Customers = table.Identifier{"demo", "customers"}
)

// OrdersLive are the order_id values of the live rows of demo.orders.
var OrdersLive = []int64{1001, 1003, 1007}

// order is one row of demo.orders.
type order struct {
	orderID, customerID int64
	amount              int64 // cents: decimal(10,2) unscaled
	status              string
	ts                  time.Time
}

var (
	ordersA = []order{
		{1001, 501, 12999, "shipped", time.Date(2024, 3, 1, 9, 15, 0, 0, time.UTC)},
		{1002, 502, 4550, "cancelled", time.Date(2024, 3, 1, 10, 2, 30, 0, time.UTC)},
		{1003, 503, 31000, "delivered", time.Date(2024, 3, 2, 14, 47, 12, 0, time.UTC)},
		{1004, 501, 1875, "returned", time.Date(2024, 3, 3, 8, 5, 0, 0, time.UTC)},
		{1005, 504, 99900, "pending", time.Date(2024, 3, 4, 16, 20, 45, 0, time.UTC)},
	}
	ordersB = []order{
		{1006, 505, 6240, "cancelled", time.Date(2024, 3, 5, 11, 11, 11, 0, time.UTC)},
		{1007, 502, 24000, "shipped", time.Date(2024, 3, 6, 19, 30, 0, 0, time.UTC)},
	}
)

// customer is one row of demo.customers.
type customer struct {
	customerID    int64
	name, country string
	signup        time.Time
}

var customers = []customer{
	{501, "Ana Souza", "BR", time.Date(2023, 11, 14, 0, 0, 0, 0, time.UTC)},
	{502, "Lukas Meyer", "DE", time.Date(2024, 1, 9, 0, 0, 0, 0, time.UTC)},
	{503, "Priya Raman", "IN", time.Date(2022, 6, 30, 0, 0, 0, 0, time.UTC)},
	{504, "Emily Chen", "US", time.Date(2024, 2, 21, 0, 0, 0, 0, time.UTC)},
	{505, "Kenji Watanabe", "JP", time.Date(2023, 8, 2, 0, 0, 0, 0, time.UTC)},
}

// Write creates the two demo tables in cat, each only if it does not exist
// yet; an existing table is left as it is, even if an earlier Write stopped
// half-way through building it. Both are format-version 2, unpartitioned.
//
// demo.orders (order_id long required, customer_id long, amount
// decimal(10,2), status string, order_ts timestamptz) has four snapshots:
//
//  1. append, data file A (00000-0-…-000000000001-00001.parquet):
//     1001 | 501 | 129.99 | shipped   | 2024-03-01T09:15:00Z
//     1002 | 502 |  45.50 | cancelled | 2024-03-01T10:02:30Z
//     1003 | 503 | 310.00 | delivered | 2024-03-02T14:47:12Z
//     1004 | 501 |  18.75 | returned  | 2024-03-03T08:05:00Z
//     1005 | 504 | 999.00 | pending   | 2024-03-04T16:20:45Z
//  2. append, data file B (…-000000000002-00001.parquet):
//     1006 | 505 |  62.40 | cancelled | 2024-03-05T11:11:11Z
//     1007 | 502 | 240.00 | shipped   | 2024-03-06T19:30:00Z
//  3. delete: one positional delete file naming both data files,
//     (A, pos 1), (A, pos 3), (B, pos 0): orders 1002, 1004 and 1006.
//  4. delete: one equality delete file on order_id, with the key 1005.
//
// Its live rows are 1001, 1003 and 1007 (OrdersLive); the first snapshot
// has 5 rows, the second 7, the third 4.
//
// demo.customers (customer_id long required, name string, country string,
// signup_date date) has one append snapshot with one data file and no
// deletes, so it is served on the raw-file path:
//
//	501 | Ana Souza      | BR | 2023-11-14
//	502 | Lukas Meyer    | DE | 2024-01-09
//	503 | Priya Raman    | IN | 2022-06-30
//	504 | Emily Chen     | US | 2024-02-21
//	505 | Kenji Watanabe | JP | 2023-08-02
func Write(ctx context.Context, cat catalog.Catalog) error {
	for _, t := range []struct {
		ident table.Identifier
		build func(context.Context, catalog.Catalog) error
	}{
		{Orders, buildOrders},
		{Customers, buildCustomers},
	} {
		if err := icewrite.EnsureNamespace(ctx, cat, t.ident); err != nil {
			return err
		}
		exists, err := cat.CheckTableExists(ctx, t.ident)
		if err != nil {
			return fmt.Errorf("check demo table %s: %w", strings.Join(t.ident, "."), err)
		}
		if exists {
			continue
		}
		if err := t.build(ctx, cat); err != nil {
			return fmt.Errorf("build demo table %s: %w", strings.Join(t.ident, "."), err)
		}
	}
	return nil
}

// WriteWarehouse writes the demo tables (Write) into the local warehouse
// in the folder dir, creating the folder if it does not exist, through
// iceberg-go's filesystem catalog of it.
func WriteWarehouse(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create warehouse %s: %w", dir, err)
	}
	cat, err := hadoop.NewCatalog("local", dir, nil)
	if err != nil {
		return fmt.Errorf("open local warehouse %s: %w", dir, err)
	}
	defer cat.Close()
	return Write(ctx, cat)
}

func ordersSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "customer_id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 4, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "order_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
}

func customersSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "customer_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "country", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "signup_date", Type: iceberg.PrimitiveTypes.Date},
	)
}

func buildOrders(ctx context.Context, cat catalog.Catalog) error {
	tbl, err := icewrite.CreateTable(ctx, cat, Orders, ordersSchema(), 2)
	if err != nil {
		return err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return err
	}
	tbl, fileA, err := icewrite.AppendBatch(ctx, tbl, 1, ordersBatch(sc, ordersA))
	if err != nil {
		return err
	}
	tbl, fileB, err := icewrite.AppendBatch(ctx, tbl, 2, ordersBatch(sc, ordersB))
	if err != nil {
		return err
	}
	pos, err := icewrite.WritePositionalDeletes(ctx, tbl, icewrite.DataPath(tbl, "pos-deletes-00001.parquet"), []icewrite.PositionalDelete{
		{FilePath: fileA.FilePath(), Pos: 1}, {FilePath: fileA.FilePath(), Pos: 3}, {FilePath: fileB.FilePath(), Pos: 0},
	})
	if err != nil {
		return err
	}
	if tbl, err = icewrite.CommitDelta(ctx, tbl, nil, []iceberg.DataFile{pos}); err != nil {
		return err
	}
	keySc, err := icewrite.DeleteKeySchema(tbl, 1)
	if err != nil {
		return err
	}
	kb := array.NewRecordBuilder(memory.DefaultAllocator, keySc)
	defer kb.Release()
	kb.Field(0).(*array.Int64Builder).Append(1005)
	eq, err := icewrite.WriteEqualityDeletes(ctx, tbl, []int{1}, kb.NewRecordBatch())
	if err != nil {
		return err
	}
	_, err = icewrite.CommitDelta(ctx, tbl, nil, eq)
	return err
}

func ordersBatch(sc *arrow.Schema, rows []order) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.orderID)
		b.Field(1).(*array.Int64Builder).Append(r.customerID)
		b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(r.amount))
		b.Field(3).(*array.StringBuilder).Append(r.status)
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMicro()))
	}
	return b.NewRecordBatch()
}

func buildCustomers(ctx context.Context, cat catalog.Catalog) error {
	tbl, err := icewrite.CreateTable(ctx, cat, Customers, customersSchema(), 2)
	if err != nil {
		return err
	}
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range customers {
		b.Field(0).(*array.Int64Builder).Append(r.customerID)
		b.Field(1).(*array.StringBuilder).Append(r.name)
		b.Field(2).(*array.StringBuilder).Append(r.country)
		b.Field(3).(*array.Date32Builder).Append(arrow.Date32FromTime(r.signup))
	}
	_, _, err = icewrite.AppendBatch(ctx, tbl, 1, b.NewRecordBatch())
	return err
}
