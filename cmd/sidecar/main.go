// Command sidecar serves the live rows of Iceberg tables to Apache Druid's
// http input source, with Iceberg's delete files applied.
//
//	sidecar serve --demo                      # local warehouse with demo tables
//	sidecar serve --catalog rest --catalog-uri http://catalog:8181 --catalog-prop warehouse=s3://lake
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: sidecar <command> [flags]

commands:
  serve     serve splits and rows over HTTP (sidecar serve -h for flags)
  sync      keep Druid datasources in step with Iceberg tables (sidecar sync -h for flags)
  version   print the version
`

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// run is main without the exit: it returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		cfg, err := parseServe(args[1:], getenv, stdout)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "sidecar serve: %v\n", err)
			return 2
		}
		if cfg.memoryLimit, err = memory.SetLimit(getenv, os.DirFS("/")); err != nil {
			fmt.Fprintf(stderr, "sidecar serve: %v\n", err)
			return 1
		}
		if err := serve(ctx, cfg, stderr, nil); err != nil {
			fmt.Fprintf(stderr, "sidecar serve: %v\n", err)
			return 1
		}
		return 0
	case "sync":
		cfg, err := parseSync(args[1:], getenv, stdout)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "sidecar sync: %v\n", err)
			return 2
		}
		if err := runSync(ctx, cfg, stderr, stdout); err != nil {
			fmt.Fprintf(stderr, "sidecar sync: %v\n", err)
			return 1
		}
		return 0
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "sidecar: unknown command %q\n%s", args[0], usage)
	return 2
}

// serve runs the HTTP servers and the catalogs they serve until ctx is
// cancelled, then shuts down gracefully (runServers says in which order).
// ready, when non-nil, receives the bound address once the server
// listens (tests use it with --addr 127.0.0.1:0).
func serve(ctx context.Context, cfg config, logOut io.Writer, ready chan<- string) error {
	log := newLogger(cfg.LogFormat, logOut)

	keys, err := token.LoadOrCreateKey(cfg.TokenKeyFile)
	if err != nil {
		return err
	}
	if st, err := os.Stat(cfg.TokenKeyFile); err == nil && st.Mode().Perm()&0o077 != 0 {
		// Whoever reads the key signs tokens for any file the tables'
		// roots hold.
		log.Warn("token key file is readable by group or others; make it 0400 or 0600",
			slog.String("file", cfg.TokenKeyFile), slog.String("mode", st.Mode().Perm().String()))
	}
	signer, err := token.NewSigner(keys...)
	if err != nil {
		return fmt.Errorf("token key file %s: %w", cfg.TokenKeyFile, err)
	}
	if cfg.TokenTTL > 0 {
		signer = signer.WithTTL(cfg.TokenTTL, time.Now)
	}
	if cfg.Demo {
		if err := writeDemo(ctx, cfg); err != nil {
			return err
		}
		log.Info("demo tables ready", slog.String("warehouse", cfg.Warehouse))
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	var readerOpts []reader.Option
	if cfg.BatchRows > 0 {
		readerOpts = append(readerOpts, reader.WithBatchRows(cfg.BatchRows))
	}
	budget, deleteBound, boundName := memoryRule(cfg, reg)
	log.Info("memory", slog.Int64("limit", cfg.memoryLimit.Bytes), slog.String("limit_from", cfg.memoryLimit.Origin),
		slog.Int64("budget", budget.Capacity()), slog.Int64("max_delete_memory", deleteBound))
	readerOpts = append(readerOpts, reader.WithMemory(budget, deleteBound, boundName))
	if cfg.DeleteCacheSize > 0 {
		// One cache and one bound for every catalog's streams. It keeps
		// at least one delete file of the largest size decoded, so that
		// a large equality-delete set every split needs is decoded once;
		// its idle entries give memory back to the budget.
		cache := deletes.NewCache(max(cfg.DeleteCacheSize, deleteBound), reg)
		budget.OnPressure(cache.Reclaim)
		readerOpts = append(readerOpts, reader.WithDeleteCache(cache))
	}
	var cats []handlers.Catalog
	var names []string
	// stops close the catalogs: the run group's last components once it
	// runs, and here when start-up fails before it does.
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for _, c := range cfg.Catalogs {
		if err := checkBuiltIn(c); err != nil {
			return err
		}
	}
	for _, c := range cfg.Catalogs {
		// Each catalog gives each of its tables the FileIO to read it
		// with: the catalog's vended credentials, or the catalog's own
		// properties, with its location map.
		opts := []catalog.Option{catalog.WithStallTimeout(cfg.StorageStallTimeout),
			catalog.WithPrivateFiles(cfg.privateFiles()...)}
		if cfg.clock != nil {
			opts = append(opts, catalog.WithClock(cfg.clock))
		}
		cat, err := catalog.New(c, reg, opts...)
		if err != nil {
			return err
		}
		stops = append(stops, func() {
			if err := cat.Close(); err != nil {
				log.Warn("close catalog", slog.String("catalog", c.Name), slog.String("error", err.Error()))
			}
		})
		planner, err := splits.NewPlanner(cat, signer, reg,
			splits.WithTargetSplitSize(int64(cfg.TargetSplitSize)), splits.WithMaxSplitFiles(cfg.MaxSplitFiles),
			splits.WithMaxSplits(cfg.MaxSplits), splits.WithMemoryBudget(budget))
		if err != nil {
			return err
		}
		if err := pingOnce(ctx, cat, cfg.startupPing); err != nil {
			// Not fatal: planning answers 503 until the catalog is back,
			// and a plan refuses a server that cannot plan (below).
			log.Warn("catalog not reachable yet", slog.String("catalog", c.Name), slog.String("error", err.Error()))
		} else if err := cat.CheckScanPlanning(ctx); errors.Is(err, fault.ErrUnsupported) {
			// --scan-planning remote on a server that does not plan.
			return err
		} else if err != nil {
			log.Warn("catalog's scan planning not checked", slog.String("catalog", c.Name), slog.String("error", err.Error()))
		}
		// A reader per catalog: the delete cache keys a decoded file by
		// its path, which two catalogs' location maps may read from
		// different places.
		cats = append(cats, catalogRoutes(cat, planner, reader.New(reg, readerOpts...)))
		names = append(names, c.Name)
	}

	stopping := make(chan struct{})
	hc := handlers.Config{
		Catalogs:       cats,
		DefaultCatalog: cfg.DefaultCatalog,
		Signer:         signer,
		PublicURL:      cfg.PublicURL,
		Metrics:        m,
		Gatherer:       reg,
		Logger:         log,

		MaxStreams:       cfg.MaxStreams,
		MaxPlans:         cfg.MaxPlans,
		BodyTimeout:      cfg.bodyTimeout,
		PlanTimeout:      cfg.PlanTimeout,
		BasicAuth:        cfg.BasicAuth,
		AuthMetrics:      cfg.AuthMetrics,
		DruidPasswordEnv: cfg.DruidPasswordEnv,

		WriteStallTimeout: cfg.WriteStallTimeout,
		Stopping:          stopping,
	}
	servers, err := listen(ctx, cfg, hc, m, names)
	if err != nil {
		return err
	}
	if ready != nil {
		ready <- servers[0].ln.Addr().String()
	}
	grouped := stops
	stops = nil
	return runServers(ctx, cfg, log, servers, stopping, grouped)
}

// pingOnce connects to a catalog at start-up, for at most timeout: a
// catalog that accepts connections and never answers must not keep the
// server from listening (and its /healthz from answering).
func pingOnce(ctx context.Context, p *catalog.Catalog, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return p.Ping(ctx)
}

func writeDemo(ctx context.Context, cfg config) error {
	if err := os.MkdirAll(cfg.Warehouse, 0o755); err != nil {
		return fmt.Errorf("create warehouse %s: %w", cfg.Warehouse, err)
	}
	cat, err := hadoop.NewCatalog(cfg.CatalogName, cfg.Warehouse, cfg.CatalogProps)
	if err != nil {
		return fmt.Errorf("open local warehouse %s: %w", cfg.Warehouse, err)
	}
	defer cat.Close()
	if err := demo.Write(ctx, cat); err != nil {
		return fmt.Errorf("write demo tables: %w", err)
	}
	return nil
}

// newLogger builds the one logger; every line logged with a request's
// context carries the request's id (handlers.LogHandler).
func newLogger(format string, w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if format == "json" {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(handlers.LogHandler(h))
}
