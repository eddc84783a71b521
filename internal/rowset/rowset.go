// Package rowset compares NDJSON rows as multisets of values, as the tests
// hold the sidecar's rows to an oracle's (iceberg-go's ReadTasks, Iceberg
// Java, a builder's expectation): key order and the spelling of a number
// aside, which the reader's golden tests hold. Only tests import it.
package rowset

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// AssertSame fails t unless got and want hold the same rows, each as
// often, showing both canonical (Canonical).
func AssertSame(t testing.TB, got, want []string) {
	t.Helper()
	g, w := Canonical(t, got), Canonical(t, want)
	if !slices.Equal(g, w) {
		t.Fatalf("rows differ\n got (%d): %s\nwant (%d): %s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
}

// Canonical is rows each re-encoded with its keys sorted and its numbers
// canonical (integer literals exact; every other number as the shortest
// spelling of the float64 it denotes, an integral one as an integer, since
// -1e+10 and -10000000000 are one double), in sorted order. A row that is
// not JSON fails t.
func Canonical(t testing.TB, rows []string) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		dec := json.NewDecoder(strings.NewReader(r))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		b, err := json.Marshal(canonicalNumbers(v))
		if err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// Diff compares got and want as Canonical does and returns the rows only
// want has and those only got has, canonical, each as often as it is
// missing or extra.
func Diff(t testing.TB, got, want []string) (missing, extra []string) {
	t.Helper()
	g, w := Canonical(t, got), Canonical(t, want)
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
