package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/token"
)

// TestNamedCatalogs: one sidecar serves several catalogs, each with its own
// storage credentials. ?catalog= picks one, the token remembers it, and its
// rows are read through that catalog's FileIO.
func TestNamedCatalogs(t *testing.T) {
	ctx := context.Background()
	// "east" is a local warehouse; "lake" a static catalog whose metadata
	// and files sit in an S3 store only its own properties reach. Snappy
	// (catalogtest.SnappyWrites): which catalog serves a table does not
	// depend on the codec.
	eastCat, eastDir := localWarehouse(t)
	eastTbl, err := tablegen.ScenarioNamed(t, "no_deletes").Build(ctx, catalogtest.SnappyWrites(eastCat), table.Identifier{"sales", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	s3lake := catalogtest.NewS3Lake(t, "s3://lake/warehouse")
	lakeTbl, err := tablegen.ScenarioNamed(t, "positional_and_equality").Build(ctx, catalogtest.SnappyWrites(s3lake.Cat), table.Identifier{"sales", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	lakeCfg := s3lake.Config(lakeTbl)
	down := sidecatalog.Config{Type: "rest", Name: "down", URI: "http://" + testnet.FreeAddr(t)}

	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	// One delete cache for both, as the sidecar has.
	cache := reader.WithDeleteCache(deletes.NewCache(testDeleteCacheSize, nil))
	east := sidecartest.Catalog(t, sidecatalog.Config{Type: "local", Name: "east", Warehouse: eastDir}, nil, signer, nil, cache)
	lake := sidecartest.Catalog(t, lakeCfg, nil, signer, nil, cache)
	start := func(def string, cats ...handlers.Catalog) *testServer {
		reg := prometheus.NewRegistry()
		srv := httptest.NewServer(handlers.New(handlers.Config{
			Catalogs: cats, DefaultCatalog: def, Signer: signer, Metrics: metrics.New(reg), Gatherer: reg,
		}))
		t.Cleanup(srv.Close)
		return &testServer{Server: srv, reg: reg}
	}
	srv := start("", east, lake)

	resp, body := srv.get(t, "/splits?table=sales.orders")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "east, lake") {
		t.Fatalf("no catalog named with two served: %d %s", resp.StatusCode, body)
	}
	resp, body = srv.get(t, "/splits?table=sales.orders&catalog=west")
	if resp.StatusCode != http.StatusNotFound || errorCode(t, body) != "catalog_not_found" {
		t.Fatalf("an unknown catalog: %d %s", resp.StatusCode, body)
	}

	for _, c := range []struct {
		name string
		tbl  *table.Table
		mode string
	}{{"east", eastTbl, "v1"}, {"lake", lakeTbl, "v2"}} {
		p := srv.plan(t, q("table", "sales.orders", "catalog", c.name, "mode", "rows"))
		want, err := tablegen.OracleRows(ctx, c.tbl, c.tbl.CurrentSnapshot().SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		servetest.SameRows(t, srv.rows(t, p), want)
		if p := srv.plan(t, q("table", "sales.orders", "catalog", c.name)); p.Mode != c.mode {
			t.Errorf("catalog %s planned %s, want %s", c.name, p.Mode, c.mode)
		}
	}

	// With a default, a request without ?catalog= plans against it.
	if p := start("lake", east, lake).plan(t, q("table", "sales.orders")); p.Mode != "v2" {
		t.Fatalf("the default catalog lake planned %s", p.Mode)
	}

	// A token of a catalog the sidecar no longer serves is gone, not
	// misread through another catalog's storage.
	p := srv.plan(t, q("table", "sales.orders", "catalog", "lake"))
	onlyEast := start("", east)
	resp, body = onlyEast.get(t, strings.TrimPrefix(p.Splits[0].URI, srv.URL))
	if resp.StatusCode != http.StatusGone || errorCode(t, body) != "catalog_gone" {
		t.Fatalf("a token of a removed catalog: %d %s", resp.StatusCode, body)
	}

	// /readyz is ready only when every catalog answers, and names the one
	// that does not.
	if resp, body := srv.get(t, "/readyz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz with both catalogs up: %d %s", resp.StatusCode, body)
	}
	withDown := start("east", east, lake, sidecartest.Catalog(t, down, nil, signer, nil))
	resp, body = withDown.get(t, "/readyz")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `catalog \"down\"`) {
		t.Fatalf("/readyz with catalog down unreachable: %d %s", resp.StatusCode, body)
	}
	if p := withDown.plan(t, q("table", "sales.orders")); p.Mode != "v1" {
		t.Fatalf("the reachable default catalog planned %s", p.Mode)
	}
}
