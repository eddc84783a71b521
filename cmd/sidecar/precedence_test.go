package main

import (
	"io"
	"strings"
	"testing"
)

// TestCatalogPropertyPrecedence: a flag that sets a catalog property
// (--catalog: type, --catalog-uri: uri, --warehouse: warehouse) and a
// --catalog-prop of that property: the property alone wins over the flag's
// default, the flag alone is the setting, both agreeing are fine, and both
// disagreeing stop the start naming both. The config file's fields and
// properties follow the same rule. The warehouse default is the local
// catalog's only: a REST catalog is never asked for ./warehouse.
func TestCatalogPropertyPrecedence(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		name                string
		args                []string
		typ, uri, warehouse string
		err                 string
	}{
		{name: "defaults", args: nil, typ: "local", warehouse: "./warehouse"},
		{name: "rest without a warehouse", args: []string{"--catalog", "rest", "--catalog-uri", "http://c"}, typ: "rest", uri: "http://c"},
		{name: "warehouse property alone", args: []string{"--catalog", "rest", "--catalog-uri", "http://c", "--catalog-prop", "warehouse=lake"},
			typ: "rest", uri: "http://c", warehouse: "lake"},
		{name: "warehouse flag alone", args: []string{"--catalog", "rest", "--catalog-uri", "http://c", "--warehouse", "lake"},
			typ: "rest", uri: "http://c", warehouse: "lake"},
		{name: "both agree", args: []string{"--catalog", "rest", "--catalog-uri", "http://c", "--warehouse", "lake", "--catalog-prop", "warehouse=lake"},
			typ: "rest", uri: "http://c", warehouse: "lake"},
		{name: "both disagree", args: []string{"--catalog", "rest", "--catalog-uri", "http://c", "--warehouse", "lake", "--catalog-prop", "warehouse=other"},
			err: `--warehouse "lake" and --catalog-prop warehouse="other" disagree`},
		{name: "uri property alone", args: []string{"--catalog", "rest", "--catalog-prop", "uri=http://p"}, typ: "rest", uri: "http://p"},
		{name: "uri disagrees", args: []string{"--catalog", "rest", "--catalog-uri", "http://c", "--catalog-prop", "uri=http://p"},
			err: `--catalog-uri "http://c" and --catalog-prop uri="http://p" disagree`},
		{name: "type property alone", args: []string{"--catalog-prop", "type=rest", "--catalog-uri", "http://c"}, typ: "rest", uri: "http://c"},
		{name: "type disagrees", args: []string{"--catalog", "local", "--catalog-prop", "type=rest"},
			err: `--catalog "local" and --catalog-prop type="rest" disagree`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServe(tc.args, none, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := cfg.Catalogs[0]
			if c.Type != tc.typ || c.URI != tc.uri || c.Warehouse != tc.warehouse {
				t.Fatalf("catalog %s uri %q warehouse %q, want %s %q %q", c.Type, c.URI, c.Warehouse, tc.typ, tc.uri, tc.warehouse)
			}
		})
	}

	for _, tc := range []struct{ name, body, want string }{
		{"field and property agree", "catalogs:\n  - {name: a, type: rest, uri: http://c, warehouse: lake, properties: {warehouse: lake}}\n", ""},
		{"property alone", "catalogs:\n  - {name: a, type: rest, uri: http://c, properties: {warehouse: lake}}\n", ""},
		{"field and property disagree", "catalogs:\n  - {name: a, type: rest, uri: http://c, warehouse: lake, properties: {warehouse: other}}\n",
			`catalog a: warehouse "lake" and properties.warehouse="other" disagree`},
	} {
		t.Run("config file: "+tc.name, func(t *testing.T) {
			cfg, err := parseServe([]string{"--config", writeConfig(t, tc.body)}, none, io.Discard)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := cfg.Catalogs[0].Warehouse; w != "lake" {
				t.Fatalf("warehouse %q, want lake", w)
			}
		})
	}
}
