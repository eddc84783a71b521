package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown catalog", []string{"serve", "--catalog", "oracle"}, nil, "catalog \"oracle\""},
		{"static without tables", []string{"serve", "--catalog", "static"}, nil, "--table"},
		{"bad table", []string{"serve", "--catalog", "static", "--table", "t"}, nil, "KEY=VALUE"},
		{"bad location map", []string{"serve", "--location-map", "s3://x"}, nil, "FROM=TO"},
		{"rest without uri", []string{"serve", "--catalog", "rest"}, nil, "--catalog-uri"},
		{"bad public url", []string{"serve", "--public-url", "sidecar:8080"}, nil, "--public-url"},
		{"demo on rest", []string{"serve", "--demo", "--catalog", "rest", "--catalog-uri", "http://x"}, nil, "--demo"},
		{"bad env", []string{"serve"}, map[string]string{"SIDECAR_SHUTDOWN_GRACE": "soon"}, "SIDECAR_SHUTDOWN_GRACE"},
		{"unknown flag", []string{"serve", "--nope"}, nil, "-nope"},
		{"negative token ttl", []string{"serve", "--token-ttl", "-1s"}, nil, "--token-ttl"},
		{"negative plan timeout", []string{"serve", "--plan-timeout", "-1s"}, nil, "--plan-timeout"},
		{"bad delete cache size", []string{"serve", "--delete-cache-size", "lots"}, nil, "-delete-cache-size"},
		{"fractional delete cache size", []string{"serve", "--delete-cache-size", "1.5GiB"}, nil, "whole number of bytes"},
		{"negative delete cache size", []string{"serve", "--delete-cache-size", "-1"}, nil, "-delete-cache-size"},
		{"bad delete cache size env", []string{"serve"}, map[string]string{"SIDECAR_DELETE_CACHE_SIZE": "1PB"}, "SIDECAR_DELETE_CACHE_SIZE"},
		{"bad scan planning", []string{"serve", "--scan-planning", "server"}, nil, `scan planning "server": want auto, local or remote`},
		{"bad scan planning env", []string{"serve"}, map[string]string{"SIDECAR_SCAN_PLANNING": "always"}, `scan planning "always"`},
		{"remote scan planning on a local catalog", []string{"serve", "--scan-planning", "remote"}, nil,
			"scan planning remote needs a rest catalog"},
		{"unknown command", []string{"srv"}, nil, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string { return tc.env[k] }
			code := run(context.Background(), tc.args, getenv, &stdout, &stderr)
			if code == 0 {
				t.Fatalf("exit 0 for %v", tc.args)
			}
			msg := stderr.String()
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("stderr %q lacks %q", msg, tc.want)
			}
			if strings.Count(msg, "\n") != 1 && tc.args[0] == "serve" {
				t.Fatalf("stderr is not one line: %q", msg)
			}
			if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") {
				t.Fatalf("stderr holds a stack trace: %s", msg)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "auth")
	if err := os.WriteFile(good, []byte("# druid\ndruid:pa:ss\nops:x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("druid-without-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noenv := func(string) string { return "" }
	const public = "http://sidecar:8080"
	cfg, err := parseServe([]string{"--basic-auth-file", good, "--public-url", public}, noenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.BasicAuth) != 2 || cfg.BasicAuth[0].Username != "druid" || cfg.BasicAuth[0].Password != "pa:ss" {
		t.Fatalf("credentials %+v", cfg.BasicAuth)
	}
	env := map[string]string{"SIDECAR_BASIC_AUTH_USERNAME": "druid", "SIDECAR_BASIC_AUTH_PASSWORD": "pw", "SIDECAR_PUBLIC_URL": public}
	cfg, err = parseServe(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || len(cfg.BasicAuth) != 1 || cfg.BasicAuth[0].Password != "pw" {
		t.Fatalf("credentials from env: %+v, %v", cfg.BasicAuth, err)
	}
	_, err = parseServe([]string{"--basic-auth-file", bad, "--public-url", public}, noenv, io.Discard)
	if err == nil || strings.Contains(err.Error(), "druid-without-password") {
		t.Fatalf("a bad line must be refused without being quoted: %v", err)
	}
	half := map[string]string{"SIDECAR_BASIC_AUTH_USERNAME": "druid", "SIDECAR_PUBLIC_URL": public}
	if _, err := parseServe(nil, func(k string) string { return half[k] }, io.Discard); err == nil {
		t.Fatal("a username without a password must be refused")
	}
	// With credentials, the URIs' host is the operator's, never a request's.
	if _, err := parseServe([]string{"--basic-auth-file", good}, noenv, io.Discard); err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Fatalf("Basic auth without --public-url: %v, want an error naming --public-url", err)
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve", "-h"}, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("serve -h exits %d", code)
	}
	for _, flag := range []string{"-addr", "-public-url", "-catalog", "-warehouse", "-catalog-uri", "-catalog-prop",
		"-table", "-location-map", "-token-key-file", "-token-ttl", "-demo", "-delete-cache-size"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("serve -h does not list %s", flag)
		}
	}
}

func TestDeleteCacheSize(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want int64
	}{
		{nil, "", 256 << 20},
		{[]string{"--delete-cache-size", "0"}, "", 0},
		{[]string{"--delete-cache-size", "1048576"}, "", 1 << 20},
		{[]string{"--delete-cache-size", "64MiB"}, "", 64 << 20},
		{[]string{"--delete-cache-size", "1GiB"}, "", 1 << 30},
		{[]string{"--delete-cache-size", "2gib"}, "", 2 << 30},
		{[]string{"--delete-cache-size", "500MB"}, "", 500_000_000},
		{[]string{"--delete-cache-size", "10 KiB"}, "", 10 << 10},
		{[]string{"--delete-cache-size", "512B"}, "", 512},
		{nil, "1GiB", 1 << 30},
		{nil, "0", 0},
		{[]string{"--delete-cache-size", "16MiB"}, "1GiB", 16 << 20}, // the flag wins
	} {
		getenv := func(k string) string {
			if k == "SIDECAR_DELETE_CACHE_SIZE" {
				return tc.env
			}
			return ""
		}
		cfg, err := parseServe(tc.args, getenv, io.Discard)
		if err != nil || cfg.DeleteCacheSize != tc.want {
			t.Errorf("%v with SIDECAR_DELETE_CACHE_SIZE=%q: %d, %v; want %d", tc.args, tc.env, cfg.DeleteCacheSize, err, tc.want)
		}
	}
	var help bytes.Buffer
	if _, err := parseServe([]string{"-h"}, func(string) string { return "" }, &help); err == nil || !strings.Contains(help.String(), "(default 256MiB)") {
		t.Errorf("serve -h does not give the default as 256MiB:\n%s", help.String())
	}
}

func TestEnvFallback(t *testing.T) {
	env := map[string]string{
		"SIDECAR_ADDR":          "127.0.0.1:9999",
		"SIDECAR_CATALOG":       "static",
		"SIDECAR_TABLE":         "a.b=/m/v1.metadata.json,c.d=/m/v2.metadata.json",
		"SIDECAR_LOCATION_MAP":  "s3://x/=/data/",
		"SIDECAR_SCAN_PLANNING": "local",
	}
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:1"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:1" {
		t.Fatalf("a flag must win over the environment: addr %s", cfg.Addr)
	}
	if cfg.Catalog != "static" || len(cfg.Tables) != 2 || cfg.Tables["c.d"] != "/m/v2.metadata.json" {
		t.Fatalf("environment not applied: %+v", cfg)
	}
	if len(cfg.LocationMap) != 1 || cfg.LocationMap[0].To != "/data/" {
		t.Fatalf("location map %+v", cfg.LocationMap)
	}
	if cfg.Catalogs[0].ScanPlanning != "local" {
		t.Fatalf("scan planning %q, want the environment's local", cfg.Catalogs[0].ScanPlanning)
	}
}

// TestServeDemoInWorkingFolder runs the README's first command as it is
// written, in a folder of its own: the demo's default warehouse,
// ./warehouse, is relative to the working folder, and the operator's roots
// hold it, so demo.orders plans and serves its live rows.
func TestServeDemoInWorkingFolder(t *testing.T) {
	t.Chdir(t.TempDir())
	s, _ := startServeArgs(t, []string{"--addr", "127.0.0.1:0", "--demo", "--shutdown-grace", "5s"}, nil)
	orders := getPlan(t, s.base+"/splits?table=demo.orders")
	var rows int
	for _, u := range orders.InputSource.URIs {
		rows += strings.Count(string(getBody(t, u)), "\n")
	}
	if rows != 3 {
		t.Fatalf("demo.orders served %d rows from ./warehouse, want its 3 live rows", rows)
	}
}

// TestServeDemo runs the README's first command end to end: the demo tables
// are written, planned and read over HTTP, and the server shuts down cleanly.
func TestServeDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, cfg := startServeArgs(t, []string{
		"--addr", "127.0.0.1:0", "--demo",
		"--warehouse", filepath.Join(dir, "warehouse"),
		"--token-key-file", filepath.Join(dir, "token.key"),
		"--shutdown-grace", "5s",
	}, nil)
	base := s.base

	orders := getPlan(t, base+"/splits?table=demo.orders")
	if orders.Mode != "v2" || orders.InputFormat.Type != "json" {
		t.Fatalf("demo.orders planned as %s/%s, want v2/json", orders.Mode, orders.InputFormat.Type)
	}
	var ids []int64
	for _, u := range orders.InputSource.URIs {
		body := getBody(t, u)
		for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
			if line == "" {
				continue
			}
			var row struct {
				OrderID int64 `json:"order_id"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
			ids = append(ids, row.OrderID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{1001, 1003, 1007}) {
		t.Fatalf("demo.orders live order ids %v, want [1001 1003 1007]", ids)
	}

	// The default delete cache is wired to the metrics: demo.orders's two
	// splits share its positional delete file, which was read once.
	scrape := string(getBody(t, base+"/metrics"))
	for _, series := range []string{
		`sidecar_delete_cache_misses_total{kind="position"} 1`,
		`sidecar_delete_cache_hits_total{kind="position"} 1`,
		`sidecar_delete_file_loads_total{kind="position"} 1`,
	} {
		if !strings.Contains(scrape, "\n"+series+"\n") {
			t.Errorf("/metrics lacks %s", series)
		}
	}

	customers := getPlan(t, base+"/splits?table=demo.customers")
	if customers.Mode != "v1" || customers.InputFormat.Type != "parquet" || len(customers.InputSource.URIs) == 0 {
		t.Fatalf("demo.customers planned as %+v, want v1 parquet", customers)
	}
	if body := getBody(t, customers.InputSource.URIs[0]); !bytes.HasPrefix(body, []byte("PAR1")) {
		t.Fatal("a v1 URI must serve the raw Parquet file")
	}

	s.stop(t)

	// A restart with --demo leaves the tables alone and keeps the key.
	key1, err := os.ReadFile(filepath.Join(dir, "token.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeDemo(context.Background(), cfg); err != nil {
		t.Fatalf("second --demo run: %v", err)
	}
	key2, _ := os.ReadFile(filepath.Join(dir, "token.key"))
	if !bytes.Equal(key1, key2) {
		t.Fatal("the token key changed")
	}
}

type demoPlan struct {
	Mode        string `json:"mode"`
	InputSource struct {
		URIs []string `json:"uris"`
	} `json:"inputSource"`
	InputFormat struct {
		Type string `json:"type"`
	} `json:"inputFormat"`
}

func getPlan(t *testing.T, url string) demoPlan {
	t.Helper()
	var p demoPlan
	if err := json.Unmarshal(getBody(t, url), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return body
}
