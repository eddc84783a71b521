package sidecartest

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// AssertSameRows compares two lists of NDJSON rows as multisets of values
// (key order and number spelling aside; those are covered by the golden
// tests of the reader).
func AssertSameRows(t testing.TB, got, want []string) {
	t.Helper()
	g, w := canonicalRows(t, got), canonicalRows(t, want)
	if !slices.Equal(g, w) {
		t.Fatalf("rows differ from the oracle\n got (%d): %s\nwant (%d): %s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
}

// AssertSnapshotRows plans the snapshot snapshotID of tbl, which srv
// serves as name, in rows mode, holds its rows to iceberg-go's
// Scan.ReadTasks rows and returns the plan.
func AssertSnapshotRows(t testing.TB, srv *Server, name string, tbl *table.Table, snapshotID int64) Plan {
	t.Helper()
	want, err := tablegen.OracleRows(context.Background(), tbl, snapshotID)
	if err != nil {
		t.Fatal(err)
	}
	p := srv.Plan(t, Q("table", name, "mode", "rows", "snapshotId", strconv.FormatInt(snapshotID, 10)))
	AssertSameRows(t, srv.Rows(t, p), want)
	return p
}

// RowDiff compares two lists of NDJSON rows as multisets of values
// (numbers canonical, as AssertSameRows does) and returns the rows only
// want has and those only got has.
func RowDiff(t testing.TB, got, want []string) (missing, extra []string) {
	t.Helper()
	g, w := canonicalRows(t, got), canonicalRows(t, want)
	i, j := 0, 0
	for i < len(g) || j < len(w) {
		switch {
		case j == len(w) || (i < len(g) && g[i] < w[j]):
			extra = append(extra, g[i])
			i++
		case i == len(g) || w[j] < g[i]:
			missing = append(missing, w[j])
			j++
		default:
			i++
			j++
		}
	}
	return missing, extra
}

func canonicalRows(t testing.TB, rows []string) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		dec := json.NewDecoder(strings.NewReader(r))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		out = append(out, MustJSON(canonicalNumbers(v)))
	}
	slices.Sort(out)
	return out
}

// canonicalNumbers keeps integer literals exact and spells every other
// number as the float64 it denotes, integral floats as integers (-1e+10 and
// -10000000000 are one double).
func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return x
		}
		f, err := x.Float64()
		if err != nil {
			return x
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case map[string]any:
		for k, e := range x {
			x[k] = canonicalNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonicalNumbers(e)
		}
	}
	return v
}
