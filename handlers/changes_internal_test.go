package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/internal/druidsim"
)

// TestChangeStatementHostileNames: the REPLACE of a change keeps every
// name a quoted identifier and every literal a string, whatever they
// hold: the statement's shape does not move, names decode to themselves,
// and a Druid model that tokenizes as Calcite does executes it.
func TestChangeStatementHostileNames(t *testing.T) {
	hostile := []string{`a"b`, `x" FROM y --`, `it's`, `back\slash\`, "new\nline", `'; DROP TABLE t; --`, `""`, `''`, `\'`}
	var fields []iceberg.NestedField
	for i, n := range hostile {
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: n, Type: iceberg.PrimitiveTypes.String})
	}
	timeField := iceberg.NestedField{ID: 99, Name: `ts"') --`, Type: iceberg.PrimitiveTypes.TimestampTz}
	fields = append(fields, timeField)
	day := changes.Change{Start: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC)}
	base := specTarget{
		dataSource: `ds"; DELETE FROM x; '`,
		timeField:  timeField,
		fields:     fields,
		resp: splitsResponse{
			InputSource: inputSource{Type: "http", URIs: []string{"http://sidecar/splits/a'b/rows"}},
			InputFormat: inputFormat{Type: "json"},
		},
	}
	for _, tc := range []struct {
		change   changes.Change
		skeleton string
	}{
		{day, "REPLACE INTO I OVERWRITE WHERE I >= TIMESTAMP S AND I < TIMESTAMP S\nSELECT\n  MILLIS_TO_TIMESTAMP(I) AS I,\n  " +
			strings.Repeat("I,\n  ", len(fields)-1) + "I\nFROM TABLE(\n  EXTERN(\n    S,\n    S,\n    S\n  )\n)\n" +
			"WHERE MILLIS_TO_TIMESTAMP(I) >= TIMESTAMP S AND MILLIS_TO_TIMESTAMP(I) < TIMESTAMP S\nPARTITIONED BY DAY"},
		{changes.Change{All: true}, "REPLACE INTO I OVERWRITE ALL\nSELECT\n  MILLIS_TO_TIMESTAMP(I) AS I,\n  " +
			strings.Repeat("I,\n  ", len(fields)-1) + "I\nFROM TABLE(\n  EXTERN(\n    S,\n    S,\n    S\n  )\n)\n" +
			"WHERE I IS NOT NULL\nPARTITIONED BY DAY"},
	} {
		sql, err := changeStatement(base, tc.change, "DAY")
		if err != nil {
			t.Fatal(err)
		}
		skeleton, idents, strs := sqlSkeleton(t, sql)
		if skeleton != tc.skeleton {
			t.Fatalf("%s: a name changed the statement's shape:\n%s\nwant\n%s", tc.change, skeleton, tc.skeleton)
		}
		if idents[0] != base.dataSource {
			t.Fatalf("the datasource decodes to %q", idents[0])
		}
		for _, id := range idents[1:] {
			if id != "__time" && id != timeField.Name && !strings.Contains(strings.Join(hostile, "\x00"), id) {
				t.Fatalf("identifier %q is none of the names", id)
			}
		}
		if !strings.Contains(strings.Join(strs, "\x00"), "a'b") {
			t.Fatalf("EXTERN arguments decode to %q", strs)
		}
	}

	// Executed by the model, over an inline row with every hostile column.
	row := map[string]any{timeField.Name: time.Date(2024, 3, 2, 5, 0, 0, 0, time.UTC).UnixMilli()}
	for _, n := range hostile {
		row[n] = n
	}
	data, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	target := base
	target.source = map[string]any{"type": "inline", "data": string(data)}
	sql, err := changeStatement(target, day, "DAY")
	if err != nil {
		t.Fatal(err)
	}
	druid := druidsim.New()
	ctx := context.Background()
	if err := druid.ExecSQL(ctx, sql, changesContext()); err != nil {
		t.Fatal(err)
	}
	rows := druid.Rows(base.dataSource)
	if len(rows) != 1 {
		t.Fatalf("%d rows in %q", len(rows), base.dataSource)
	}
	for _, n := range hostile {
		if rows[0].Columns[n] != n {
			t.Fatalf("column %q holds %v", n, rows[0].Columns[n])
		}
	}

	// An interval left empty: the inline row lies before it and is
	// dropped, and the REPLACE empties the interval.
	empty, err := target.emptyRow(day)
	if err != nil {
		t.Fatal(err)
	}
	target.source = map[string]any{"type": "inline", "data": empty}
	if sql, err = changeStatement(target, day, "DAY"); err != nil {
		t.Fatal(err)
	}
	if err := druid.ExecSQL(ctx, sql, changesContext()); err != nil {
		t.Fatal(err)
	}
	if rows := druid.Rows(base.dataSource); len(rows) != 0 {
		t.Fatalf("the empty interval still holds %v", rows)
	}
	task, err := json.Marshal(indexParallelTask(target, "DAY", 2, day.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := druid.ExecTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if rows := druid.Rows(base.dataSource); len(rows) != 0 {
		t.Fatalf("the empty interval's task left %v", rows)
	}
}
