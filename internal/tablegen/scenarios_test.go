package tablegen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// wantMixedJSON encodes r as the oracle must, written independently of the
// oracle's Arrow encoder: from the generated values, with encoding/json for
// strings.
func wantMixedJSON(t *testing.T, r mixedRow) string {
	t.Helper()
	str := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatalf("encode %q: %v", s, err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	opt := func(ok bool, v func() string) string {
		if !ok {
			return "null"
		}
		return v()
	}
	fields := []string{
		`"id":` + strconv.FormatInt(r.id, 10),
		`"qty":` + opt(r.qty != nil, func() string { return strconv.Itoa(int(*r.qty)) }),
		`"name":` + opt(r.name != nil, func() string { return str(*r.name) }),
		`"score":` + opt(r.score != nil && !math.IsNaN(*r.score) && !math.IsInf(*r.score, 0), func() string {
			return strconv.FormatFloat(*r.score, 'g', -1, 64)
		}),
		`"active":` + opt(r.active != nil, func() string { return strconv.FormatBool(*r.active) }),
		`"day":` + opt(r.day != nil, func() string { return strconv.FormatInt(int64(*r.day)*86_400_000, 10) }),
		`"ts":` + opt(r.ts != nil, func() string { return strconv.FormatInt(*r.ts/1000, 10) }),
		`"ts_tz":` + opt(r.tsTZ != nil, func() string { return strconv.FormatInt(*r.tsTZ/1000, 10) }),
		`"price":` + opt(r.price != nil, func() string {
			sign, v := "", *r.price
			if v < 0 {
				sign, v = "-", -v
			}
			return fmt.Sprintf(`"%s%d.%02d"`, sign, v/100, v%100)
		}),
		`"payload":` + opt(r.payload != nil, func() string { return `"` + base64.StdEncoding.EncodeToString(r.payload) + `"` }),
	}
	return "{" + strings.Join(fields, ",") + "}"
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			cat := newCatalog(t)
			ident := table.Identifier{"scenarios", sc.Name}
			tbl, err := sc.Build(ctx, cat, ident)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if got := tbl.Metadata().Version(); got != sc.FormatVersion {
				t.Errorf("format version = %d, want %d", got, sc.FormatVersion)
			}

			byID := map[int64]mixedRow{}
			for _, r := range sc.rows {
				byID[r.id] = r
			}
			want := []string{}
			for _, id := range sc.LiveIDs {
				r, ok := byID[id]
				if !ok {
					t.Fatalf("live id %d is no row the scenario wrote", id)
				}
				want = append(want, wantMixedJSON(t, r))
			}

			// Load through the catalog so what is checked is what is on disk.
			loaded, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatalf("load table: %v", err)
			}
			got := oracle(t, ctx, loaded)
			if len(got) != len(sc.LiveIDs) {
				t.Errorf("oracle returned %d rows, want %d", len(got), len(sc.LiveIDs))
			}
			if !slices.Equal(got, want) {
				t.Errorf("oracle rows differ\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
			}

			if got, want := planned(t, ctx, loaded), wantPlan(sc.Plan); !reflect.DeepEqual(got, want) {
				t.Errorf("PlanFiles attached\n got: %+v\nwant: %+v", got, want)
			}
		})
	}
}

func TestScenarioNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range Scenarios() {
		if seen[sc.Name] {
			t.Errorf("scenario name %q is used twice", sc.Name)
		}
		seen[sc.Name] = true
		if !slices.IsSorted(sc.LiveIDs) {
			t.Errorf("scenario %q: LiveIDs are not ascending", sc.Name)
		}
	}
}
