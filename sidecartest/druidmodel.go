package sidecartest

import (
	"slices"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/token"
)

// CleanModel fails the test when the model of Druid lost values on the
// way in: a value its column's type could not take, a row its guards had
// to drop, rows without a parseable time but the nullTimes the table holds
// (which a native task counts as unparseable).
func CleanModel(t testing.TB, d *druidsim.Druid, nullTimes ...int) {
	t.Helper()
	if n := d.Nulled(); len(n) > 0 {
		t.Fatalf("Druid turned values into NULL: %q", n)
	}
	want := 0
	for _, n := range nullTimes {
		want += n
	}
	if n := d.Unparseable(); n != want {
		t.Fatalf("Druid found %d rows without a parseable time, want %d", n, want)
	}
	if n := d.Dropped(); n > 0 {
		t.Fatalf("Druid's guards dropped %d rows served outside their interval", n)
	}
}

// DruidExpect is what a Druid datasource holds of the sidecar's NDJSON
// rows, the columns in the Druid types of the docs' table, as ModelRows
// lists them.
func DruidExpect(t testing.TB, lines []string, timeColumn string, fields []iceberg.NestedField) []string {
	t.Helper()
	rows, err := druidsim.Expect(lines, timeColumn, druid.Types(fields, token.Encoding{}))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

// DruidRows are the rows of NDJSON lines as a Druid datasource holds them,
// the time column as __time, sorted; a line without a time is left out, as
// Druid never ingests one.
func DruidRows(t testing.TB, lines []string, timeColumn string) []string {
	t.Helper()
	rows, err := druidsim.DatasourceRows(lines, timeColumn)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// ModelRows are the rows the model of Druid holds of the datasource ds,
// as DruidExpect and DruidRows spell them.
func ModelRows(d *druidsim.Druid, ds string) []string { return d.RowStrings(ds) }
