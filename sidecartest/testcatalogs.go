package sidecartest

import (
	"context"
	"maps"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

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
