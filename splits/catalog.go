package splits

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/storage"
)

// CatalogTypes are the catalog types the sidecar accepts. All but static are
// iceberg-go's own catalog packages (local is its hadoop catalog); static is a
// fixed map of table name to metadata file.
var CatalogTypes = []string{"local", "rest", "glue", "hive", "sql", "static"}

// CatalogConfig says which catalog to plan against. It is fixed at start-up:
// no request can point the sidecar at another catalog.
type CatalogConfig struct {
	Type string
	// Name is the sidecar's name for the catalog: requests pick it with
	// ?catalog= and tokens carry it.
	Name string
	// IcebergName is the name handed to iceberg-go, when it differs from
	// Name. The SQL (JDBC) catalog keys its rows by it: it must be the name
	// the writers use (Spark's spark.sql.catalog.<name>).
	IcebergName string
	URI         string
	Warehouse   string
	// Props go to iceberg-go's catalog and to its FileIO.
	Props map[string]string
	// Tables maps NS.NAME to a metadata file location (static catalog only).
	Tables map[string]string
	// Secrets are values that must never reach a log line or a client (the
	// config file's env and file references); they are scrubbed from every
	// catalog error, as are secret-looking properties and the URI's password.
	Secrets []string
}

// secretKeys are the substrings of a property key whose value is a secret.
var secretKeys = []string{"secret", "password", "credential", "token", "session"}

// secrets lists the values that redact scrubs.
func (c CatalogConfig) secrets() []string {
	out := slices.Clone(c.Secrets)
	for k, v := range c.Props {
		lk := strings.ToLower(k)
		if v != "" && slices.ContainsFunc(secretKeys, func(s string) bool { return strings.Contains(lk, s) }) {
			out = append(out, v)
			// A credential is often id:secret; the secret alone may be
			// quoted too.
			if _, sec, ok := strings.Cut(v, ":"); ok && sec != "" {
				out = append(out, sec)
			}
		}
	}
	if u, err := url.Parse(c.URI); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			out = append(out, pw, url.QueryEscape(pw))
		}
	}
	// The longest first, so that a secret containing another is scrubbed
	// whole.
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.DeleteFunc(out, func(s string) bool { return len(s) < 4 })
}

// redactedError is an error whose text has the secrets scrubbed; errors.Is
// and errors.As still see the cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact scrubs secrets from err's text.
func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "<redacted>")
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// Validate checks the configuration without contacting anything.
func (c CatalogConfig) Validate() error {
	if !slices.Contains(CatalogTypes, c.Type) {
		return fmt.Errorf("catalog %q: want one of %s", c.Type, strings.Join(CatalogTypes, ", "))
	}
	switch c.Type {
	case "local":
		if c.Warehouse == "" {
			return errors.New("catalog local needs a warehouse (--warehouse)")
		}
	case "static":
		if len(c.Tables) == 0 {
			return errors.New("catalog static needs at least one table (--table NS.NAME=METADATA_LOCATION)")
		}
		for name := range c.Tables {
			if _, err := ParseIdentifier(name); err != nil {
				return err
			}
		}
	case "rest", "hive", "sql":
		if c.URI == "" {
			return fmt.Errorf("catalog %s needs a uri (--catalog-uri)", c.Type)
		}
	}
	if c.Type == "sql" {
		if _, _, err := SQLDriver(c.URI, c.Props); err != nil {
			return err
		}
	}
	return nil
}

// SQLDriver returns the database/sql driver and iceberg-go dialect of a SQL
// catalog: the sql.driver and sql.dialect properties when given, else what
// the URI says (postgres:// is PostgreSQL through pgx; file: or a path ending
// in .db or .sqlite is SQLite).
func SQLDriver(uri string, props map[string]string) (driver, dialect string, err error) {
	driver, dialect = props["sql.driver"], props["sql.dialect"]
	switch {
	case driver != "" && dialect != "":
		return driver, dialect, nil
	case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
		return cmp.Or(driver, "pgx"), cmp.Or(dialect, "postgres"), nil
	case strings.HasPrefix(uri, "file:"), strings.HasSuffix(uri, ".db"), strings.HasSuffix(uri, ".sqlite"):
		return cmp.Or(driver, "sqlite"), cmp.Or(dialect, "sqlite"), nil
	}
	return "", "", fmt.Errorf("catalog sql: cannot tell the database of %q; give --catalog-prop sql.driver=… and sql.dialect=… "+
		"(pgx/postgres or sqlite/sqlite)", uri)
}

// The bounds of a table name, checked before any catalog or filesystem sees
// it: a name part becomes a directory of the local catalog, a key of the
// others.
const (
	// MaxNameBytes bounds each part of NS.NAME, as filesystems bound a
	// file name.
	MaxNameBytes = 255
	// MaxNameParts bounds the levels of NS.NAME.
	MaxNameParts = 16
)

// ParseIdentifier splits NS.NAME (namespaces may have several levels) and
// checks each part: 1 to MaxNameBytes bytes of UTF-8, no control character,
// no / or \ (which a filesystem catalog would take as directories). A name
// that fails is ErrBadRequest, quoted shortened.
func ParseIdentifier(s string) (table.Identifier, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: table %s: %s", ErrBadRequest, Quote(s), why)
	}
	if len(s) > MaxNameParts*(MaxNameBytes+1) {
		return nil, bad(fmt.Sprintf("%d bytes is longer than any table name", len(s)))
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return nil, bad("want NAMESPACE.NAME")
	}
	if len(parts) > MaxNameParts {
		return nil, bad(fmt.Sprintf("more than %d levels", MaxNameParts))
	}
	for _, p := range parts {
		switch {
		case len(p) > MaxNameBytes:
			return nil, bad(fmt.Sprintf("a part of %d bytes, more than the %d allowed", len(p), MaxNameBytes))
		case !utf8.ValidString(p):
			return nil, bad("not UTF-8")
		case strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || r == '/' || r == '\\' }):
			return nil, bad("a control character, / or \\ is not part of a name")
		}
	}
	return parts, nil
}

// Quote is %q of a client's value for an error, shortened to its first 64
// bytes: an error is logged and answered, and a value can be a megabyte.
func Quote(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// Short is a name of client input as it stands when it is short, or
// quoted and cut (Quote) when it is long, for messages.
func Short(s string) string {
	if len(s) <= 64 && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return Quote(s)
}

// tableLoader loads tables by identifier; iceberg-go's catalogs and the
// static catalog implement it.
type tableLoader interface {
	LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error)
}

// staticCatalog serves a fixed map of tables, each read from its metadata
// file through the sidecar's FileIO.
type staticCatalog struct {
	tables map[string]string
	fsF    table.FSysF
}

func (s staticCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	loc, ok := s.tables[strings.Join(ident, ".")]
	if !ok {
		return nil, catalog.ErrNoSuchTable
	}
	return table.NewFromLocation(ctx, ident, loc, s.fsF, nil)
}

// catalogConn connects to the catalog on first use and again after a failure,
// so a catalog that is down at start-up is not fatal: planning answers
// ErrUnavailable until it is back. A failure is remembered for retryAfter so
// that retrying clients do not turn into a connection storm.
type catalogConn struct {
	cfg        CatalogConfig
	fsF        table.FSysF
	retryAfter time.Duration

	mu       sync.Mutex
	loader   tableLoader
	lastErr  error
	failedAt time.Time
	// unhealthy is the last ErrUnavailable or ErrDenied of a table load,
	// cleared by the next load that gets an answer.
	unhealthy error
}

// observe records whether a table load got an answer from the catalog; any
// error but ErrUnavailable and ErrDenied (a missing table, say) is an answer.
func (c *catalogConn) observe(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrDenied) {
		c.unhealthy = err
	} else {
		c.unhealthy = nil
	}
}

// health is the last table load's verdict on the catalog.
func (c *catalogConn) health() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unhealthy
}

func (c *catalogConn) get(ctx context.Context) (tableLoader, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loader != nil {
		return c.loader, nil
	}
	if c.lastErr != nil && time.Since(c.failedAt) < c.retryAfter {
		return nil, c.lastErr
	}
	l, err := c.connect(ctx)
	if err != nil {
		kind := ErrUnavailable
		if deniedByCatalog(err) {
			kind = ErrDenied
		}
		c.lastErr = redact(fmt.Errorf("%w: connect to %s catalog %q: %w", kind, c.cfg.Type, c.cfg.Name, err), c.cfg.secrets())
		c.failedAt = time.Now()
		return nil, c.lastErr
	}
	c.loader, c.lastErr = l, nil
	return l, nil
}

func (c *catalogConn) connect(ctx context.Context) (tableLoader, error) {
	if c.cfg.Type == "static" {
		return staticCatalog{tables: c.cfg.Tables, fsF: c.fsF}, nil
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
	return catalog.Load(ctx, cmp.Or(c.cfg.IcebergName, c.cfg.Name), props)
}

// classifyLoadError maps a catalog's table-load error onto the sentinels;
// the message names the catalog, so that an operator with several knows
// which one failed.
func classifyLoadError(catalogName string, ident table.Identifier, err error) error {
	name := strings.Join(ident, ".")
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable), errors.Is(err, catalog.ErrNoSuchNamespace):
		return fmt.Errorf("%w: %s in catalog %q", ErrTableNotFound, name, catalogName)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s: metadata file missing: %w", ErrTableNotFound, name, err)
	}
	return storageError(catalogName, "load table "+name, err)
}

// storageError classifies an error of the catalog or its storage: refused
// credentials are ErrDenied, a network failure ErrUnavailable.
func storageError(catalogName, doing string, err error) error {
	switch {
	case deniedByCatalog(err) || storage.IsDenied(err):
		return fmt.Errorf("%w: %s in catalog %q: %w", ErrDenied, doing, catalogName, err)
	case storage.IsTransient(err):
		return fmt.Errorf("%w: %s in catalog %q: %w", ErrUnavailable, doing, catalogName, err)
	}
	return fmt.Errorf("%s in catalog %q: %w", doing, catalogName, err)
}

// oauthRefusals are the error codes of an OAuth2 token endpoint that
// refused the client (RFC 6749 5.2). iceberg-go reports a token request that
// never reached the endpoint as an OAuth error too, with the network error
// as text only; these codes tell the two apart.
var oauthRefusals = []string{"invalid_client", "invalid_grant", "unauthorized_client", "access_denied", "invalid_scope",
	"invalid_request", "unsupported_grant_type"}

// deniedByCatalog reports a catalog that refused the credentials: a REST
// catalog's 401, 403 or OAuth refusal, a database's authentication failure
// (SQLSTATE class 28).
func deniedByCatalog(err error) bool {
	if storage.IsNetwork(err) {
		return false
	}
	if errors.Is(err, rest.ErrOAuthError) {
		msg := err.Error()
		return slices.ContainsFunc(oauthRefusals, func(code string) bool { return strings.Contains(msg, code) })
	}
	// A database refusing the credentials: SQLSTATE class 28 (invalid
	// authorization), which pgx's PgError reports; matched by its method,
	// so that planning does not link the driver.
	var sqlErr interface{ SQLState() string }
	return errors.Is(err, rest.ErrUnauthorized) || errors.Is(err, rest.ErrForbidden) ||
		errors.Is(err, rest.ErrAuthorizationExpired) || (errors.As(err, &sqlErr) && strings.HasPrefix(sqlErr.SQLState(), "28"))
}
