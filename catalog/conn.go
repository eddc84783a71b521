package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/config"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// tableLoader loads tables by identifier; iceberg-go's catalogs and the
// static catalog implement it.
type tableLoader interface {
	LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error)
}

// staticCatalog serves a fixed map of tables, each read from its metadata
// file through the server's FileIO.
type staticCatalog struct {
	tables map[string]string
	fsys   icebergio.IO
}

func (s staticCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	loc, ok := s.tables[strings.Join(ident, ".")]
	if !ok {
		return nil, catalog.ErrNoSuchTable
	}
	fsF := func(context.Context) (icebergio.IO, error) { return s.fsys, nil }
	return table.NewFromLocation(ctx, ident, loc, fsF, nil)
}

// conn connects to the catalog on first use and again after a failure, so
// a catalog that is down at start-up is not fatal: loading a table answers
// ErrUnavailable until it is back. A failure is remembered for retryAfter so
// that retrying clients do not turn into a connection storm.
type conn struct {
	cfg        Config
	secrets    []string
	server     icebergio.IO
	retryAfter time.Duration
	now        func() time.Time

	mu       sync.Mutex
	loader   tableLoader
	lastErr  error
	failedAt time.Time
	// unhealthy is the last ErrUnavailable or ErrDenied of a table load,
	// cleared by the next load that gets an answer.
	unhealthy error

	// answerLimit bounds a REST catalog's answers outside a plan (tests;
	// 0 is maxAnswerBytes).
	answerLimit int64
}

// observe records whether a table load got an answer from the catalog; any
// error but ErrUnavailable and ErrDenied (a missing table, say) is an answer.
func (c *conn) observe(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, fault.ErrUnavailable) || errors.Is(err, fault.ErrDenied) {
		c.unhealthy = err
	} else {
		c.unhealthy = nil
	}
}

// health is the last table load's verdict on the catalog.
func (c *conn) health() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unhealthy
}

func (c *conn) get(ctx context.Context) (tableLoader, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loader != nil {
		return c.loader, nil
	}
	if c.lastErr != nil && c.now().Sub(c.failedAt) < c.retryAfter {
		return nil, c.lastErr
	}
	l, err := c.connect(ctx)
	if err != nil {
		kind := fault.ErrUnavailable
		if deniedByCatalog(err) {
			kind = fault.ErrDenied
		}
		c.lastErr = redact(fmt.Errorf("%w: connect to %s catalog %q: %w", kind, c.cfg.Type, c.cfg.Name, err), c.secrets)
		c.failedAt = c.now()
		return nil, c.lastErr
	}
	c.loader, c.lastErr = l, nil
	return l, nil
}

// connect opens the catalog with iceberg-go. The uri and warehouse
// properties are the configuration's URI and Warehouse when those are set;
// the configuration (cmd/sidecar) has already settled a flag against a
// property of the same meaning.
func (c *conn) connect(ctx context.Context) (tableLoader, error) {
	if c.cfg.Type == "static" {
		return staticCatalog{tables: c.cfg.Tables, fsys: c.server}, nil
	}
	props := maps.Clone(c.cfg.Props)
	if props == nil {
		props = map[string]string{}
	}
	typ := c.cfg.Type
	warehouse := c.cfg.Warehouse
	if typ == "local" {
		typ = string(catalog.Hadoop)
		abs, err := filepath.Abs(warehouse)
		if err != nil {
			return nil, fmt.Errorf("resolve warehouse %s: %w", warehouse, err)
		}
		warehouse = abs
	}
	props["type"] = typ
	if typ == "sql" {
		driver, dialect, err := SQLDriver(c.cfg.URI, props)
		if err != nil {
			return nil, err
		}
		props["sql.driver"], props["sql.dialect"] = driver, dialect
	}
	if c.cfg.URI != "" {
		props["uri"] = c.cfg.URI
	}
	if warehouse != "" {
		props["warehouse"] = warehouse
	}
	name := cmp.Or(c.cfg.IcebergName, c.cfg.Name)
	if typ == "rest" {
		// What catalog.Load adds before it hands the properties to the
		// REST catalog: the uri, credential and warehouse of iceberg-go's
		// own configuration file (.iceberg-go.yaml) for that name, where
		// the properties have none.
		env := config.EnvConfig.Catalogs[name]
		for k, v := range map[string]string{"uri": env.URI, "credential": env.Credential, "warehouse": env.Warehouse} {
			if _, ok := props[k]; !ok {
				props[k] = v
			}
		}
		return connectREST(ctx, name, props["uri"], props, cmp.Or(c.answerLimit, maxAnswerBytes))
	}
	return catalog.Load(ctx, name, props)
}

// close releases what the catalog holds (iceberg-go's SQL catalog holds a
// connection pool, its REST catalog idle connections).
func (c *conn) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.loader
	c.loader = nil
	if cl, ok := l.(interface{ Close() error }); ok {
		return cl.Close()
	}
	if cl, ok := l.(interface{ Close() }); ok {
		cl.Close()
	}
	return nil
}
