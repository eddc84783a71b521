package tablegen

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/icewrite"
)

// The kinds of RawNameHazard: tables without a delete file whose Parquet
// files hold their columns under other names than the schema's, or lack
// a value the schema gives.
const (
	// HazardRenamed: id long, name string; "name" renamed to "customer"
	// after the first file.
	HazardRenamed = "renamed"
	// HazardReused: id long, a string (field 2); a dropped and a new
	// column a (field 3) added, so the first file holds field 2 under the
	// name the schema now gives field 3.
	HazardReused = "reused"
	// HazardSanitized: id long, "user-id" string, which Iceberg's writers
	// store as "user_x2Did".
	HazardSanitized = "sanitized"
	// HazardInitialDefault (format version 3): id long; n long added with
	// initial default 42 after the first file, which does not store it.
	HazardInitialDefault = "initial_default"
)

// RawNameHazards are the kinds RawNameHazard writes.
var RawNameHazards = []string{HazardRenamed, HazardReused, HazardSanitized, HazardInitialDefault}

// rawRow is one row of a RawNameHazard table: id, and the other column's
// value (nil for null) under whatever name the schema gives it then.
type rawRow struct {
	id    int64
	value any // string or int64
}

// RawNameHazard writes a table of the given kind (see the Hazard constants)
// in two append snapshots, one data file each, and no delete file. Iceberg
// reads its columns by field id; a reader that reads the Parquet files by
// column name, as Druid's does, gets other rows. Its expected rows are
// Iceberg's.
func RawNameHazard(ctx context.Context, cat catalog.Catalog, ident table.Identifier, kind string) (*Built, error) {
	id := iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true}
	str := func(fid int, name string) iceberg.NestedField {
		return iceberg.NestedField{ID: fid, Name: name, Type: iceberg.PrimitiveTypes.String}
	}
	first, second := []rawRow{{1, "a"}, {2, nil}}, []rawRow{{3, "c"}}
	var (
		sc      *iceberg.Schema
		version = 2
		change  func(*table.UpdateSchema)
		// cols are the column names after the change; before are the
		// expected values of the first file's rows then.
		cols   []string
		before []string
	)
	switch kind {
	case HazardRenamed:
		sc = iceberg.NewSchema(0, id, str(2, "name"))
		change = func(u *table.UpdateSchema) { u.RenameColumn([]string{"name"}, "customer") }
		cols, before = []string{"id", "customer"}, []string{`"a"`, jNull}
	case HazardReused:
		sc = iceberg.NewSchema(0, id, str(2, "a"))
		change = func(u *table.UpdateSchema) {
			u.DeleteColumn([]string{"a"}).AddColumn([]string{"a"}, iceberg.PrimitiveTypes.String, "", false, nil)
		}
		cols, before = []string{"id", "a"}, []string{jNull, jNull}
	case HazardSanitized:
		sc = iceberg.NewSchema(0, id, str(2, "user-id"))
		cols, before = []string{"id", "user-id"}, []string{`"a"`, jNull}
	case HazardInitialDefault:
		sc, version = iceberg.NewSchema(0, id), 3
		first = []rawRow{{1, nil}, {2, nil}}
		second = []rawRow{{3, int64(7)}}
		change = func(u *table.UpdateSchema) {
			u.AddColumn([]string{"n"}, iceberg.PrimitiveTypes.Int64, "", false, iceberg.NewLiteral(int64(42)))
		}
		cols, before = []string{"id", "n"}, []string{"42", "42"}
	default:
		return nil, fmt.Errorf("raw name hazard %q: want one of %v", kind, RawNameHazards)
	}
	tbl, err := icewrite.CreateTable(ctx, cat, ident, sc, version)
	if err != nil {
		return nil, err
	}
	b := &Built{}
	if tbl, err = appendRawRows(ctx, tbl, 1, first); err != nil {
		return nil, err
	}
	firstCols := []string{"id"}
	if len(sc.Fields()) > 1 {
		firstCols = append(firstCols, sc.Field(1).Name)
	}
	b.record(tbl, "first file", firstCols, rawRowsJSON(firstCols, first, nil))
	if change != nil {
		if tbl, err = updateSchema(ctx, tbl, change); err != nil {
			return nil, err
		}
	}
	if tbl, err = appendRawRows(ctx, tbl, 2, second); err != nil {
		return nil, err
	}
	b.record(tbl, "second file, after the schema change", cols,
		append(rawRowsJSON(cols, first, before), rawRowsJSON(cols, second, nil)...))
	return b, nil
}

// appendRawRows appends rows in tbl's current schema as data file n.
func appendRawRows(ctx context.Context, tbl *table.Table, n int, rows []rawRow) (*table.Table, error) {
	sc, err := icewrite.ArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	for _, r := range rows {
		rb.Field(0).(*array.Int64Builder).Append(r.id)
		if len(sc.Fields()) < 2 {
			continue
		}
		switch fb := rb.Field(1).(type) {
		case *array.StringBuilder:
			if s, ok := r.value.(string); ok {
				fb.Append(s)
			} else {
				fb.AppendNull()
			}
		case *array.Int64Builder:
			if v, ok := r.value.(int64); ok {
				fb.Append(v)
			} else {
				fb.AppendNull()
			}
		default:
			return nil, fmt.Errorf("raw name hazard: unexpected column type %s", sc.Field(1).Type)
		}
	}
	tbl, _, err = icewrite.AppendBatch(ctx, tbl, n, rb.NewRecordBatch())
	return tbl, err
}

// rawRowsJSON writes rows as the expected NDJSON objects with columns cols;
// with values set, the second column holds values[i] instead of row i's own.
func rawRowsJSON(cols []string, rows []rawRow, values []string) []string {
	out := make([]string, 0, len(rows))
	for i, r := range rows {
		vals := []string{strconv.FormatInt(r.id, 10)}
		if len(cols) > 1 {
			switch v := r.value.(type) {
			case string:
				vals = append(vals, string(appendJSONString(nil, v)))
			case int64:
				vals = append(vals, strconv.FormatInt(v, 10))
			default:
				vals = append(vals, jNull)
			}
			if values != nil {
				vals[1] = values[i]
			}
		}
		out = append(out, jObject(cols, vals))
	}
	return out
}
