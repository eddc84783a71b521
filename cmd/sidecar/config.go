package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// config is the one configuration of `sidecar serve`, validated before
// anything starts: one struct per component, each registering its own
// flags (register). Flags come first; SIDECAR_<NAME> environment variables
// fill what the flags leave unset; the catalogs come from the catalog
// flags or the --config file.
type config struct {
	listenConfig
	authConfig
	tokenConfig
	catalogsConfig
	storageConfig
	limitsConfig
	splitsConfig
	readerConfig
	logConfig
	// clock, when set, is the clock the catalogs age their caches and
	// connection retries by (catalog.WithClock); not a flag: tests move
	// it on instead of waiting.
	clock func() time.Time
}

// listenConfig is the HTTP servers': the listeners, their connections and
// the shutdown.
type listenConfig struct {
	Addr      string
	PublicURL string
	// HealthAddr, when set, is the address of a listener of its own for
	// /healthz, /readyz and /metrics.
	HealthAddr string
	// MaxConnections caps the client connections open on Addr; 0 is three
	// quarters of the open-file limit (connectionCap).
	MaxConnections int
	ShutdownGrace  time.Duration
	// ShutdownDelay is how long /readyz answers 503 on SIGTERM before the
	// listener closes.
	ShutdownDelay time.Duration
	// WriteStallTimeout is how long one write of an answer may move no
	// byte before the connection is cut; 0 never cuts.
	WriteStallTimeout time.Duration
	// readHeaderTimeout, bodyTimeout and idleTimeout are the server's
	// slow-client bounds: a connection that has not sent a whole request
	// header within readHeaderTimeout, or its body within bodyTimeout after
	// that (408), or sits idle between requests for idleTimeout, is closed.
	// They are not flags (the defaults suit every deployment seen so far);
	// tests shorten them.
	readHeaderTimeout time.Duration
	bodyTimeout       time.Duration
	idleTimeout       time.Duration
	// sendBuffer, when not 0, is the socket send buffer (SO_SNDBUF) of the
	// connections the main listener accepts; 0 leaves the kernel's, which
	// grows to megabytes. Not a flag: tests shrink it so that a row stream
	// whose client stops reading stalls after a few hundred KiB instead of
	// after megabytes of rows encoded into the buffer.
	sendBuffer int
}

func (c *listenConfig) register(fs *flag.FlagSet) {
	c.readHeaderTimeout, c.bodyTimeout, c.idleTimeout = defaultReadHeaderTimeout, defaultBodyTimeout, defaultIdleTimeout
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&c.HealthAddr, "health-addr", "", "address of a listener of its own for /healthz, /readyz and /metrics, which answers while --addr is at --max-connections (default: none; those routes are on --addr too)")
	fs.IntVar(&c.MaxConnections, "max-connections", 0, "client connections open at once on --addr: near it the longest idle are closed, at it new ones refused with 503 (0: three quarters of the process's open-file limit)")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL of the URIs handed to Druid (default: the base the request came in on; required with Basic auth)")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", 30*time.Second, "how long running streams may finish after SIGTERM (after --shutdown-delay)")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", 0, "how long /readyz answers 503 after SIGTERM before the listener stops accepting, for load balancers that poll it; a second SIGTERM ends it (0: stop accepting at once)")
	fs.DurationVar(&c.WriteStallTimeout, "write-stall-timeout", defaultWriteStallTimeout, "how long a write of an answer may move no byte (a client that stopped reading) before the connection is cut; every write that moves bytes extends it (0: never cut)")
}

// authConfig is TLS and HTTP Basic auth.
type authConfig struct {
	TLSCert string
	TLSKey  string
	// BasicAuthFile holds username:password lines; credentials never come
	// from a flag value.
	BasicAuthFile string
	BasicAuth     []handlers.Credential
	AuthMetrics   bool
	// DruidPasswordEnv is the environment variable Druid's tasks read the
	// password from, named in the generated inputSource.
	DruidPasswordEnv string
}

func (c *authConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate file: serve HTTPS (with --tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.StringVar(&c.BasicAuthFile, "basic-auth-file", "", "file of username:password lines; when set (or SIDECAR_BASIC_AUTH_USERNAME and _PASSWORD are), HTTP Basic auth is required")
	fs.BoolVar(&c.AuthMetrics, "auth-metrics", false, "require Basic auth on /metrics too")
	fs.StringVar(&c.DruidPasswordEnv, "druid-password-env", "SIDECAR_HTTP_PASSWORD", "environment variable Druid's tasks read the password from; named in the generated inputSource")
}

// tokenConfig is the split tokens' key and lifetime.
type tokenConfig struct {
	TokenKeyFile string
	TokenTTL     time.Duration
}

func (c *tokenConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.TokenKeyFile, "token-key-file", "./sidecar-token.key", "HMAC key file for split tokens; created with mode 0600 when missing")
	fs.DurationVar(&c.TokenTTL, "token-ttl", 0, "tokens expire this long after planning (410 after); 0 never")
}

// catalogsConfig is the catalogs served: the one the catalog flags
// describe, or those of the --config file. A catalog option belongs in
// catalog.Config, given by a catalog flag here (and added to catalogFlags
// and catalogConfig) and by a key of the config file (catalogYAML and its
// entry).
type catalogsConfig struct {
	Catalog      string
	CatalogName  string
	Warehouse    string
	CatalogURI   string
	CatalogProps map[string]string
	Tables       map[string]string
	LocationMap  []catalog.Mapping
	// AllowTables, DataRoots and StoragePrefixes are the catalog's
	// allowlist, data roots and storage prefixes (catalog.Config's Allow,
	// DataRoots and StoragePrefixes).
	AllowTables     []string
	DataRoots       []string
	StoragePrefixes []string
	// ScanPlanning is where the catalog's scans are planned (auto, local,
	// remote): catalog.Config's ScanPlanning.
	ScanPlanning string
	// ConfigFile, when set, holds the catalogs instead of the catalog flags.
	ConfigFile string
	// Catalogs are the catalogs served: the one the catalog flags describe,
	// or those of the config file. DefaultCatalog names the one requests
	// without ?catalog= plan against.
	Catalogs       []catalog.Config
	DefaultCatalog string
	Demo           bool
	// startupPing is how long start-up waits for each catalog before it
	// listens anyway; not a flag.
	startupPing time.Duration

	// The repeatable flags, as given; parse turns them into the fields
	// above.
	props, tables, locs, allow, dataRoots, storagePrefixes multiFlag
}

func (c *catalogsConfig) register(fs *flag.FlagSet) {
	c.startupPing = defaultStartupPing
	fs.StringVar(&c.ConfigFile, "config", "", "YAML file of named catalogs (see docs/catalogs.md); replaces the catalog flags")
	fs.StringVar(&c.Catalog, "catalog", "local", "catalog type: "+strings.Join(catalog.Types, ", "))
	fs.StringVar(&c.CatalogName, "catalog-name", "sidecar", "catalog name handed to iceberg-go")
	fs.StringVar(&c.Warehouse, "warehouse", "", "warehouse location, handed to the catalog as its warehouse property (default: ./warehouse for the local catalog, none for the others)")
	fs.StringVar(&c.CatalogURI, "catalog-uri", "", "catalog URI (rest, hive, sql), handed to the catalog as its uri property")
	fs.Var(&c.props, "catalog-prop", "KEY=VALUE handed to iceberg-go's catalog and FileIO (repeatable)")
	fs.Var(&c.tables, "table", "NS.NAME=METADATA_LOCATION for the static catalog (repeatable)")
	fs.Var(&c.locs, "location-map", "FROM=TO path-prefix rewrite applied when opening files (repeatable)")
	fs.Var(&c.allow, "allow-table", "NS or NS.NAME: serve only these namespaces and tables, planning and reading (repeatable; default: every table the catalog holds)")
	fs.Var(&c.dataRoots, "data-root", "location prefix whose files the tables may name besides their own locations and the warehouse, such as where a snapshot or imported table keeps them (repeatable)")
	fs.Var(&c.storagePrefixes, "allow-storage-prefix", "object-store bucket or prefix (s3://bucket, s3://bucket/lake) whose files the tables may name besides the warehouse, the data roots and the location map targets; a table's own metadata never adds one (repeatable; default: none, so a REST catalog whose warehouse is a name needs it)")
	fs.StringVar(&c.ScanPlanning, "scan-planning", string(token.ScanPlanningAuto), "where scans are planned: auto (on the REST catalog's server when it advertises the scan-planning endpoints, else by the sidecar), local (the sidecar reads the manifests) or remote (always the REST catalog's server; one that does not plan stops the start)")
	fs.BoolVar(&c.Demo, "demo", false, "write the demo tables into the local warehouse if they are absent")
}

// storageConfig is the reads of the tables' files.
type storageConfig struct {
	// StorageStallTimeout bounds each read of a table's file: one that
	// gets nothing from the store for this long fails; 0 waits for ever.
	StorageStallTimeout time.Duration
}

func (c *storageConfig) register(fs *flag.FlagSet) {
	fs.DurationVar(&c.StorageStallTimeout, "storage-stall-timeout", 2*time.Minute, "a read of a table's file that gets nothing from the store for this long fails: a stream then aborts so that Druid retries instead of waiting for ever (0: wait for ever)")
}

// limitsConfig is the bounds on the requests served at once and on memory.
type limitsConfig struct {
	MaxStreams  int
	MaxPlans    int
	PlanTimeout time.Duration
	// MaxDeleteMemory bounds the memory one decoded delete file may hold;
	// 0 is the memory rule's (memoryRule).
	MaxDeleteMemory int64
	// memoryLimit is the process's Go memory limit (memory.SetLimit),
	// which sizes the memory budget; set by run, not a flag.
	memoryLimit memory.Limit
}

func (c *limitsConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.MaxStreams, "max-streams", 64, "row and file streams served at once; past it 503 with Retry-After (0: no bound)")
	fs.IntVar(&c.MaxPlans, "max-plans", 16, "planning requests served at once; past it 503 with Retry-After (0: no bound)")
	fs.DurationVar(&c.PlanTimeout, "plan-timeout", 2*time.Minute, "deadline of one planning request, catalog and storage calls included; past it 503 with Retry-After (0: none but the client's)")
	fs.Var(bytesFlag{&c.MaxDeleteMemory}, "max-delete-memory", "most memory one decoded delete file may hold; a split past it is a 422 (0: half the memory budget, or 1GiB without a memory limit; raise it for upsert tables with large equality-delete sets)")
}

// splitsConfig is the planner's: how the row path's splits are cut.
type splitsConfig struct {
	MaxSplits int
	// TargetSplitSize is the size of the row path's splits: smaller data
	// files are packed up to it, larger ones cut by row groups; 0 neither
	// packs nor cuts. MaxSplitFiles bounds the files one split packs.
	TargetSplitSize byteSize
	MaxSplitFiles   int
}

func (c *splitsConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.MaxSplits, "max-splits", splits.DefaultMaxSplits, "most splits (URIs) one plan hands out: the row path packs larger splits to stay within it; mode=files past it is a 422 (0: no bound)")
	c.TargetSplitSize = splits.DefaultTargetSplitSize
	fs.Var(&c.TargetSplitSize, "target-split-size", "size of the row path's splits: smaller data files are packed into one split up to it, larger ones cut by row groups into splits of about it (1GiB, 256MiB or bytes; 0: one split per data file)")
	fs.IntVar(&c.MaxSplitFiles, "max-split-files", splits.DefaultMaxSplitFiles, "most data files one split of the row path packs")
}

// readerConfig is the row streams' reader and its delete cache.
type readerConfig struct {
	BatchRows int
	// DeleteCacheSize bounds, in bytes, the decoded delete files kept for
	// every catalog's streams; 0 keeps none.
	DeleteCacheSize int64
}

func (c *readerConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.BatchRows, "batch-rows", 0, "rows per flushed batch of a row stream (0: the reader's default)")
	c.DeleteCacheSize = defaultDeleteCacheSize
	fs.Var(bytesFlag{&c.DeleteCacheSize}, "delete-cache-size", "memory for decoded delete files shared by all streams, such as 256MiB or 1GiB, raised to --max-delete-memory (0: decode them for every split)")
}

// logConfig is the log's format, the same for serve and sync.
type logConfig struct {
	LogFormat string
}

func (c *logConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
}

// defaultWriteStallTimeout is the default of --write-stall-timeout: minutes,
// since Druid stops reading a stream while it persists what it read.
const defaultWriteStallTimeout = 5 * time.Minute

// defaultDeleteCacheSize is the default of --delete-cache-size.
const defaultDeleteCacheSize = 256 << 20

// byteSize is a flag of a number of bytes: plain (1048576) or with a unit,
// binary (KiB, MiB, GiB, TiB) or decimal (kB, MB, GB, TB), in any case,
// such as 256MiB.
type byteSize int64

// byteUnits are the units of byteSize, largest first within each kind, and
// each before the units it ends with (KiB before B).
var byteUnits = []struct {
	suffix string
	n      int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"B", 1},
}

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range byteUnits[:4] {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(v string) error {
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range byteUnits {
		if i := len(num) - len(u.suffix); i >= 0 && strings.EqualFold(num[i:], u.suffix) {
			num, mult = strings.TrimSpace(num[:i]), u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return errors.New("want a whole number of bytes, optionally with a unit: 256MiB, 1GiB, 500MB")
	}
	*b = byteSize(n * mult)
	return nil
}

// bytesFlag is a byteSize flag that sets an int64.
type bytesFlag struct{ p *int64 }

func (b bytesFlag) String() string {
	if b.p == nil {
		return "0"
	}
	return (*byteSize)(b.p).String()
}

func (b bytesFlag) Set(v string) error { return (*byteSize)(b.p).Set(v) }

// The defaults of config.readHeaderTimeout, bodyTimeout, idleTimeout and
// startupPing.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultBodyTimeout       = 10 * time.Second
	defaultIdleTimeout       = 30 * time.Second
	defaultStartupPing       = 10 * time.Second
)

// multiFlag is a repeatable KEY=VALUE flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseFlags parses args into fs, then fills every flag the arguments left
// unset from SIDECAR_<NAME> (upper case, '-' as '_'); a repeatable flag
// takes a comma-separated list from the environment. It returns the flags
// set either way. -h prints usage and the flags to help.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, help io.Writer, usage string) (map[string]bool, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(help, usage+"\n\nflags (each also settable as SIDECAR_<NAME>):")
			fs.SetOutput(help)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		name := "SIDECAR_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v := getenv(name)
		if v == "" {
			return
		}
		vals := []string{v}
		if _, ok := f.Value.(*multiFlag); ok {
			vals = strings.Split(v, ",")
		}
		for _, one := range vals {
			if err := f.Value.Set(strings.TrimSpace(one)); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("%s: %w", name, err))
			}
		}
		set[f.Name] = true
	})
	return set, envErr
}

// parseServe parses the arguments of `sidecar serve`.
//
// A bad flag is one error, not a usage dump; -h prints the flags to help.
func parseServe(args []string, getenv func(string) string, help io.Writer) (config, error) {
	fs := flag.NewFlagSet("sidecar serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	c.listenConfig.register(fs)
	c.authConfig.register(fs)
	c.tokenConfig.register(fs)
	c.catalogsConfig.register(fs)
	c.storageConfig.register(fs)
	c.limitsConfig.register(fs)
	c.splitsConfig.register(fs)
	c.readerConfig.register(fs)
	c.logConfig.register(fs)
	set, err := parseFlags(fs, args, getenv, help, "usage: sidecar serve [flags]")
	if err != nil {
		return c, err
	}
	if c.BasicAuth, err = serveCredentials(c.BasicAuthFile, getenv); err != nil {
		return c, err
	}
	if err := c.catalogsConfig.parse(set, getenv); err != nil {
		return c, err
	}
	return c, c.validate()
}

// parse turns the catalog flags into the catalogs served, or reads them
// from the --config file; set names the flags given.
func (c *catalogsConfig) parse(set map[string]bool, getenv func(string) string) error {
	var err error
	if c.CatalogProps, err = keyValues("--catalog-prop", c.props); err != nil {
		return err
	}
	if c.Tables, err = keyValues("--table", c.tables); err != nil {
		return err
	}
	c.AllowTables, c.DataRoots, c.StoragePrefixes = c.allow, c.dataRoots, c.storagePrefixes
	for _, l := range c.locs {
		m, err := catalog.ParseMapping(l)
		if err != nil {
			return fmt.Errorf("--location-map: %w", err)
		}
		c.LocationMap = append(c.LocationMap, m)
	}
	if c.ConfigFile == "" {
		cat, err := c.catalogConfig(set)
		if err != nil {
			return err
		}
		c.Catalogs = []catalog.Config{cat}
		return nil
	}
	for _, name := range catalogFlags {
		if set[name] {
			return fmt.Errorf("--%s and --config exclude each other: the config file holds the catalogs", name)
		}
	}
	c.Catalogs, c.DefaultCatalog, err = loadConfigFile(c.ConfigFile, getenv)
	return err
}

// catalogFlags describe the one catalog of a sidecar without --config.
var catalogFlags = []string{"catalog", "catalog-name", "warehouse", "catalog-uri", "catalog-prop", "table", "location-map",
	"allow-table", "data-root", "allow-storage-prefix", "scan-planning"}

func keyValues(flagName string, vals []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flagName, v)
		}
		m[k] = val
	}
	return m, nil
}

func (c config) validate() error {
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--public-url %q: want an http(s) URL such as http://sidecar:8080", c.PublicURL)
		}
	}
	if len(c.BasicAuth) > 0 && c.PublicURL == "" {
		// The URIs handed out tell Druid where to send the credentials:
		// never a host a request names in its Host header.
		return errors.New("Basic auth needs --public-url: Druid sends the credentials to the URIs' host, " +
			"which must be one you configured, not the one a request names")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if c.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", c.LogFormat)
	}
	if c.TokenTTL < 0 {
		return errors.New("--token-ttl must not be negative")
	}
	if c.ShutdownGrace < 0 {
		return errors.New("--shutdown-grace must not be negative")
	}
	if c.ShutdownDelay < 0 {
		return errors.New("--shutdown-delay must not be negative")
	}
	if c.PlanTimeout < 0 {
		return errors.New("--plan-timeout must not be negative")
	}
	if c.StorageStallTimeout < 0 {
		return errors.New("--storage-stall-timeout must not be negative")
	}
	if c.MaxConnections < 0 {
		return errors.New("--max-connections must not be negative")
	}
	if c.WriteStallTimeout < 0 {
		return errors.New("--write-stall-timeout must not be negative")
	}
	if c.MaxStreams < 0 || c.MaxPlans < 0 || c.MaxSplits < 0 {
		return errors.New("--max-streams, --max-plans and --max-splits must not be negative")
	}
	if c.MaxSplitFiles < 1 {
		return errors.New("--max-split-files must be at least 1")
	}
	if c.BatchRows < 0 {
		return errors.New("--batch-rows must not be negative")
	}
	if c.Demo && (c.Catalog != "local" || c.ConfigFile != "") {
		return errors.New("--demo needs --catalog local (and no --config): the demo tables are written into the local warehouse")
	}
	if c.TokenKeyFile == "" {
		return errors.New("--token-key-file must not be empty")
	}
	for _, cat := range c.Catalogs {
		if err := cat.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// catalogConfig is the catalog the catalog flags describe. A flag that
// sets a catalog property (--catalog-uri: uri, --warehouse: warehouse,
// --catalog: type) and a --catalog-prop of that property are settled by
// settle; set names the flags given.
func (c *catalogsConfig) catalogConfig(set map[string]bool) (catalog.Config, error) {
	cfg := catalog.Config{Name: c.CatalogName, Props: c.CatalogProps, Tables: c.Tables, LocationMap: c.LocationMap,
		Allow: c.AllowTables, DataRoots: c.DataRoots, StoragePrefixes: c.StoragePrefixes, ScanPlanning: c.ScanPlanning}
	var err error
	if cfg.Type, err = settle("--catalog", c.Catalog, set["catalog"], "--catalog-prop ", c.CatalogProps, "type"); err != nil {
		return cfg, err
	}
	if cfg.URI, err = settle("--catalog-uri", c.CatalogURI, set["catalog-uri"], "--catalog-prop ", c.CatalogProps, "uri"); err != nil {
		return cfg, err
	}
	if cfg.Warehouse, err = settle("--warehouse", c.Warehouse, set["warehouse"], "--catalog-prop ", c.CatalogProps, "warehouse"); err != nil {
		return cfg, err
	}
	if cfg.Warehouse == "" && cfg.Type == "local" {
		cfg.Warehouse = defaultWarehouse
	}
	c.Catalog, c.CatalogURI, c.Warehouse = cfg.Type, cfg.URI, cfg.Warehouse
	return cfg, nil
}

// defaultWarehouse is the local catalog's warehouse when none is given.
const defaultWarehouse = "./warehouse"

// settle decides a catalog setting that a flag (or a config file's field)
// and a catalog property of the same meaning can both give: the property
// when only it is given, the flag's value (its default when not given)
// otherwise; both given with different values is an error that names
// both, since neither can be the one meant.
func settle(flag, flagValue string, flagGiven bool, propsName string, props map[string]string, key string) (string, error) {
	prop, propGiven := props[key]
	switch {
	case propGiven && flagGiven && prop != flagValue:
		return "", fmt.Errorf("%s %q and %s%s=%q disagree: give one of them", flag, flagValue, propsName, key, prop)
	case propGiven:
		return prop, nil
	}
	return flagValue, nil
}

// privateFiles are the process's own files that no table may open,
// whatever the catalogs' roots say: the token key, the config file, the
// Basic auth file and the TLS certificate and key (catalog.WithPrivateFiles;
// the files the config file's values are read from are each catalog's
// PrivateFiles).
func (c config) privateFiles() []string {
	var out []string
	for _, f := range []string{c.TokenKeyFile, c.ConfigFile, c.BasicAuthFile, c.TLSCert, c.TLSKey} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
