package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/icebergrest"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// TestRemoteScanPlanningAtStart: --scan-planning remote against a REST
// catalog whose server does not plan (Iceberg's own server with planning
// off) stops the start with one line that names the catalog and the
// endpoints it lacks; against one that plans, the sidecar starts.
func TestRemoteScanPlanningAtStart(t *testing.T) {
	testenv.SkipShort(t, "starts Iceberg's REST catalog server, a JVM")
	dir := t.TempDir()
	args := func(uri string) []string {
		return []string{"--addr", "127.0.0.1:0", "--catalog", "rest", "--catalog-uri", uri, "--data-root", dir,
			"--scan-planning", "remote", "--token-key-file", filepath.Join(dir, "token.key")}
	}

	// One server (one JVM) serves both catalogs.
	urls := icebergrest.StartEach(t,
		icebergrest.Catalog{Warehouse: filepath.Join(dir, "off"), Options: []icebergrest.Option{icebergrest.WithPlanning(icebergrest.NoPlanning)}},
		icebergrest.Catalog{Warehouse: filepath.Join(dir, "sync"), Options: []icebergrest.Option{icebergrest.WithPlanning(icebergrest.SyncPlanning)}})
	off, sync := urls[0], urls[1]
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"serve"}, args(off)...), func(string) string { return "" }, &stdout, &stderr)
	// The log goes to stderr too: the error is the line run writes.
	var msg string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "sidecar serve: ") {
			msg = line
		}
	}
	if code == 0 || !strings.Contains(msg, `catalog "sidecar" is configured with scan planning remote`) ||
		!strings.Contains(msg, "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan") {
		t.Fatalf("exit %d, stderr %q: want a failed start, one line naming the catalog and the endpoints", code, stderr.String())
	}

	cfg, err := parseServe(args(sync), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve against a server that plans: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the sidecar did not start")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
