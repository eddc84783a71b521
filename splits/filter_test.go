package splits

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// eventsTable writes events.daily: partitioned by identity(day), one data
// file per day from 2025-01-01 to 2025-01-05, three rows a day with ts at
// 06:00, 12:00 and 18:00 UTC of that day and id = day*10 + n.
func eventsTable(t *testing.T) *Planner {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat := catalogtest.Local(t, dir)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 4, Name: "kind", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "day", Transform: iceberg.IdentityTransform{}})
	if err := cat.CreateNamespace(ctx, table.Identifier{"events"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"events", "daily"}, sc,
		catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for d := 1; d <= 5; d++ {
		day := time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC)
		for n, h := range []int{6, 12, 18} {
			b.Field(0).(*array.Int64Builder).Append(int64(d*10 + n))
			b.Field(1).(*array.Date32Builder).Append(arrow.Date32FromTime(day))
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(day.Add(time.Duration(h) * time.Hour).UnixMicro()))
			b.Field(3).(*array.StringBuilder).Append([]string{"view", "click", "buy"}[n])
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
	defer at.Release()
	if _, err := tbl.AppendTable(ctx, at, 1024, nil); err != nil {
		t.Fatal(err)
	}
	signer, err := token.NewSigner(key(3))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlanner(catalogtest.Open(t, sidecatalog.Config{Type: "local", Warehouse: dir}), signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func parseFilter(t *testing.T, s string) *druid.Filter {
	t.Helper()
	var f druid.Filter
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("filter %s: %v", s, err)
	}
	return &f
}

// plannedDays returns the day partition (as 2025-01-DD) of every planned file.
func plannedDays(t *testing.T, p Plan) []string {
	t.Helper()
	var days []string
	for _, s := range p.Splits {
		if len(s.Parts[0].Data.Identity) != 1 {
			t.Fatalf("split %s has identity values %v", s.Parts[0].Data.Path, s.Parts[0].Data.Identity)
		}
		var d int
		if err := json.Unmarshal(s.Parts[0].Data.Identity[0].Value, &d); err != nil {
			t.Fatal(err)
		}
		days = append(days, time.Unix(int64(d)*86400, 0).UTC().Format("01-02"))
	}
	slices.Sort(days)
	return days
}

// TestFilters holds each Druid filter type, with Druid's boundary semantics,
// to the data files it plans.
func TestFilters(t *testing.T) {
	p := eventsTable(t)
	tests := []struct {
		name   string
		filter string
		want   []string
	}{
		{"equals on the partition", `{"type":"equals","filterColumn":"day","filterValue":"2025-01-03"}`, []string{"01-03"}},
		{"equals on a statistic", `{"type":"equals","filterColumn":"id","filterValue":42}`, []string{"01-04"}},
		{"interval end excluded", `{"type":"interval","filterColumn":"day","intervals":["2025-01-02T00:00:00Z/2025-01-04T00:00:00Z"]}`, []string{"01-02", "01-03"}},
		{"interval start mid-day", `{"type":"interval","filterColumn":"day","intervals":["2025-01-02T12:00:00Z/2025-01-04T00:00:00Z"]}`, []string{"01-03"}},
		{"two intervals", `{"type":"interval","filterColumn":"day","intervals":["2025-01-01/2025-01-02","2025-01-05/P1D"]}`, []string{"01-01", "01-05"}},
		{"interval on a timestamp", `{"type":"interval","filterColumn":"ts","intervals":["2025-01-02T18:00:00Z/2025-01-03T06:00:00Z"]}`, []string{"01-02"}},
		{"interval on a timestamp, end reaching a row", `{"type":"interval","filterColumn":"ts","intervals":["2025-01-02T18:00:00Z/2025-01-03T06:00:00.001Z"]}`, []string{"01-02", "01-03"}},
		{"range closed", `{"type":"range","filterColumn":"day","lower":"2025-01-02","upper":"2025-01-04"}`, []string{"01-02", "01-03", "01-04"}},
		{"range lower open", `{"type":"range","filterColumn":"day","lower":"2025-01-02","upper":"2025-01-04","lowerOpen":true}`, []string{"01-03", "01-04"}},
		{"range upper open", `{"type":"range","filterColumn":"day","lower":"2025-01-02","upper":"2025-01-04","upperOpen":true}`, []string{"01-02", "01-03"}},
		{"range both open", `{"type":"range","filterColumn":"day","lower":"2025-01-02","upper":"2025-01-04","lowerOpen":true,"upperOpen":true}`, []string{"01-03"}},
		{"range lower only", `{"type":"range","filterColumn":"id","lower":40}`, []string{"01-04", "01-05"}},
		{"time window both ends included", `{"type":"timeWindow","filterColumn":"day","baseTime":"2025-01-04T00:00:00Z","lookbackDuration":"P2D"}`, []string{"01-02", "01-03", "01-04"}},
		{"time window on a timestamp", `{"type":"timeWindow","filterColumn":"ts","baseTime":"2025-01-04T06:00:00Z","lookbackDuration":"PT12H","lookaheadDuration":"PT0S"}`, []string{"01-03", "01-04"}},
		{"time window default lookback of one day", `{"type":"timeWindow","filterColumn":"ts","baseTime":"2025-01-03T05:00:00Z"}`, []string{"01-02"}},
		{"and", `{"type":"and","filters":[{"type":"range","filterColumn":"day","lower":"2025-01-02"},{"type":"range","filterColumn":"day","upper":"2025-01-03"}]}`, []string{"01-02", "01-03"}},
		{"or", `{"type":"or","filters":[{"type":"equals","filterColumn":"day","filterValue":"2025-01-01"},{"type":"equals","filterColumn":"day","filterValue":"2025-01-05"}]}`, []string{"01-01", "01-05"}},
		{"not", `{"type":"not","filter":{"type":"equals","filterColumn":"day","filterValue":"2025-01-03"}}`, []string{"01-01", "01-02", "01-04", "01-05"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, tc.filter)})
			if err != nil {
				t.Fatal(err)
			}
			if got := plannedDays(t, plan); !slices.Equal(got, tc.want) {
				t.Fatalf("planned days %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	p := eventsTable(t)
	for _, tc := range []struct{ name, filter, want string }{
		{"missing column", `{"type":"equals","filterColumn":"nope","filterValue":1}`, `no column "nope"`},
		{"unconvertible value", `{"type":"equals","filterColumn":"id","filterValue":"forty"}`, "cannot be converted"},
		{"unconvertible date", `{"type":"range","filterColumn":"day","lower":"yesterday"}`, "cannot be converted"},
		{"interval on a string", `{"type":"interval","filterColumn":"kind","intervals":["2025-01-01/2025-01-02"]}`, "need a timestamp"},
		{"bad interval", `{"type":"interval","filterColumn":"day","intervals":["2025-01-01"]}`, "START/END"},
		{"backwards interval", `{"type":"interval","filterColumn":"day","intervals":["2025-01-03/2025-01-01"]}`, "ends before"},
		{"month duration", `{"type":"timeWindow","filterColumn":"day","lookbackDuration":"P1M"}`, "no fixed length"},
		{"empty range", `{"type":"range","filterColumn":"day"}`, "lower, upper"},
		{"null bounds", `{"type":"range","filterColumn":"day","lower":null,"upper":null}`, "Both lower and upper bounds cannot be empty"},
		{"equals without a value (a misspelt one is ignored)", `{"type":"equals","filterColumn":"id","value":1}`, "filterValue is required"},
		{"empty and", `{"type":"and","filters":[]}`, "filters is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, tc.filter)})
			if !errors.Is(err, fault.ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want fault.ErrBadRequest containing %q", err, tc.want)
			}
		})
	}
}

// TestResidualModes: a filter on a non-partition column leaves a residual
// that warn reports and fail refuses; a filter on the partition does not.
func TestResidualModes(t *testing.T) {
	p := eventsTable(t)
	onTS := `{"type":"interval","filterColumn":"ts","intervals":["2025-01-02T10:00:00Z/2025-01-02T20:00:00Z"]}`
	onDay := `{"type":"equals","filterColumn":"day","filterValue":"2025-01-02"}`

	plan, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, onTS), ResidualMode: ResidualWarn})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Warnings) == 0 || !strings.Contains(plan.Warnings[0], "residual") {
		t.Fatalf("warn mode gave warnings %v", plan.Warnings)
	}
	if _, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, onTS), ResidualMode: ResidualFail}); !errors.Is(err, ErrConflict) {
		t.Fatalf("fail mode with a residual: %v, want ErrConflict", err)
	}
	plan, err = p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, onDay), ResidualMode: ResidualFail})
	if err != nil || len(plan.Warnings) != 0 || len(plan.Splits) != 1 {
		t.Fatalf("a partition filter must leave no residual: %d splits, warnings %v, %v", len(plan.Splits), plan.Warnings, err)
	}
	plan, err = p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, onTS)})
	if err != nil || len(plan.Warnings) != 0 {
		t.Fatalf("ignore mode: warnings %v, %v", plan.Warnings, err)
	}
}

// TestApplyResidualPinsFilter: with applyResidual, each rows split pins the
// residual its file keeps, in a form iceberg.ParseExpr reads back; a file
// the partition decides entirely pins nothing.
func TestApplyResidualPinsFilter(t *testing.T) {
	p := eventsTable(t)
	f := parseFilter(t, `{"type":"or","filters":[{"type":"equals","filterColumn":"day","filterValue":"2025-01-01"},`+
		`{"type":"and","filters":[{"type":"equals","filterColumn":"day","filterValue":"2025-01-02"},{"type":"equals","filterColumn":"kind","filterValue":"buy"}]}]}`)
	plan, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: f, ApplyResidual: true})
	if err != nil {
		t.Fatal(err)
	}
	// The two small files are packed into one split, each with its own
	// residual.
	if plan.Path != PathRows || len(plan.Splits) != 1 || len(plan.Splits[0].Parts) != 2 {
		t.Fatalf("plan %s with %d splits, want the row path over 2 files in one split", plan.Path, len(plan.Splits))
	}
	src, err := p.Source(context.Background(), plan.Splits[0].Parts[0])
	if err != nil {
		t.Fatal(err)
	}
	ts := src.Schema
	pinned := 0
	for _, s := range plan.Splits[0].Parts {
		if len(s.Filter) == 0 {
			continue // the 01-01 file matches as a whole
		}
		pinned++
		e, err := iceberg.ParseExpr(s.Filter, ts.Schema)
		if err != nil {
			t.Fatalf("pinned filter %s: %v", s.Filter, err)
		}
		if !strings.Contains(e.String(), "kind") {
			t.Fatalf("residual %s does not test kind", e)
		}
	}
	if pinned != 1 {
		t.Fatalf("%d files pin a residual, want 1 (the 01-02 file)", pinned)
	}
	if _, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: f, ApplyResidual: true, Mode: ModeFiles}); !errors.Is(err, fault.ErrBadRequest) {
		t.Fatalf("applyResidual with mode=files: %v", err)
	}
}

// TestEmptyPlanIsMarked: a plan without files says so (Empty), for the
// answers to say why there is nothing to ingest, since Druid refuses an
// http inputSource without URIs; it warns of nothing else.
func TestEmptyPlanIsMarked(t *testing.T) {
	p := eventsTable(t)
	plan, err := p.Plan(context.Background(), Request{Table: "events.daily",
		Filter: parseFilter(t, `{"type":"equals","filterColumn":"day","filterValue":"2030-01-01"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Splits) != 0 || !plan.Empty || len(plan.Warnings) != 0 {
		t.Fatalf("%d splits, empty %v, warnings %q", len(plan.Splits), plan.Empty, plan.Warnings)
	}
}

// TestFilterLikeDruid: what Druid's mapper and Joda accept plans here too:
// a field a filter does not take is ignored (druid's
// TestFilterNamesIgnoredFields holds that it is named), a null bound is an
// absent bound, intervals take periods and date-times Joda's forms.
func TestFilterLikeDruid(t *testing.T) {
	p := eventsTable(t)
	for _, tc := range []struct{ name, filter string }{
		{"a null lower bound", `{"type":"range","filterColumn":"day","lower":null,"upper":"2025-01-02","upperOpen":true}`},
		{"an ignored field", `{"type":"range","filterColumn":"day","upper":"2025-01-02","upperOpen":true,"lowerOpne":true}`},
		{"a period", `{"type":"interval","filterColumn":"day","intervals":["2025-01-01/P1D"]}`},
		{"a period before the end", `{"type":"interval","filterColumn":"day","intervals":["P1D/2025-01-02T00:00Z"]}`},
		{"an offset without colon", `{"type":"interval","filterColumn":"day","intervals":["2025-01-01T01:00+0100/2025-01-02"]}`},
		{"a month", `{"type":"interval","filterColumn":"day","intervals":["2025-01/2025-01-02"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := p.Plan(context.Background(), Request{Table: "events.daily", Filter: parseFilter(t, tc.filter)})
			if err != nil {
				t.Fatal(err)
			}
			if got := plannedDays(t, plan); !slices.Equal(got, []string{"01-01"}) {
				t.Fatalf("planned %v, want the first day", got)
			}
		})
	}
}
