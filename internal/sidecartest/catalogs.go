package sidecartest

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// ScenarioNamed is the tablegen scenario of that name.
func ScenarioNamed(t testing.TB, name string) tablegen.Scenario {
	t.Helper()
	for _, s := range tablegen.Scenarios() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %s", name)
	return tablegen.Scenario{}
}

// SeaweedREST opens SeaweedFS's REST catalog with iceberg-go as the admin,
// and says how the sidecar reaches it (as the catalog "seaweed").
func SeaweedREST(t testing.TB, w *Seaweed) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	cfg := sidecatalog.Config{Type: "rest", Name: "seaweed", URI: w.RESTURL, Warehouse: "s3://" + w.Bucket, Props: w.Props()}
	all := maps.Clone(cfg.Props)
	all["type"], all["uri"], all["warehouse"] = "rest", cfg.URI, cfg.Warehouse
	cat, err := catalog.Load(context.Background(), cfg.Name, all)
	if err != nil {
		t.Fatalf("open SeaweedFS's REST catalog: %v", err)
	}
	return cat, cfg
}

// IcebergREST starts Iceberg's own REST catalog server over a new local
// warehouse, opens it with iceberg-go's REST client to write with, and
// says how the sidecar reaches it (as the catalog "iceberg").
func IcebergREST(t testing.TB, opts ...icebergrest.Option) (catalog.Catalog, sidecatalog.Config) {
	t.Helper()
	warehouse := t.TempDir()
	url := icebergrest.Start(t, warehouse, opts...)
	cat, err := rest.NewCatalog(context.Background(), "writer", url)
	if err != nil {
		t.Fatalf("open Iceberg's REST catalog server: %v", err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat, sidecatalog.Config{Type: "rest", Name: "iceberg", URI: url, DataRoots: []string{warehouse}}
}

// RegisterTables registers tables (name to metadata file) in the namespace
// ns of the REST catalog at url, creating the namespace and its parents.
func RegisterTables(t testing.TB, url string, ns table.Identifier, tables func(yield func(name, metadata string) bool)) {
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

// historyLayouts are the time column kinds and layouts HistoryOptions
// cycles through.
var historyLayouts = []struct {
	time   tablegen.TimeKind
	layout tablegen.Layout
}{
	{tablegen.TimeTimestamp, tablegen.LayoutDay},
	{tablegen.TimeTimestampTz, tablegen.LayoutCategory},
	{tablegen.TimeDate, tablegen.LayoutUnpartitioned},
	{tablegen.TimeLongMillis, tablegen.LayoutCategory},
	{tablegen.TimeTimestamp, tablegen.LayoutUnpartitioned},
}

// HistoryOptions are the options of the random tablegen history i: seed
// i+1, and the i-th of five time column kinds and layouts (cycling).
func HistoryOptions(i int) tablegen.HistoryOptions {
	l := historyLayouts[i%len(historyLayouts)]
	return tablegen.HistoryOptions{Seed: uint64(i + 1), Time: l.time, Layout: l.layout}
}
