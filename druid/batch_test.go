package druid_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/sqlcheck"
)

// dayParts are n parts, one a day from 2024-01-01, every other day, each
// read from uris URIs of base that serve one row of that day.
func dayParts(base string, n, uris int) []druid.Part {
	ts := iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.Int64}
	v := iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.String}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(uris)))
	var parts []druid.Part
	for i := range n {
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 2*i)
		var us []string
		for j := range uris {
			// A token as long and as random as signed ones are.
			token := make([]byte, 120)
			for k := range token {
				token[k] = byte(rng.Uint32())
			}
			us = append(us, fmt.Sprintf("%s/rows/%d/%d/%s", base, start.UnixMilli(), j, base64.RawURLEncoding.EncodeToString(token)))
		}
		parts = append(parts, druid.Part{
			Interval: druid.Interval{Start: start, End: start.AddDate(0, 0, 1)},
			Source: druid.Source{
				InputSource: druid.HTTPInputSource{Type: "http", URIs: us, Username: "druid"},
				InputFormat: druid.InputFormat{Type: "json"},
				Fields:      []iceberg.NestedField{ts, v}, TimeField: ts,
			},
		})
	}
	return parts
}

// rowServer serves, for /rows/{ms}/{j}/…, one row at ms.
func rowServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := strings.Split(r.URL.Path, "/")
		ms, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			http.Error(w, "bad path", 400)
			return
		}
		fmt.Fprintf(w, `{"ts":%d,"v":"%s-%s"}`+"\n", ms+3_600_000, f[2], f[3])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBatches: the REPLACEs of 300 changed days are a few statements,
// each within the payload bound, overwriting its days with an OR of
// intervals; Druid (the model) takes every one and ends up with every
// day's rows. Statements parse in Druid's web-console parser too.
func TestBatches(t *testing.T) {
	t.Parallel()
	srv := rowServer(t)
	parts := dayParts(srv.URL, 300, 2)
	st := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay, AllowEmpty: true}
	batches, err := st.Batches(parts)
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) < 2 || len(batches) > 15 {
		t.Fatalf("%d statements for 300 intervals", len(batches))
	}
	d := druidsim.New()
	d.Client = srv.Client()
	var next int
	var queries []string
	for _, b := range batches {
		if len(b.Query) > druid.MaxPayloadBytes {
			t.Fatalf("a statement of %d bytes", len(b.Query))
		}
		for _, iv := range b.Intervals {
			if iv != parts[next].Interval {
				t.Fatalf("statement interval %s, want %s", iv, parts[next].Interval)
			}
			next++
		}
		if err := d.ExecSQL(t.Context(), b.Query, b.Context); err != nil {
			t.Fatalf("Druid refused a statement of %d intervals: %v", len(b.Intervals), err)
		}
		queries = append(queries, b.Query)
	}
	if next != len(parts) || len(d.Rows("ds")) != 2*len(parts) || d.Dropped() != 0 {
		t.Fatalf("%d intervals covered, %d rows, %d dropped", next, len(d.Rows("ds")), d.Dropped())
	}
	sqlcheck.Require(t, queries[0])

	// A statement of one interval is the interval's own.
	one, err := st.Batches(parts[:1])
	if err != nil {
		t.Fatal(err)
	}
	single := st
	single.Overwrite = parts[0].Interval
	if q, err := single.SQL(parts[0].Source); err != nil || one[0].Query != q {
		t.Fatalf("one interval: %v\n%s\nwant\n%s", err, one[0].Query, q)
	}
}

// TestBatchesBounds: a statement covers at most 5,000 time chunks; an
// interval too large alone is refused; parts read otherwise are apart;
// parts out of order are refused; ALL is alone.
func TestBatchesBounds(t *testing.T) {
	t.Parallel()
	base := "http://sidecar:8080"
	hourly := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityHour}
	parts := dayParts(base, 500, 1) // 24 hours each
	batches, err := hourly.Batches(parts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if hours := 24 * len(b.Intervals); hours > druid.MaxPartitionBuckets {
			t.Fatalf("a statement of %d hourly chunks", hours)
		}
	}
	if len(batches) < 3 {
		t.Fatalf("12,000 hours in %d statements", len(batches))
	}

	day := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay}
	big := dayParts(base, 1, 400)
	_, err = day.Batches(big)
	var tooLarge *druid.TooLargeError
	if !errors.Is(err, druid.ErrTooLarge) || !errors.As(err, &tooLarge) {
		t.Fatalf("one interval of 400 URIs: %v", err)
	}
	// FitURIs says how many URIs fit: so many do, twice as many do not.
	n, ok := big[0].Source.FitURIs(tooLarge.Size)
	if !ok || n < 100 || n > 200 {
		t.Fatalf("FitURIs: %d %v", n, ok)
	}
	if _, err := day.Batches(dayParts(base, 1, n)); err != nil {
		t.Fatalf("%d URIs: %v", n, err)
	}
	if _, err := day.Batches(dayParts(base, 1, 2*n)); !errors.Is(err, druid.ErrTooLarge) {
		t.Fatalf("%d URIs: %v", 2*n, err)
	}
	// Intervals read otherwise (raw Parquet files for one, the row path
	// for the next) are statements apart.
	mixed := dayParts(base, 3, 1)
	mixed[1].Source.InputFormat = druid.InputFormat{Type: "parquet"}
	if b, err := day.Batches(mixed); err != nil || len(b) != 3 {
		t.Fatalf("json, parquet, json: %v, %d statements", err, len(b))
	}
	back := dayParts(base, 2, 1)
	back[0], back[1] = back[1], back[0]
	if _, err := day.Batches(back); !errors.Is(err, druid.ErrInvalid) {
		t.Fatalf("out of order: %v", err)
	}
	all := dayParts(base, 2, 1)
	all[0].Interval = druid.Interval{}
	all = all[:1]
	b, err := day.Batches(all)
	if err != nil || len(b) != 1 || !strings.Contains(b[0].Query, "OVERWRITE ALL") {
		t.Fatalf("ALL: %v %+v", err, b)
	}
	if _, err := (druid.Statement{DataSource: "ds", PartitionedBy: druid.GranularityDay}).Batches(parts[:1]); !errors.Is(err, druid.ErrInvalid) {
		t.Fatalf("an INSERT: %v", err)
	}
}

// TestPayloadBound: the largest statement the generators write fits the
// Kubernetes task runner's TASK_JSON as the model of it computes the
// controller task's payload, and twice that does not: the bound is
// neither loose nor needlessly tight.
func TestPayloadBound(t *testing.T) {
	srv := rowServer(t)
	st := druid.Statement{Replace: true, DataSource: "ds", PartitionedBy: druid.GranularityDay, AllowEmpty: true}
	var largest druid.Batch
	for n := 1; ; n++ {
		parts := dayParts(srv.URL, 1, n)
		b, err := st.Batches(parts)
		if errors.Is(err, druid.ErrTooLarge) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		largest = b[0]
	}
	if len(largest.Query) < druid.MaxPayloadBytes*9/10 {
		t.Fatalf("the largest statement is %d bytes", len(largest.Query))
	}
	s := druidsim.NewServer()
	s.Client, s.Runner = srv.Client(), druidsim.RunnerKubernetes
	api := httptest.NewServer(s)
	defer api.Close()
	submit := func(query string) string {
		body := fmt.Sprintf(`{"query":%q,"context":{"sqlTimeZone":"UTC","failOnEmptyInsert":false}}`, query)
		resp, err := http.Post(api.URL+"/druid/v2/sql/task", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return fmt.Sprintf("query-%04d", len(s.Submitted()))
	}
	submit(largest.Query)
	if errs := s.Errors(); len(errs) != 0 {
		t.Fatalf("the largest statement: %v", errs)
	}
	// Twice the URIs (and still valid SQL) is past what TASK_JSON holds.
	doubled := strings.Replace(largest.Query, `"uris":[`, `"uris":[`+urisOf(largest.Query)+`,`, 1)
	submit(doubled)
	if errs := s.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "TASK_JSON") {
		t.Fatalf("twice the URIs: %v", errs)
	}
}

// urisOf is the body of the first uris list of a statement's EXTERN.
func urisOf(query string) string {
	i := strings.Index(query, `"uris":[`) + len(`"uris":[`)
	return query[i : i+strings.Index(query[i:], "]")]
}
