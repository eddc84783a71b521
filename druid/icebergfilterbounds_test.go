package druid

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// nestedNot is a filter of depth `not`s around one equals.
func nestedNot(depth int) string {
	return strings.Repeat(`{"type":"not","filter":`, depth) +
		`{"type":"equals","filterColumn":"kind","filterValue":"x"}` + strings.Repeat("}", depth)
}

// wideOr is an or of width equals filters.
func wideOr(width int) string {
	parts := make([]string, width)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"type":"equals","filterColumn":"kind","filterValue":"k%d"}`, i)
	}
	return `{"type":"or","filters":[` + strings.Join(parts, ",") + `]}`
}

// intervals is an interval filter of n one-day intervals.
func intervals(n int) string {
	parts := make([]string, n)
	day := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"%s/P1D"`, day.AddDate(0, 0, 2*i).Format("2006-01-02"))
	}
	return `{"type":"interval","filterColumn":"ts","intervals":[` + strings.Join(parts, ",") + `]}`
}

func TestCheckFilterBounds(t *testing.T) {
	long := strings.Repeat("a", MaxFilterString+1)
	for _, tc := range []struct {
		name, filter string
		bound        string // in the error; "" for no error
	}{
		{"simple", `{"type":"equals","filterColumn":"kind","filterValue":"x"}`, ""},
		{"deepest allowed", nestedNot(MaxFilterDepth - 1), ""},
		{"one level too deep", nestedNot(MaxFilterDepth), "more than 64 levels deep"},
		{"two thousand deep", nestedNot(2000), "more than 64 levels deep"},
		{"ten thousand deep", nestedNot(9990), "more than the 131072 allowed"},
		// An or of n equals holds n+1 objects.
		{"widest allowed", wideOr(MaxFilterNodes - 1), ""},
		{"one filter too many", wideOr(MaxFilterNodes), "more than 1000 filters and intervals"},
		{"intervals count", intervals(MaxFilterNodes), "more than 1000 filters and intervals"},
		{"intervals allowed", intervals(MaxFilterNodes - 1), ""},
		{"a long value", `{"type":"equals","filterColumn":"kind","filterValue":"` + long + `"}`, "string or number of 4097 bytes"},
		{"a long number", `{"type":"equals","filterColumn":"id","filterValue":` + strings.Repeat("1", MaxFilterString+1) + `}`, "string or number of 4097 bytes"},
		{"a long member name", `{"` + long + `":1}`, "string or number of 4097 bytes"},
		{"too many bytes", `{"type":"equals","filterColumn":"kind","filterValue":"` + strings.Repeat(" ", MaxFilterBytes) + `"}`, "more than the 131072 allowed"},
		// Names and values are told apart: member names never count as
		// nodes, and the values of an object are not list elements.
		{"objects in a list", `{"type":"and","filters":[{"a":[1,2,3]},{"b":{"c":[[4]]}}]}`, ""},
		{"not JSON", `{"type":`, ""},
		{"empty", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFilterBounds([]byte(tc.filter))
			switch {
			case tc.bound == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.bound != "" && err == nil:
				t.Fatalf("passed, want an error naming %q", tc.bound)
			case tc.bound != "" && (!errors.Is(err, fault.ErrBadRequest) || !strings.Contains(err.Error(), tc.bound)):
				t.Fatalf("error %v, want fault.ErrBadRequest naming %q", err, tc.bound)
			}
		})
	}
}

// TestCheckFilterBoundsCountsNodes holds the node count to a count made
// another way: every object of the decoded JSON, and every element of a
// list that is not an object.
func TestCheckFilterBoundsCountsNodes(t *testing.T) {
	var count func(v any) int
	count = func(v any) int {
		n := 0
		switch x := v.(type) {
		case map[string]any:
			n++
			for _, c := range x {
				n += count(c)
			}
		case []any:
			for _, c := range x {
				if _, ok := c.(map[string]any); !ok {
					n++
				}
				n += count(c)
			}
		}
		return n
	}
	for _, f := range []string{
		wideOr(10), intervals(7), nestedNot(5),
		`{"type":"and","filters":[{"a":[1,[2,{}],"x"]},{"b":{"c":[[4]]}}],"n":null}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(f), &v); err != nil {
			t.Fatal(err)
		}
		want := count(v)
		// The count passes at exactly the bound and fails one below it.
		if err := checkNodes(f, want); err != nil {
			t.Errorf("%.60s: %d nodes refused at a bound of %d: %v", f, want, want, err)
		}
		if err := checkNodes(f, want-1); err == nil {
			t.Errorf("%.60s: %d nodes pass a bound of %d", f, want, want-1)
		}
	}
}

// checkNodes runs CheckFilterBounds' node count with another bound, by
// wrapping the filter in a list of padding scalars that takes the bound up
// to MaxFilterNodes (the wrapping object is one node itself).
func checkNodes(filter string, bound int) error {
	pad := MaxFilterNodes - bound - 1
	if pad < 0 {
		panic("bound above MaxFilterNodes")
	}
	// A list's scalars count one each; the list itself is a member value.
	padding := strings.TrimSuffix(strings.Repeat("0,", pad), ",")
	return CheckFilterBounds([]byte(`{"pad":[` + padding + `],"f":` + filter + `}`))
}

// TestWideFilterIsBalanced: an and or or of many filters, and the
// intervals of an interval filter, become a balanced tree, whose depth is
// the logarithm of the width: iceberg-go's String, JSON encoding and
// parsing cost the square of an expression's depth.
func TestWideFilterIsBalanced(t *testing.T) {
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "kind", Type: iceberg.PrimitiveTypes.String},
	)
	for _, tc := range []struct {
		filter   string
		maxDepth int
	}{
		// log2(999) < 10, and each leaf is and(not_null, eq): one more.
		{wideOr(MaxFilterNodes - 1), 11},
		{strings.Replace(wideOr(MaxFilterNodes-1), `"or"`, `"and"`, 1), 11},
		// Each interval is and(and(not_null, >=), and(not_null, <)).
		{intervals(MaxFilterNodes - 1), 12},
	} {
		var f Filter
		if err := json.Unmarshal([]byte(tc.filter), &f); err != nil {
			t.Fatal(err)
		}
		e, err := f.Expression(schema, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		d, err := iceberg.VisitExpr[int](e, depthVisitor{})
		if err != nil {
			t.Fatal(err)
		}
		if d > tc.maxDepth {
			t.Errorf("%.40s…: expression %d deep, want at most %d", tc.filter, d, tc.maxDepth)
		}
	}
}

// depthVisitor measures how deep an expression's and, or and not nest.
type depthVisitor struct{}

func (depthVisitor) VisitTrue() int                            { return 0 }
func (depthVisitor) VisitFalse() int                           { return 0 }
func (depthVisitor) VisitNot(c int) int                        { return 1 + c }
func (depthVisitor) VisitAnd(l, r int) int                     { return 1 + max(l, r) }
func (depthVisitor) VisitOr(l, r int) int                      { return 1 + max(l, r) }
func (depthVisitor) VisitUnbound(iceberg.UnboundPredicate) int { return 0 }
func (depthVisitor) VisitBound(iceberg.BoundPredicate) int     { return 0 }

// BenchmarkWideFilter measures the planning-side cost of the widest
// filter the bounds allow: decoding, the expression, binding and the JSON
// a residual is carried as.
//
//	go test -run '^$' -bench WideFilter -benchmem ./druid/
func BenchmarkWideFilter(b *testing.B) {
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 4, Name: "kind", Type: iceberg.PrimitiveTypes.String})
	data := []byte(wideOr(MaxFilterNodes - 1))
	for b.Loop() {
		if err := CheckFilterBounds(data); err != nil {
			b.Fatal(err)
		}
		var f Filter
		if err := json.Unmarshal(data, &f); err != nil {
			b.Fatal(err)
		}
		e, err := f.Expression(schema, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		bound, err := iceberg.BindExpr(schema, e, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(bound); err != nil {
			b.Fatal(err)
		}
	}
}
