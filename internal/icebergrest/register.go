package icebergrest

import (
	"context"
	"iter"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// RegisterTables registers tables (name to metadata file) in the namespace
// ns of the REST catalog at url, creating the namespace and its parents,
// as iceberg-go's REST client does for a writer.
func RegisterTables(t testing.TB, url string, ns table.Identifier, tables iter.Seq2[string, string]) {
	t.Helper()
	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "writer", url)
	if err != nil {
		t.Fatalf("open the REST catalog at %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	for i := range ns {
		if err := cat.CreateNamespace(ctx, ns[:i+1], nil); err != nil {
			t.Fatalf("create the namespace %v: %v", ns[:i+1], err)
		}
	}
	for name, metadata := range tables {
		ident := append(slices.Clone(ns), name)
		if _, err := cat.RegisterTable(ctx, ident, metadata); err != nil {
			t.Fatalf("register %v (%s): %v", ident, metadata, err)
		}
	}
}
