package sidecartest

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/prometheus/client_golang/prometheus"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	differ "github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"

	// The local catalog is iceberg-go's hadoop catalog, registered on import.
	_ "github.com/apache/iceberg-go/catalog/hadoop"
)

// SigningKey is the fixed key every test server signs tokens with, so
// that tests can forge and compare tokens.
func SigningKey() []byte { return bytes.Repeat([]byte{7}, 32) }

// DeleteCacheSize is the delete cache of the test servers: the sidecar's
// default.
const DeleteCacheSize = 256 << 20

// Server is the sidecar's router on an httptest server.
type Server struct {
	*httptest.Server
	// Reg is the server's private registry, with the sidecar's metrics on
	// it; nil when the server exports none.
	Reg *prometheus.Registry
	// Cache is the delete cache the server's reader decodes through; nil
	// when it has none.
	Cache *deletes.Cache
}

// NewServer starts the real router over the given catalog (with mappings,
// when not nil, as its location map) on an httptest server, with a delete
// cache wired to the metrics as the sidecar does; opts set more of the
// handlers' configuration. The server closes when the test ends.
func NewServer(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, opts ...func(*handlers.Config)) *Server {
	t.Helper()
	return NewServerWithCache(t, cfg, mappings, DeleteCacheSize, opts...)
}

// NewServerWithCache is NewServer with a delete cache of cacheSize bytes;
// with 0 the reader reads every delete file of every split.
func NewServerWithCache(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, cacheSize int64, opts ...func(*handlers.Config)) *Server {
	t.Helper()
	return NewServerListening(t, cfg, mappings, cacheSize, nil, opts...)
}

// connStateHook is a listener that wants http.Server's ConnState calls.
type connStateHook interface {
	ConnState(net.Conn, http.ConnState)
}

// NewServerListening is NewServerWithCache with the server's listener
// wrapped by listen (nil: as it is). A wrapping listener with a
// ConnState(net.Conn, http.ConnState) method (a connlimit.Listener) is
// told its connections' states.
func NewServerListening(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, cacheSize int64,
	listen func(net.Listener) net.Listener, opts ...func(*handlers.Config)) *Server {
	t.Helper()
	signer, reg, m := Basics(t)
	var cache *deletes.Cache
	if cacheSize > 0 {
		cache = deletes.NewCache(cacheSize, reg)
	}
	hc := handlers.Config{
		Catalogs: []handlers.Catalog{Catalog(t, cfg, mappings, signer, reg, reader.WithDeleteCache(cache))},
		Signer:   signer,
		Metrics:  m,
		Gatherer: reg,
	}
	for _, o := range opts {
		o(&hc)
	}
	srv := httptest.NewUnstartedServer(nil)
	if listen != nil {
		srv.Listener = listen(srv.Listener)
		if l, ok := srv.Listener.(connStateHook); ok {
			srv.Config.ConnState = l.ConnState
		}
	}
	if len(hc.BasicAuth) > 0 && hc.PublicURL == "" {
		// Basic auth builds URIs from the public URL only.
		hc.PublicURL = "http://" + srv.Listener.Addr().String()
	}
	srv.Config.Handler = handlers.New(hc)
	srv.Start()
	t.Cleanup(srv.Close)
	return &Server{Server: srv, Reg: reg, Cache: cache}
}

// LocalWarehouse is an iceberg-go filesystem catalog in a temporary
// folder, and that folder.
func LocalWarehouse(t testing.TB) (*hadoop.Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	return catalogtest.Local(t, dir), dir
}

// LocalServer serves the local warehouse in dir (NewServer).
func LocalServer(t testing.TB, dir string) *Server {
	t.Helper()
	return NewServer(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil)
}

// SplittingServer serves the local warehouse in dir with a planner built
// with opts, such as one that cuts the data files larger than a target
// size by row groups.
func SplittingServer(t testing.TB, dir string, opts ...splits.PlannerOption) *Server {
	t.Helper()
	cfg := sidecatalog.Config{Type: "local", Warehouse: dir}
	signer, err := token.NewSigner(SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	return NewServer(t, cfg, nil, func(c *handlers.Config) {
		c.Catalogs = []handlers.Catalog{PlannerCatalog(t, cfg, nil, signer, opts...)}
	})
}

// Catalog wires one catalog the way the sidecar does: the catalog, with
// mappings as its location map, a planner over it, and a reader (with
// opts) whose metrics go on reg.
func Catalog(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, signer *token.Signer, reg prometheus.Registerer, opts ...reader.Option) handlers.Catalog {
	t.Helper()
	c := PlannerCatalog(t, cfg, mappings, signer)
	c.Rows = reader.New(reg, opts...)
	return c
}

// PlannerCatalog is Catalog with planner options, and a reader that
// exports no metrics.
func PlannerCatalog(t testing.TB, cfg sidecatalog.Config, mappings []sidecatalog.Mapping, signer *token.Signer, opts ...splits.PlannerOption) handlers.Catalog {
	t.Helper()
	if mappings != nil {
		cfg.LocationMap = mappings
	}
	cat := catalogtest.Open(t, cfg)
	planner, err := splits.NewPlanner(cat, signer, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return WireCatalog(cat, planner, reader.New(nil))
}

// ServeCatalog serves cat, a catalog the test built with options of its
// own, through the real router, with a planner that signs with signer.
func ServeCatalog(t testing.TB, cat *sidecatalog.Catalog, signer *token.Signer) *Server {
	t.Helper()
	planner, err := splits.NewPlanner(cat, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(handlers.New(handlers.Config{
		Catalogs: []handlers.Catalog{WireCatalog(cat, planner, reader.New(reg))},
		Signer:   signer, Metrics: metrics.New(reg), Gatherer: reg,
	}))
	t.Cleanup(srv.Close)
	return &Server{Server: srv, Reg: reg}
}

// RegistererOf is the registry of a test server's configuration, for the
// components a test wires in its configure function to register on.
func RegistererOf(c *handlers.Config) prometheus.Registerer {
	return c.Gatherer.(prometheus.Registerer)
}

// Basics are what every test sidecar has of its own: the signer of
// SigningKey, and a private registry with the sidecar's metrics on it.
func Basics(t testing.TB) (*token.Signer, *prometheus.Registry, *metrics.Metrics) {
	t.Helper()
	signer, err := token.NewSigner(SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	return signer, reg, metrics.New(reg)
}

// StartSidecar serves the catalog of cfg as cmd/sidecar wires it, on an
// httptest server that shares nothing with another but the token key: the
// catalog and a planner (with opts) that report to the sidecar's own
// metrics, and a reader; configure, when not nil, sets more of the
// handlers' configuration.
func StartSidecar(t testing.TB, cfg sidecatalog.Config, opts []splits.PlannerOption, configure func(*handlers.Config)) *Server {
	t.Helper()
	signer, reg, m := Basics(t)
	cat := catalogtest.OpenRegistered(t, cfg, reg)
	planner, err := splits.NewPlanner(cat, signer, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hc := handlers.Config{Catalogs: []handlers.Catalog{WireCatalog(cat, planner, reader.New(reg))}, Signer: signer, Metrics: m, Gatherer: reg}
	if configure != nil {
		configure(&hc)
	}
	srv := httptest.NewServer(handlers.New(hc))
	t.Cleanup(srv.Close)
	return &Server{Server: srv, Reg: reg}
}

// WireCatalog wires a catalog, its planner and a reader into the route
// families as cmd/sidecar does.
func WireCatalog(cat *sidecatalog.Catalog, p *splits.Planner, rd *reader.Reader) handlers.Catalog {
	return handlers.Catalog{Type: cat.Type(), Name: cat.Name(), Plans: p, Changes: differ.New(p), Splits: p, Rows: rd, Tables: cat}
}
