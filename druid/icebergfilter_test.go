package druid

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// TestFilterDecodeErrors: a filter of an unknown type, or of none, does
// not decode, and the error says which.
func TestFilterDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, filter, want string }{
		{"unknown type", `{"type":"like","filterColumn":"kind"}`, `unknown filter type "like"`},
		{"no type", `{"filterColumn":"id"}`, `needs a "type"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Filter
			err := json.Unmarshal([]byte(tc.filter), &f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestFilterNamesIgnoredFields: fields a filter does not take are ignored,
// as Druid's mapper ignores them, and named.
func TestFilterNamesIgnoredFields(t *testing.T) {
	var f Filter
	if err := json.Unmarshal([]byte(`{"type":"and","filters":[{"type":"equals","filterColumn":"kind","filterValue":"click","value":1},`+
		`{"type":"not","filter":{"type":"range","filterColumn":"day","lower":null,"upper":"2025-01-02","upperOpen":true,"lowerOpne":true}}],"extra":{}}`), &f); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"icebergFilter.extra is ignored: a and filter has no such field (Druid ignores it too)",
		"icebergFilter.filters[0].value is ignored: a equals filter has no such field (Druid ignores it too)",
		"icebergFilter.filters[1].filter.lowerOpne is ignored: a range filter has no such field (Druid ignores it too)",
	}
	if got := f.Ignored("icebergFilter"); !slices.Equal(got, want) {
		t.Fatalf("ignored %q\nwant %q", got, want)
	}
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"P1D": 24 * time.Hour, "PT6H": 6 * time.Hour, "P1W": 7 * 24 * time.Hour, "PT1.5S": 1500 * time.Millisecond,
		"P1DT2H30M": 26*time.Hour + 30*time.Minute, "PT0S": 0,
	} {
		if got, err := parseISODuration(in); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "1D", "P1Y", "PT1D", "P1H", "P-1D", "PXD"} {
		if _, err := parseISODuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzFilter: any icebergFilter JSON within CheckFilterBounds (as the
// handlers check it first) decodes to an error or to a filter whose
// expression is built or refused with fault.ErrBadRequest, never a panic. The
// seeds include nesting and width at and past the bounds.
func FuzzFilter(f *testing.F) {
	for _, seed := range []string{
		nestedNot(MaxFilterDepth - 1), nestedNot(MaxFilterDepth + 5), wideOr(64), intervals(40),
		`{"type":"and","filters":[` + strings.TrimSuffix(strings.Repeat(`{"type":"or","filters":[`+wideOr(3)+`,`+nestedNot(3)+`]},`, 20), ",") + `]}`,
		`{"type":"equals","filterColumn":"day","filterValue":"2025-01-03"}`,
		`{"type":"interval","filterColumn":"ts","intervals":["2025-01-01/P1D"]}`,
		`{"type":"range","filterColumn":"id","lower":1,"upper":"x","lowerOpen":true}`,
		`{"type":"not","filter":{"type":"or","filters":[{"type":"timeWindow","filterColumn":"ts","lookbackDuration":"PT1H"}]}}`,
		`{"type":"and","filters":[{"type":"equals","filterColumn":"kind","filterValue":null}]}`,
	} {
		f.Add(seed)
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "kind", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
	)
	now := time.Date(2025, 1, 4, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data string) {
		if err := CheckFilterBounds([]byte(data)); err != nil {
			if !errors.Is(err, fault.ErrBadRequest) {
				t.Fatalf("%s: bound error %v does not wrap fault.ErrBadRequest", data, err)
			}
			return
		}
		var flt Filter
		if err := json.Unmarshal([]byte(data), &flt); err != nil {
			return
		}
		e, err := flt.Expression(schema, now)
		if err != nil {
			if !errors.Is(err, fault.ErrBadRequest) {
				t.Fatalf("%s: error %v does not wrap fault.ErrBadRequest", data, err)
			}
			return
		}
		// Binding must not panic; Plan answers its error as a 400.
		_, _ = iceberg.BindExpr(schema, e, true)
	})
}

// TestJodaTimes: the date-times and intervals Druid's Joda takes.
func TestJodaTimes(t *testing.T) {
	for in, want := range map[string]string{
		"2024":                          "2024-01-01T00:00:00Z",
		"2024-03":                       "2024-03-01T00:00:00Z",
		"2024-03-01":                    "2024-03-01T00:00:00Z",
		"2024-03-01T10":                 "2024-03-01T10:00:00Z",
		"2024-03-01T00:00Z":             "2024-03-01T00:00:00Z",
		"2024-03-01T00:00:00+0000":      "2024-03-01T00:00:00Z",
		"2024-03-01T02:00:00+02":        "2024-03-01T00:00:00Z",
		"2024-03-01T05:30:00+05:30":     "2024-03-01T00:00:00Z",
		"2024-03-01T00:00:00.5-01:00":   "2024-03-01T01:00:00.5Z",
		"2024-03-01T00:00:00,123456789": "2024-03-01T00:00:00.123456789Z",
		"2024-061":                      "2024-03-01T00:00:00Z",
		"2024-W09-5":                    "2024-03-01T00:00:00Z",
		"2020-W53":                      "2020-12-28T00:00:00Z",
	} {
		got, err := ParseInstant(in)
		if err != nil || got.Format(time.RFC3339Nano) != want {
			t.Errorf("%s: %v %v, want %s", in, got.Format(time.RFC3339Nano), err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2024-02-30", "2024-13", "2024-03-01T25:00", "2023-W53", "2024-366x", "1709251200000x"} {
		if _, err := ParseInstant(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	for in, want := range map[string]string{
		"2024-03-01/P1M":                "2024-03-01T00:00:00Z 2024-04-01T00:00:00Z",
		"2024-01-31/P1M":                "2024-01-31T00:00:00Z 2024-03-02T00:00:00Z",
		"P1D/2024-03-01":                "2024-02-29T00:00:00Z 2024-03-01T00:00:00Z",
		"2024-03-01T00:00Z/PT1H30M":     "2024-03-01T00:00:00Z 2024-03-01T01:30:00Z",
		"2024-03-01/2024-03-02T00:00Z":  "2024-03-01T00:00:00Z 2024-03-02T00:00:00Z",
		"2024-03-01/P1Y2M3W4DT5H6M7.8S": "2024-03-01T00:00:00Z 2025-05-26T05:06:07.8Z",
	} {
		a, b, err := ParseInterval(in)
		if got := a.Format(time.RFC3339Nano) + " " + b.Format(time.RFC3339Nano); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"2024-03-01", "P1D/P1D", "2024-03-02/2024-03-01", "2024-03-01/P", "2024-03-01/P1X"} {
		if _, _, err := ParseInterval(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
