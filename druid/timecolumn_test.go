package druid_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
)

// TestTimeColumnNamedTime: a table exported from Druid has a column named
// __time. As the time column it is Druid's __time, and the specs list it
// once (a statement's EXTERN reads it under another name); any other column of that name is refused with what to do, since
// Druid refuses a duplicate __time (the model, from Druid's source, holds
// both specs to that).
func TestTimeColumnNamedTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"__time":1709337600000,"v":"a"}`)
	}))
	defer srv.Close()
	tm := iceberg.NestedField{ID: 1, Name: "__time", Type: iceberg.PrimitiveTypes.TimestampTz}
	v := iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.String}
	ts := iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Int64}
	src := druid.Source{
		InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{srv.URL + "/rows"}},
		InputFormat: druid.InputFormat{Type: "json"},
		Fields:      []iceberg.NestedField{tm, v}, TimeField: tm,
	}
	day := druid.Interval{Start: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC)}
	st := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay, Overwrite: day}
	query, err := st.SQL(src)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(query, `AS "__time"`); n != 1 || strings.Contains(query, "\n  \"__time\"") {
		t.Fatalf("__time selected %d times:\n%s", n, query)
	}
	// Druid SQL types an EXTERN column named __time as TIMESTAMP, whatever
	// its declared type, and refuses MILLIS_TO_TIMESTAMP of it (seen on
	// Druid 27): EXTERN reads it under another name, through a flattenSpec.
	if strings.Contains(query, `{"name":"__time"`) || !strings.Contains(query, `MILLIS_TO_TIMESTAMP("__time_value") AS "__time"`) ||
		!strings.Contains(query, `"flattenSpec":{"useFieldDiscovery":true,"fields":[{"type":"path","name":"__time_value","expr":"$.__time"}]}`) {
		t.Fatalf("EXTERN reads __time by its name:\n%s", query)
	}
	d := druidsim.New()
	d.Client = srv.Client()
	if err := d.ExecSQL(t.Context(), query, st.Context(src)); err != nil {
		t.Fatalf("Druid refuses the statement: %v", err)
	}
	task, err := druid.Task{DataSource: "native", SegmentGranularity: druid.GranularityDay, SubTasks: 1, Interval: day}.Spec(src)
	if err != nil {
		t.Fatal(err)
	}
	body := mustMarshal(t, task)
	if err := d.ExecTask(t.Context(), body); err != nil || len(d.Rows("ds")) != 1 || len(d.Rows("native")) != 1 {
		t.Fatalf("Druid refuses the task (%v), or holds %d and %d rows", err, len(d.Rows("ds")), len(d.Rows("native")))
	}

	// __time beside another time column.
	other := src
	other.Fields, other.TimeField = []iceberg.NestedField{tm, v, ts}, ts
	if _, err := st.SQL(other); !errors.Is(err, druid.ErrInvalid) || !strings.Contains(err.Error(), "make it the time column") {
		t.Fatalf("a statement: %v", err)
	}
	if _, err := (druid.Task{DataSource: "ds", SegmentGranularity: druid.GranularityDay, SubTasks: 1}).Spec(other); !errors.Is(err, druid.ErrInvalid) {
		t.Fatalf("a task: %v", err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
