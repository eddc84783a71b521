package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/druidiceberg/sidecar/token"
)

// Types are the catalog types the sidecar accepts. All but static are
// iceberg-go's own catalog packages (local is its hadoop catalog); static is
// a fixed map of table name to metadata file.
var Types = []string{"local", "rest", "glue", "hive", "sql", "static"}

// Config says which catalog to connect to. It is fixed at start-up: no
// request can point the sidecar at another catalog.
type Config struct {
	Type string
	// Name is the sidecar's name for the catalog: requests pick it with
	// ?catalog= and tokens carry it.
	Name string
	// IcebergName is the name handed to iceberg-go, when it differs from
	// Name. The SQL (JDBC) catalog keys its rows by it: it must be the name
	// the writers use (Spark's spark.sql.catalog.<name>).
	IcebergName string
	// URI and Warehouse are handed to iceberg-go as the uri and warehouse
	// properties when they are set; a local catalog needs a warehouse.
	URI       string
	Warehouse string
	// Props go to iceberg-go's catalog, and to the FileIO that reads the
	// tables of a catalog that vends no storage credentials of its own.
	Props map[string]string
	// Tables maps NS.NAME to a metadata file location (static catalog only).
	Tables map[string]string
	// LocationMap rewrites path prefixes when a file is opened, whichever
	// FileIO reads the table.
	LocationMap []Mapping
	// DataRoots are locations beyond the warehouse whose files the tables
	// may name: where a table made by snapshotting another, or one that
	// imported files, keeps them. Every file a table opens is under one of
	// the operator's roots (see operatorRoots and tableIO.confine).
	DataRoots []string
	// StoragePrefixes are the object-store buckets (s3://bucket) and
	// prefixes (s3://bucket/lake) whose files the tables may name, besides
	// the warehouse, the data roots and the location maps' targets: where a
	// REST catalog whose warehouse is a name keeps its tables.
	StoragePrefixes []string
	// PrivateFiles are the process's own files (the token key, the config
	// file, credential files) that no table may open, whatever the roots
	// say.
	PrivateFiles []string
	// Allow lists the namespaces and tables the catalog serves (see
	// ParseAllow); empty serves all.
	Allow []string
	// ScanPlanning is where the catalog's scans are planned (auto, local,
	// remote; empty is auto): see token.ScanPlanning and scanplanning.go.
	ScanPlanning string
	// Secrets are values that must never reach a log line or a client (the
	// config file's env and file references); they are scrubbed from every
	// catalog and storage error, as are secret-looking properties and the
	// URI's password.
	Secrets []string
}

// unsupportedProps are the properties that ask for what the sidecar does
// not do, with what to say about each. iceberg-go refuses some of them
// deep inside a table load, in words no operator would connect with the
// setting.
var unsupportedProps = []struct{ key, why string }{
	{"s3.remote-signing-enabled", "remote signing of S3 requests (s3.remote-signing-enabled, s3.signer.uri) is not supported: " +
		"give the catalog vended credentials or static S3 keys instead"},
	{"s3.signer.uri", "remote signing of S3 requests (s3.remote-signing-enabled, s3.signer.uri) is not supported: " +
		"give the catalog vended credentials or static S3 keys instead"},
}

// refusedProp reports the first property of props that asks for an
// unsupported feature (see unsupportedProps), with why; a property set to
// "false" asks for nothing.
func refusedProp(props map[string]string) (key, why string, ok bool) {
	for _, u := range unsupportedProps {
		if v, set := props[u.key]; set && v != "" && !strings.EqualFold(v, "false") {
			return u.key, u.why, true
		}
	}
	return "", "", false
}

// Validate checks the configuration without contacting anything.
func (c Config) Validate() error {
	if !slices.Contains(Types, c.Type) {
		return fmt.Errorf("catalog %q: want one of %s", c.Type, strings.Join(Types, ", "))
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
			if _, err := token.ParseIdentifier(name); err != nil {
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
	if key, why, ok := refusedProp(c.Props); ok {
		return fmt.Errorf("catalog %s: property %s: %s", cmp.Or(c.Name, c.Type), key, why)
	}
	mode, err := token.ParseScanPlanning(c.ScanPlanning)
	if err != nil {
		return fmt.Errorf("catalog %s: %w", cmp.Or(c.Name, c.Type), err)
	}
	if mode == token.ScanPlanningRemote && c.Type != "rest" {
		return fmt.Errorf("catalog %s: scan planning remote needs a rest catalog: only the server of a REST catalog "+
			"plans scans (a %s catalog is planned by the sidecar: scan planning local or auto)", cmp.Or(c.Name, c.Type), c.Type)
	}
	if _, err := parseAllow(c.Allow); err != nil {
		return fmt.Errorf("catalog %s: %w", cmp.Or(c.Name, c.Type), err)
	}
	for _, d := range c.DataRoots {
		if p, err := operatorPlace(d); err != nil || p.path == "/" {
			return fmt.Errorf("catalog %s: data root %q: want a folder or a bucket's prefix, not the root of a file system or bucket",
				cmp.Or(c.Name, c.Type), d)
		}
	}
	for _, s := range c.StoragePrefixes {
		if p, err := parsePlace(s); err != nil || p.scheme == "file" || p.host == "" {
			return fmt.Errorf("catalog %s: storage prefix %q: want an object store's bucket or prefix, such as s3://bucket or "+
				"s3://bucket/lake (a local folder is a data root)", cmp.Or(c.Name, c.Type), s)
		}
	}
	if c.Type == "local" {
		if p, err := operatorPlace(c.Warehouse); err == nil && p.path == "/" {
			return fmt.Errorf("catalog %s: warehouse %q: the root of a file system would make every file the process can read a table's",
				cmp.Or(c.Name, c.Type), c.Warehouse)
		}
	}
	for _, m := range c.LocationMap {
		if p, err := parsePlace(m.To); err != nil || p.scheme == "file" && p.path == "/" {
			return fmt.Errorf("catalog %s: location map target %q: want a folder, a bucket or a bucket's prefix, "+
				"not the root of a file system", cmp.Or(c.Name, c.Type), m.To)
		}
	}
	return nil
}

// storagePropPrefixes and storageProps are the property keys iceberg-go's
// FileIOs read (io/config.go, io/gocloud/*): endpoints, regions,
// credentials, signers, key files and the expiry of vended credentials.
// They may come from the operator or the catalog's config and
// storage-credentials, never from a table's properties (see
// tableStorageProp).
var (
	storagePropPrefixes = []string{"s3.", "gcs.", "adls.", "client."}
	storageProps        = []string{"token", "expiration-time"}
)

// isStorageProp reports whether a property of that key configures a FileIO.
func isStorageProp(key string) bool {
	lk := strings.ToLower(key)
	return slices.Contains(storageProps, lk) || slices.ContainsFunc(storagePropPrefixes, func(p string) bool { return strings.HasPrefix(lk, p) })
}

// tableStorageProp reports the first (in key order) of a table's
// properties that would configure its FileIO.
func tableStorageProp(props map[string]string) (string, bool) {
	var found []string
	for k := range props {
		if isStorageProp(k) {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return slices.Min(found), true
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

// secretKeys are the substrings of a property key whose value is a secret.
var secretKeys = []string{"secret", "password", "credential", "token", "session", "access-key", "sas"}

// isSecretKey reports whether a property of that key holds a secret.
func isSecretKey(key string) bool {
	lk := strings.ToLower(key)
	return slices.ContainsFunc(secretKeys, func(s string) bool { return strings.Contains(lk, s) })
}

// secrets lists the values that redact scrubs.
func (c Config) secrets() []string {
	out := slices.Clone(c.Secrets)
	for k, v := range c.Props {
		if v != "" && isSecretKey(k) {
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
