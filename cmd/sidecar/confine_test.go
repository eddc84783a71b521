package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTokenKeyFileMode: a token key file that group or others can read is
// warned about at start (whoever reads it signs tokens); one of mode 0600
// is not.
func TestTokenKeyFileMode(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "token.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o640, true}, {0o600, false}, {0o400, false}} {
		if err := os.Chmod(key, tc.mode); err != nil {
			t.Fatal(err)
		}
		s, _ := startServeArgs(t, []string{"--addr", "127.0.0.1:0", "--warehouse", filepath.Join(dir, "warehouse"),
			"--token-key-file", key, "--shutdown-grace", "1s"}, nil)
		s.stop(t)
		if got := strings.Contains(s.logs.String(), "token key file is readable by group or others"); got != tc.warn {
			t.Errorf("key file of mode %s: warned %v, want %v\n%s", tc.mode, got, tc.warn, s.logs.String())
		}
	}
}

// TestAllowTableAndDataRootFlags: --allow-table and --data-root (and the
// config file's allowTables and dataRoots) reach the catalog; an entry no
// table name could be, and a data root at the root of a file system, are
// refused before anything starts; a sidecar with --allow-table refuses
// the other tables.
func TestAllowTableAndDataRootFlags(t *testing.T) {
	none := func(string) string { return "" }
	cfg, err := parseServe([]string{"--allow-table", "demo.customers", "--allow-table", "ops", "--data-root", "s3://imports/t"}, none, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Catalogs[0]; !slices.Equal(c.Allow, []string{"demo.customers", "ops"}) || !slices.Equal(c.DataRoots, []string{"s3://imports/t"}) {
		t.Fatalf("catalog allow %q, data roots %q", c.Allow, c.DataRoots)
	}
	file := filepath.Join(t.TempDir(), "sidecar.yaml")
	if err := os.WriteFile(file, []byte("catalogs:\n  - name: lake\n    type: local\n    warehouse: /wh\n"+
		"    allowTables: [sales]\n    dataRoots: [/imports]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = parseServe([]string{"--config", file}, none, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Catalogs[0]; !slices.Equal(c.Allow, []string{"sales"}) || !slices.Equal(c.DataRoots, []string{"/imports"}) {
		t.Fatalf("config file: catalog allow %q, data roots %q", c.Allow, c.DataRoots)
	}
	for _, args := range [][]string{{"--allow-table", "a/b"}, {"--allow-table", "a..b"}, {"--data-root", "/"}, {"--data-root", "s3://bucket"}} {
		if _, err := parseServe(args, none, nil); err == nil {
			t.Errorf("%q accepted", args)
		}
	}

	dir := t.TempDir()
	s, _ := startServeArgs(t, []string{"--addr", "127.0.0.1:0", "--demo", "--warehouse", filepath.Join(dir, "warehouse"),
		"--token-key-file", filepath.Join(dir, "token.key"), "--shutdown-grace", "1s", "--allow-table", "demo.customers"}, nil)
	for table, want := range map[string]int{"demo.orders": http.StatusForbidden, "demo.customers": http.StatusOK} {
		resp, err := http.Get(s.base + "/splits?table=" + table)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/splits?table=%s: %d, want %d", table, resp.StatusCode, want)
		}
	}
}

// TestAllowStoragePrefixFlag: --allow-storage-prefix (repeatable;
// SIDECAR_ALLOW_STORAGE_PREFIX, a comma-separated list; the config file's
// allowStoragePrefixes) reaches the catalog as its storage prefixes, a flag
// wins over the environment, and a value that is not an object store's
// bucket or prefix (a local folder, a scheme without a bucket) stops the
// start. The config file's credential files and the process's own files
// are the files no table may open.
func TestAllowStoragePrefixFlag(t *testing.T) {
	none := func(string) string { return "" }
	cfg, err := parseServe([]string{"--catalog", "rest", "--catalog-uri", "http://c", "--allow-storage-prefix", "s3://lake",
		"--allow-storage-prefix", "gs://other/t"}, none, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Catalogs[0].StoragePrefixes; !slices.Equal(got, []string{"s3://lake", "gs://other/t"}) {
		t.Fatalf("storage prefixes %q", got)
	}
	env := map[string]string{"SIDECAR_ALLOW_STORAGE_PREFIX": "s3://a, s3://b/p"}
	cfg, err = parseServe([]string{"--catalog", "rest", "--catalog-uri", "http://c"}, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Catalogs[0].StoragePrefixes; !slices.Equal(got, []string{"s3://a", "s3://b/p"}) {
		t.Fatalf("from the environment: storage prefixes %q", got)
	}
	cfg, err = parseServe([]string{"--catalog", "rest", "--catalog-uri", "http://c", "--allow-storage-prefix", "s3://flag"},
		func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Catalogs[0].StoragePrefixes; !slices.Equal(got, []string{"s3://flag"}) {
		t.Fatalf("a flag must win over the environment: storage prefixes %q", got)
	}

	dir := t.TempDir()
	secret := filepath.Join(dir, "s3-secret")
	if err := os.WriteFile(secret, []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sidecar.yaml")
	if err := os.WriteFile(file, []byte("catalogs:\n  - name: lake\n    type: rest\n    uri: http://c\n"+
		"    allowStoragePrefixes: [\"s3://lake\"]\n    properties: {s3.secret-access-key: {file: "+secret+"}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = parseServe([]string{"--config", file, "--token-key-file", filepath.Join(dir, "k.key")}, none, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Catalogs[0]
	if !slices.Equal(c.StoragePrefixes, []string{"s3://lake"}) || !slices.Equal(c.PrivateFiles, []string{secret}) {
		t.Fatalf("config file: storage prefixes %q, private files %q", c.StoragePrefixes, c.PrivateFiles)
	}
	if got := cfg.privateFiles(); !slices.Contains(got, file) || !slices.Contains(got, filepath.Join(dir, "k.key")) {
		t.Fatalf("the process's own files %q lack the config file or the token key", got)
	}

	for _, v := range []string{"/data", "file:///data", "s3://", "s3:///x", "s3://b/../c"} {
		if _, err := parseServe([]string{"--catalog", "rest", "--catalog-uri", "http://c", "--allow-storage-prefix", v}, none, nil); err == nil ||
			!strings.Contains(err.Error(), "storage prefix") {
			t.Errorf("--allow-storage-prefix %q: %v, want a refusal", v, err)
		}
	}
	for _, args := range [][]string{{"--warehouse", "/"}, {"--location-map", "s3://x/=/"}} {
		if _, err := parseServe(args, none, nil); err == nil {
			t.Errorf("%q accepted: the root of the file system would be a root", args)
		}
	}
}
