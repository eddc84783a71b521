package main

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	icebergio "github.com/apache/iceberg-go/io"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/internal/demo"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sidecar.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFile: one catalog per Druid catalog type, secrets from the
// environment and from files, location maps and the default catalog.
func TestConfigFile(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "s3-secret")
	if err := os.WriteFile(secretFile, []byte("file-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, `
defaultCatalog: lake
catalogs:
  - name: lake
    type: rest
    uri: https://polaris.internal:8181/api/catalog
    warehouse: lake
    properties:
      credential: {env: POLARIS_CREDENTIAL}
      s3.region: eu-west-1
      s3.secret-access-key: {file: `+secretFile+`}
    locationMap:
      - {from: "s3://lake/", to: "s3://lake-replica/"}
    scanPlanning: remote
  - name: local
    type: local
    warehouse: /var/lib/iceberg
  - name: metastore
    type: hive
    uri: thrift://metastore:9083
    warehouse: s3://hive-warehouse/
  - name: glue
    type: glue
    properties:
      glue.region: us-east-1
      glue.id: "123456789012"
  - name: jdbc
    type: sql
    catalogName: spark_catalog
    uri: {env: JDBC_URI}
    warehouse: s3://jdbc/
`)
	env := map[string]string{
		"POLARIS_CREDENTIAL": "client:env-secret-value",
		"JDBC_URI":           "postgres://iceberg:pg-secret-value@db:5432/iceberg",
	}
	cfg, err := parseServe([]string{"--config", path}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cfg.Catalogs {
		names = append(names, c.Name+"/"+c.Type)
	}
	if want := []string{"lake/rest", "local/local", "metastore/hive", "glue/glue", "jdbc/sql"}; !slices.Equal(names, want) {
		t.Fatalf("catalogs %v, want %v", names, want)
	}
	if cfg.DefaultCatalog != "lake" {
		t.Fatalf("default %q", cfg.DefaultCatalog)
	}
	lake, jdbc := cfg.Catalogs[0], cfg.Catalogs[4]
	if lake.Props["credential"] != "client:env-secret-value" || lake.Props["s3.secret-access-key"] != "file-secret-value" ||
		lake.Props["s3.region"] != "eu-west-1" {
		t.Fatalf("lake properties %v", lake.Props)
	}
	if !slices.Contains(lake.Secrets, "client:env-secret-value") || !slices.Contains(lake.Secrets, "file-secret-value") ||
		slices.Contains(lake.Secrets, "eu-west-1") {
		t.Fatalf("lake secrets %q: want exactly the env and file values", lake.Secrets)
	}
	if want := []sidecatalog.Mapping{{From: "s3://lake/", To: "s3://lake-replica/"}}; !slices.Equal(lake.LocationMap, want) {
		t.Fatalf("lake location map %v", lake.LocationMap)
	}
	if lake.ScanPlanning != "remote" || cfg.Catalogs[1].ScanPlanning != "" {
		t.Fatalf("scan planning %q and %q, want remote and the default", lake.ScanPlanning, cfg.Catalogs[1].ScanPlanning)
	}
	if jdbc.URI != env["JDBC_URI"] || jdbc.IcebergName != "spark_catalog" || !slices.Contains(jdbc.Secrets, env["JDBC_URI"]) {
		t.Fatalf("jdbc catalog %+v", jdbc)
	}
}

// TestConfigFileErrors: every mistake is one clear line that names where it
// is, and never quotes a secret.
func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name, body string
		args       []string
		want       string
	}{
		{"unknown top-level key", "catalog:\n  - name: a\n", nil, "field catalog not found"},
		{"unknown catalog key", "catalogs:\n  - name: a\n    type: local\n    warehous: /w\n", nil, "field warehous not found"},
		{"unknown reference", "catalogs:\n  - name: a\n    type: rest\n    uri: {vault: x}\n", nil, "field vault not found"},
		{"two references", "catalogs:\n  - name: a\n    type: rest\n    uri: {env: A, file: /b}\n", nil, "exactly one of env and file"},
		{"unset variable", "catalogs:\n  - name: a\n    type: rest\n    uri: http://x\n    properties:\n      credential: {env: NOT_SET}\n", nil,
			"catalog a: properties.credential: environment variable NOT_SET is not set"},
		{"missing file", "catalogs:\n  - name: a\n    type: rest\n    uri: {file: /nonexistent/secret}\n", nil, "uri: open /nonexistent/secret"},
		{"no catalogs", "defaultCatalog: a\n", nil, "no catalog under catalogs"},
		{"empty", "", nil, "is empty"},
		{"two documents", "catalogs:\n  - {name: a, type: local, warehouse: /w}\n---\ncatalogs: []\n", nil, "one YAML document"},
		{"bad name", "catalogs:\n  - {name: 'a b', type: local, warehouse: /w}\n", nil, `name "a b"`},
		{"twice", "catalogs:\n  - {name: a, type: local, warehouse: /w}\n  - {name: a, type: local, warehouse: /v}\n", nil, "defined twice"},
		{"unknown default", "defaultCatalog: b\ncatalogs:\n  - {name: a, type: local, warehouse: /w}\n", nil, "defaultCatalog b is not one of the catalogs (a)"},
		{"unknown type", "catalogs:\n  - {name: a, type: nessie}\n", nil, `catalog a: catalog "nessie"`},
		{"rest without uri", "catalogs:\n  - {name: a, type: rest}\n", nil, "catalog a: catalog rest needs a uri"},
		{"half a location map", "catalogs:\n  - {name: a, type: local, warehouse: /w, locationMap: [{from: /x}]}\n", nil, "locationMap #1"},
		{"with catalog flags", "catalogs:\n  - {name: a, type: local, warehouse: /w}\n", []string{"--catalog", "rest"}, "--catalog and --config exclude each other"},
		{"remote scan planning on a local catalog", "catalogs:\n  - {name: a, type: local, warehouse: /w, scanPlanning: remote}\n", nil,
			"catalog a: scan planning remote needs a rest catalog"},
		{"with the scan planning flag", "catalogs:\n  - {name: a, type: local, warehouse: /w}\n", []string{"--scan-planning", "local"},
			"--scan-planning and --config exclude each other"},
		{"with demo", "catalogs:\n  - {name: a, type: local, warehouse: /w}\n", []string{"--demo"}, "--demo needs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--config", writeConfig(t, tc.body)}, tc.args...)
			_, err := parseServe(args, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
	if _, err := parseServe([]string{"--config", "/nonexistent/sidecar.yaml"}, func(string) string { return "" }, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--config") {
		t.Fatalf("a missing config file: %v", err)
	}
}

// TestServeConfigFile serves two named catalogs from a config file: each is
// planned with ?catalog=, and without it the default one.
func TestServeConfigFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"east", "west"} {
		cat, err := hadoop.NewCatalog(name, filepath.Join(dir, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := demo.Write(ctx, cat); err != nil {
			t.Fatal(err)
		}
		cat.Close()
	}
	// west's files moved after they were written: its location map finds
	// them.
	if err := os.Rename(filepath.Join(dir, "west"), filepath.Join(dir, "west-moved")); err != nil {
		t.Fatal(err)
	}
	meta, err := filepath.Glob(filepath.Join(dir, "west-moved", "demo", "customers", "metadata", "v*.metadata.json"))
	if err != nil || len(meta) == 0 {
		t.Fatalf("west's metadata: %v %v", meta, err)
	}
	slices.Sort(meta)
	path := writeConfig(t, `
defaultCatalog: east
catalogs:
  - name: east
    type: local
    warehouse: `+filepath.Join(dir, "east")+`
  - name: west
    type: static
    tables:
      demo.customers: `+meta[len(meta)-1]+`
    locationMap:
      - {from: `+filepath.Join(dir, "west")+`/, to: `+filepath.Join(dir, "west-moved")+`/}
`)
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--config", path,
		"--token-key-file", filepath.Join(dir, "token.key")}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, ready) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("server did not start")
	}
	if p := getPlan(t, base+"/splits?table=demo.orders"); p.Mode != "v2" {
		t.Fatalf("the default catalog's demo.orders planned %s", p.Mode)
	}
	p := getPlan(t, base+"/splits?table=demo.customers&catalog=west&mode=rows")
	var rows int
	for _, u := range p.InputSource.URIs {
		rows += strings.Count(string(getBody(t, u)), "\n")
	}
	if p.Mode != "v2" || rows == 0 {
		t.Fatalf("west's demo.customers through its location map: %s, %d rows", p.Mode, rows)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestBuiltIn: serve refuses a catalog or a store the binary was built
// without, naming the build tag that brings it; what it was built with
// passes.
func TestBuiltIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    sidecatalog.Config
		tag  string
		have bool
	}{
		{"glue", sidecatalog.Config{Name: "g", Type: "glue"}, "glue",
			slices.Contains(catalog.GetRegisteredCatalogs(), "glue")},
		{"hive", sidecatalog.Config{Name: "h", Type: "hive", URI: "thrift://m:9083"}, "hive",
			slices.Contains(catalog.GetRegisteredCatalogs(), "hive")},
		{"sql", sidecatalog.Config{Name: "s", Type: "sql", URI: "postgres://db/x"}, "sql",
			slices.Contains(sql.Drivers(), "pgx")},
		{"gcs", sidecatalog.Config{Name: "r", Type: "rest", URI: "http://r", Warehouse: "gs://b/w"}, "gcs",
			slices.Contains(icebergio.GetRegisteredSchemes(), "gs")},
		{"azure", sidecatalog.Config{Name: "r", Type: "rest", URI: "http://r",
			LocationMap: []sidecatalog.Mapping{{From: "s3://a/", To: "abfss://c@acct.dfs.core.windows.net/a/"}}}, "azure",
			slices.Contains(icebergio.GetRegisteredSchemes(), "abfss")},
		{"gcs storage prefix", sidecatalog.Config{Name: "r", Type: "rest", URI: "http://r", StoragePrefixes: []string{"gs://b"}}, "gcs",
			slices.Contains(icebergio.GetRegisteredSchemes(), "gs")},
		{"s3 and local files", sidecatalog.Config{Name: "r", Type: "rest", URI: "http://r", Warehouse: "s3://b/w",
			LocationMap: []sidecatalog.Mapping{{From: "s3://b/", To: "/data/b/"}}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkBuiltIn(tc.c)
			switch {
			case tc.have && err != nil:
				t.Fatalf("built in, but refused: %v", err)
			case !tc.have && (err == nil || !strings.Contains(err.Error(), "-tags "+tc.tag)):
				t.Fatalf("not built in: %v, want a refusal naming -tags %s", err, tc.tag)
			}
		})
	}
	// The default build serves the demo.
	if err := checkBuiltIn(sidecatalog.Config{Name: "demo", Type: "local", Warehouse: "./warehouse"}); err != nil {
		t.Fatal(err)
	}
}
