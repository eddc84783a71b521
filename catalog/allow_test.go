package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// TestAllowlist: an entry serves the table of its name and every table of
// the namespace of its name, nested ones included, and nothing that only
// begins with the same letters; no entry serves all; an entry no table
// name could be is refused when the catalog is made.
func TestAllowlist(t *testing.T) {
	a, err := parseAllow([]string{"sales", "ops.audit", "a.b.c"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"sales.orders":    true,
		"sales.eu.orders": true,
		"ops.audit":       true,
		"ops.audit.x":     true,
		"ops.other":       false,
		"salesx.orders":   false,
		"a.b.c":           true,
		"a.b.d":           false,
		"SALES.orders":    false,
	} {
		if got := a.allows(strings.Split(name, ".")); got != want {
			t.Errorf("allows(%s) = %v, want %v", name, got, want)
		}
	}
	if !(allowlist(nil)).allows([]string{"any", "table"}) {
		t.Error("an empty allowlist refuses a table")
	}
	if _, err := New(Config{Type: "static", Tables: map[string]string{"a.b": "/m.json"}, Allow: []string{"a/b"}}, nil); err == nil {
		t.Error("New accepted an allowlist entry with a '/'")
	}
	cat, err := New(Config{Type: "static", Tables: map[string]string{"a.b": "/m.json"}, Allow: []string{"c"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	ctx := context.Background()
	if _, err := cat.LoadTable(ctx, []string{"a", "b"}); !errors.Is(err, fault.ErrNotServed) {
		t.Errorf("LoadTable of a table not served: %v, want ErrNotServed", err)
	}
	if _, err := cat.TableAt(ctx, []string{"a", "b"}, "/m.json"); !errors.Is(err, fault.ErrNotServed) {
		t.Errorf("TableAt of a table not served: %v, want ErrNotServed", err)
	}
	if names, _, err := cat.Tables(ctx); err != nil || len(names) != 0 {
		t.Errorf("Tables: %q, %v; want none", names, err)
	}
}
