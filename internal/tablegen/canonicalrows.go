package tablegen

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CanonicalRows is rows (one JSON object a line, as OracleRows and the
// sidecar's streams give them) as a sorted list of canonical spellings, so
// that two readers' rows compare as multisets of values: key order and
// number spelling aside (the reader's golden tests hold those). Integer
// literals stay exact; every other number is spelled as the float64 it
// denotes, an integral one as an integer (-1e+10 and -10000000000 are one
// double).
func CanonicalRows(rows []string) ([]string, error) {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		dec := json.NewDecoder(strings.NewReader(r))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("row %q: %w", r, err)
		}
		b, err := json.Marshal(canonicalNumbers(v))
		if err != nil {
			return nil, fmt.Errorf("row %q: %w", r, err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out, nil
}

// RowDiff compares got and want as multisets of values (CanonicalRows)
// and returns the rows, canonical, only want has and those only got has.
func RowDiff(got, want []string) (missing, extra []string, err error) {
	g, err := CanonicalRows(got)
	if err != nil {
		return nil, nil, err
	}
	w, err := CanonicalRows(want)
	if err != nil {
		return nil, nil, err
	}
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
	return missing, extra, nil
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
