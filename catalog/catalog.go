// Package catalog connects the sidecar to one configured Iceberg catalog
// (iceberg-go's local, REST, Glue, Hive and SQL catalogs, and a static map
// of tables) and gives each table it loads the FileIO to read it with: the
// table's own, as the catalog loaded it, so that the storage credentials a
// REST catalog vends for that table (in its load answer's config or
// prefix-scoped storage-credentials, which iceberg-go merges and scopes)
// read its files; the server's own properties read the tables of a catalog
// that vends nothing, and every location under a location map's prefix.
//
// Tokens name their catalog and table, never credentials: a replica that
// serves one loads the table itself (TableAt), from a bounded cache that is
// filled once for concurrent requests, loaded again when it is old, when
// the table's FileIO can no longer renew the credentials, and when the
// store refuses them (a file already open is then opened again with the
// new ones and read on at the same offset).
//
// Every error of the catalog or its storage is classified with the split
// package's sentinels (ErrTableNotFound, ErrDenied, ErrUnavailable,
// ErrForbiddenLocation) and scrubbed of the configuration's secrets; the
// catalog never logs. The package example loads a table and opens a file
// with its FileIO.
package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/promreg"
)

// The bounds and ages of a Catalog's caches.
const (
	// maxCachedTables bounds the tables kept loaded for serving tokens.
	maxCachedTables = 1024
	// maxCachedMetadata bounds the pinned metadata files kept parsed.
	maxCachedMetadata = 256
	// tableMaxAge is how long a table loaded for its tokens' reads is used
	// before it is loaded again: credentials a catalog vends in a load
	// answer's config alone carry no expiry iceberg-go acts on, so they
	// are renewed by age, and on a refusal.
	tableMaxAge = 5 * time.Minute
	// fsMaxAge is how long a table's FileIO is used before the table is
	// asked for it again, which is when iceberg-go renews prefix-scoped
	// vended credentials that near their expiry.
	fsMaxAge = 10 * time.Second
	// retryConnect is how long a failed connection is not tried again.
	retryConnect = 2 * time.Second
	// maxLoad bounds a table load that no request's deadline bounds (the
	// reads of a token have none).
	maxLoad = 2 * time.Minute
)

// Option configures a Catalog.
type Option func(*Catalog)

// WithStallTimeout bounds every read of a table's files: a read that gets
// nothing from the store for d fails with ErrStalled (an ErrUnavailable),
// so that a stream from a store that stopped answering aborts and its
// client retries, instead of hanging; 0 waits for ever.
func WithStallTimeout(d time.Duration) Option { return func(c *Catalog) { c.stall = d } }

// WithPrivateFiles adds files of the process (the token key, the config
// file, credential and TLS files) that no table may open, whatever the
// roots say; Config.PrivateFiles are the catalog's own.
func WithPrivateFiles(paths ...string) Option {
	return func(c *Catalog) { c.private = append(c.private, paths...) }
}

// WithClock sets the clock the caches and a failed connection's retry age
// by (tests).
func WithClock(now func() time.Time) Option { return func(c *Catalog) { c.now = now } }

// WithFileIOWrapper hands wrap the FileIO that opens each file of a table
// (the table's, or the server's), and opens through what it returns: tests
// watch or fail what a table opens with it, under the catalog's
// classification of errors.
func WithFileIOWrapper(wrap func(icebergio.IO) icebergio.IO) Option {
	return func(c *Catalog) { c.wrap = wrap }
}

// Catalog is one configured catalog. It is safe for concurrent use.
type Catalog struct {
	cfg     Config
	secrets []string
	server  *FS
	conn    *conn
	// ctx lives until Close: the FileIOs built for tables keep the context
	// they were built with for every later read, so it must not be a
	// request's.
	ctx    context.Context
	cancel context.CancelFunc
	// reloads counts the tables loaded again for the reads of their
	// tokens, by catalog, reason and outcome (see reload).
	reloads *prometheus.CounterVec
	now     func() time.Time
	wrap    func(icebergio.IO) icebergio.IO
	// stall bounds each read of a file (WithStallTimeout); buffers pools
	// the buffers of watched reads.
	stall   time.Duration
	buffers sync.Pool

	tables *lru.Cache[string, *loaded]
	loads  singleflight.Group
	metas  *lru.Cache[string, table.Metadata]

	// allow is the tables the catalog serves; roots are the operator's
	// roots of every table's files, realRoots the real paths of local
	// roots, private the process's own files that no table opens (see
	// confine.go).
	allow     allowlist
	roots     roots
	realRoots *lru.Cache[string, string]
	private   []string
}

// New returns the catalog cfg describes. It does not contact the catalog:
// the first load does, and a catalog that is down gives ErrUnavailable
// until it answers. It counts its table reloads on reg (nil: not
// exported), where the other catalogs count theirs, labelled by name.
func New(cfg Config, reg prometheus.Registerer, opts ...Option) (*Catalog, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "sidecar"
	}
	tables, err := lru.New[string, *loaded](maxCachedTables)
	if err != nil {
		return nil, fmt.Errorf("create table cache: %w", err)
	}
	metas, err := lru.New[string, table.Metadata](maxCachedMetadata)
	if err != nil {
		return nil, fmt.Errorf("create metadata cache: %w", err)
	}
	allow, err := parseAllow(cfg.Allow)
	if err != nil {
		return nil, err
	}
	realRoots, err := lru.New[string, string](maxCachedTables)
	if err != nil {
		return nil, fmt.Errorf("create roots cache: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Catalog{cfg: cfg, secrets: cfg.secrets(), server: NewFS(cfg.Props, cfg.LocationMap), ctx: ctx, cancel: cancel,
		now: time.Now, tables: tables, metas: metas, allow: allow, roots: operatorRoots(cfg), realRoots: realRoots, private: slices.Clone(cfg.PrivateFiles),
		reloads: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_catalog_table_reloads_total",
			Help: "Tables loaded again from their catalog to read their tokens' files with fresh storage credentials, by catalog, reason (age: the load was old; expired: the vended credentials could not be renewed; refused: the store refused them) and outcome (ok, error).",
		}, []string{"catalog", "reason", "outcome"}))}
	if kp := cfg.Props["gcs.keypath"]; kp != "" {
		// The GCS key file of the server's FileIO.
		c.private = append(c.private, kp)
	}
	c.conn = &conn{cfg: cfg, secrets: c.secrets, server: c.server, retryAfter: retryConnect}
	for _, o := range opts {
		o(c)
	}
	c.conn.now = c.now
	return c, nil
}

// Name and Type are the catalog's configured name and type.
func (c *Catalog) Name() string { return c.cfg.Name }
func (c *Catalog) Type() string { return c.cfg.Type }

// Close releases the catalog's connections. The catalog is unusable after.
func (c *Catalog) Close() error {
	c.cancel()
	c.tables.Purge()
	return c.conn.close()
}

// Ping connects to the catalog if it is not connected yet.
//
// Once connected, it reports the last verdict on the catalog and its
// storage: after a table load failed because the catalog did not answer or
// refused, or a file open failed because the store did, Ping fails until a
// table load succeeds again, so /readyz says whether the sidecar could
// read recently.
func (c *Catalog) Ping(ctx context.Context) error {
	if _, err := c.conn.get(ctx); err != nil {
		return err
	}
	return c.conn.health()
}

// loaded is a table as the catalog loaded it, with the FileIO it reads
// with.
type loaded struct {
	tbl *table.Table
	at  time.Time
	// fs is tbl's FileIO, asked for again after fsMaxAge.
	fs *loadedFS
}

// LoadTable loads a table from the catalog, always asking the catalog (a
// plan reads the current snapshot). The table reads its files through its
// own FileIO with the location map applied (see the package doc), and the
// load is kept for the reads of the tokens planned from it.
func (c *Catalog) LoadTable(ctx context.Context, ident []string) (*table.Table, error) {
	if err := c.check(ident); err != nil {
		return nil, err
	}
	l, err := c.load(ctx, ident)
	if err != nil {
		return nil, err
	}
	c.tables.Add(tableKey(ident), l)
	// The freshest read of a metadata file is the one kept.
	c.metas.Add(l.tbl.MetadataLocation(), l.tbl.Metadata())
	return c.readThrough(ident, l.tbl.Metadata(), l.tbl.MetadataLocation()), nil
}

// TableAt returns a table as the metadata file at metadataLocation records
// it (the one a token pins), reading its files through the FileIO the
// catalog gives the table now: the table is loaded from the catalog once
// for many requests (see the package doc), the metadata file read once
// while it stays cached.
func (c *Catalog) TableAt(ctx context.Context, ident []string, metadataLocation string) (*table.Table, error) {
	if err := c.check(ident); err != nil {
		return nil, err
	}
	l, err := c.cached(ctx, ident)
	if err != nil {
		return nil, err
	}
	meta, ok := c.metas.Get(metadataLocation)
	switch {
	case ok:
	case l.tbl.MetadataLocation() == metadataLocation:
		meta = l.tbl.Metadata()
		c.metas.Add(metadataLocation, meta)
	default:
		if meta, err = c.readMetadata(ctx, l, ident, metadataLocation); err != nil {
			return nil, err
		}
	}
	return c.readThrough(ident, meta, metadataLocation), nil
}

// ReadMetadata reads the metadata file at location of a table now, through
// the table's FileIO, whatever is cached, and caches what it read: for a
// caller that suspects the file was rewritten in place.
func (c *Catalog) ReadMetadata(ctx context.Context, ident []string, location string) (table.Metadata, error) {
	if err := c.check(ident); err != nil {
		return nil, err
	}
	l, err := c.cached(ctx, ident)
	if err != nil {
		return nil, err
	}
	return c.readMetadata(ctx, l, ident, location)
}

// readMetadata reads a metadata file of table l and caches it.
func (c *Catalog) readMetadata(ctx context.Context, l *loaded, ident []string, location string) (table.Metadata, error) {
	fsF := c.readThrough(ident, l.tbl.Metadata(), l.tbl.MetadataLocation()).FS
	tbl, err := table.NewFromLocation(ctx, ident, location, fsF, nil)
	if err != nil {
		return nil, redact(classify(c.cfg.Name, "read metadata "+location, quotesNoBytes(err)), c.secrets)
	}
	c.metas.Add(location, tbl.Metadata())
	return tbl.Metadata(), nil
}

// readThrough is a table of the given metadata that reads through the
// table's FileIO (tableIO), confined to the operator's roots.
func (c *Catalog) readThrough(ident []string, meta table.Metadata, metadataLocation string) *table.Table {
	tio := &tableIO{c: c, ident: slices.Clone(ident)}
	fsF := func(context.Context) (icebergio.IO, error) { return tio, nil }
	return table.New(ident, meta, metadataLocation, fsF, nil)
}

// load loads a table from the catalog, once for concurrent callers.
func (c *Catalog) load(ctx context.Context, ident []string) (*loaded, error) {
	ch := c.loads.DoChan(tableKey(ident), func() (any, error) {
		// A load shared by several requests must not fail because the
		// first of them went away, but it ends a little after that
		// request's deadline (a plan's --plan-timeout: the request's own
		// deadline ends the request first, and a plan timeout is told
		// apart by its cause), or after maxLoad when it has none, so that
		// a catalog that never answers holds nobody for ever.
		deadline, ok := ctx.Deadline()
		if ok {
			deadline = deadline.Add(time.Second)
		} else {
			deadline = time.Now().Add(maxLoad)
		}
		lctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		return c.loadNow(lctx, ident)
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: load table %s in catalog %q: %w", fault.ErrUnavailable, strings.Join(ident, "."), c.cfg.Name,
			context.Cause(ctx))
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*loaded), nil
	}
}

// loadNow asks the catalog for a table and checks that the sidecar can
// serve it.
func (c *Catalog) loadNow(ctx context.Context, ident []string) (*loaded, error) {
	loader, err := c.conn.get(ctx)
	if err != nil {
		return nil, err
	}
	tbl, err := loader.LoadTable(ctx, ident)
	if err != nil {
		err = redact(classifyLoadError(c.cfg.Name, ident, err), c.secrets)
		c.conn.observe(err)
		return nil, err
	}
	c.conn.observe(nil)
	if err := servable(c.cfg, ident, tbl); err != nil {
		return nil, err
	}
	if err := c.checkTable(ident, tbl.Metadata(), tbl.MetadataLocation()); err != nil {
		return nil, err
	}
	l := &loaded{tbl: tbl, at: c.now(), fs: &loadedFS{}}
	// The table's FileIO is built now, so that a table whose storage the
	// sidecar cannot read fails its plan, not the first read of a token.
	if _, err := l.fs.get(c, tbl); err != nil {
		return nil, redact(unreadableStorage(c.cfg.Name, ident, err), c.secrets)
	}
	return l, nil
}

// unreadableStorage is the error of a table whose FileIO cannot be built
// from its load answer: a storage scheme this build lacks, properties
// iceberg-go refuses, or remote signing, which iceberg-go does not do
// (io/gocloud/s3 ParseAWSConfig refuses s3.remote-signing-enabled with an
// error of its own words only, matched here by them).
func unreadableStorage(catalogName string, ident []string, err error) error {
	name := strings.Join(ident, ".")
	if strings.Contains(err.Error(), "remote S3 request signing") {
		return fmt.Errorf("%w: table %s in catalog %q: the catalog asks for remote signing of S3 requests "+
			"(s3.remote-signing-enabled in its load answer), which the sidecar does not do: have the catalog vend "+
			"credentials, or give the sidecar static S3 keys", fault.ErrUnsupported, name, catalogName)
	}
	return fmt.Errorf("%w: table %s in catalog %q: its storage cannot be read: %w", fault.ErrUnsupported, name, catalogName, err)
}

// servable refuses a table the sidecar cannot read whatever it plans: an
// encrypted one, one whose load answer asks for remote signing, and, from
// a REST catalog, one whose properties configure storage (tableStorageProp):
// iceberg-go's REST catalog (v0.7.0, catalog/rest LoadTable) merges a
// table's properties into the configuration of the table's FileIO, over
// the operator's, so a writer of the table could send the requests signed
// with the operator's keys to a host of its choosing (s3.endpoint), or
// read a key file of the process's (gcs.keypath). The other catalogs
// build the FileIO from the catalog's properties only.
func servable(cfg Config, ident []string, tbl *table.Table) error {
	catalogName := cfg.Name
	name := strings.Join(ident, ".")
	if key, ok := tableStorageProp(tbl.Properties()); ok && cfg.Type == "rest" {
		return fmt.Errorf("%w: table %s in catalog %q sets the storage property %s in its table properties; storage "+
			"endpoints, regions, credentials and signers come from the sidecar's configuration or the catalog's config "+
			"and vended credentials, never from a table's properties: remove it from the table "+
			"(ALTER TABLE … UNSET TBLPROPERTIES ('%s'))", fault.ErrUnsupported, name, catalogName, key, key)
	}
	for range tbl.Metadata().EncryptionKeys() {
		return fmt.Errorf("%w: table %s in catalog %q is encrypted (its metadata holds encryption-keys); "+
			"the sidecar does not read encrypted tables", fault.ErrUnsupported, name, catalogName)
	}
	if key, why, ok := refusedProp(tbl.Properties()); ok {
		return fmt.Errorf("%w: table %s in catalog %q sets %s: %s", fault.ErrUnsupported, name, catalogName, key, why)
	}
	return nil
}

// cached is the table's load kept for its tokens' reads, loaded anew when
// there is none or it is older than tableMaxAge.
func (c *Catalog) cached(ctx context.Context, ident []string) (*loaded, error) {
	key := tableKey(ident)
	l, ok := c.tables.Get(key)
	if ok && c.now().Sub(l.at) < tableMaxAge {
		return l, nil
	}
	if ok {
		return c.reload(ctx, ident, l, "age")
	}
	l, err := c.load(ctx, ident)
	if err != nil {
		return nil, err
	}
	c.tables.Add(key, l)
	return l, nil
}

// reload loads a table again because its load stale was old, or its
// credentials expired or were refused (reason), unless another request has
// already replaced stale.
func (c *Catalog) reload(ctx context.Context, ident []string, stale *loaded, reason string) (*loaded, error) {
	key := tableKey(ident)
	if cur, ok := c.tables.Get(key); ok && cur != stale {
		return cur, nil
	}
	l, err := c.load(ctx, ident)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	c.reloads.WithLabelValues(c.cfg.Name, reason, outcome).Inc()
	if err != nil {
		return nil, err
	}
	if cur, ok := c.tables.Get(key); !ok || cur == stale || cur.at.Before(l.at) {
		c.tables.Add(key, l)
	}
	return l, nil
}

// tableKey is a table's key in the caches: its identifier's parts cannot
// hold a NUL (token.ParseIdentifier).
func tableKey(ident []string) string { return strings.Join(ident, "\x00") }
