// Package icebergrest runs Iceberg's own REST catalog server, the reference
// implementation of the REST catalog protocol, for tests: tools/icebergrest
// (Iceberg 1.11's RESTCatalogAdapter behind RESTCatalogServlet, over a
// JdbcCatalog on in-memory SQLite) serving a local warehouse folder on
// 127.0.0.1. It plans scans on the server (the REST spec's plan endpoints)
// when asked, and else advertises no plan endpoint at all.
//
// The server is built with Maven once and cached (tools/icebergrest/build.sh);
// a machine without java or mvn skips the tests that need it, and under CI
// fails them (internal/testenv). Only tests import this package.
//
//	url := icebergrest.Start(t, t.TempDir(), icebergrest.WithPlanning(icebergrest.SyncPlanning))
package icebergrest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// Planning says whether and how the server plans scans.
type Planning string

const (
	// NoPlanning leaves the plan endpoints out of /v1/config and refuses
	// them (406): the client plans, as against most catalogs.
	NoPlanning Planning = "off"
	// SyncPlanning answers a plan request with the plan itself: its file
	// scan tasks, or plan tasks to fetch where it has more file scan tasks
	// than WithTasksPerPlanTask allows in one.
	SyncPlanning Planning = "sync"
	// AsyncPlanning answers a plan request with a plan id the client
	// polls (fetchPlanningResult) until the plan is complete.
	AsyncPlanning Planning = "async"
)

// DefaultTasksPerPlanTask is Iceberg's own default number of file scan
// tasks per plan task (RESTCatalogAdapter.PlanningBehavior).
const DefaultTasksPerPlanTask = 100

// startTimeout bounds how long the JVM may take to answer /v1/config; a
// loaded 2-core machine starts it in a few seconds.
const startTimeout = 2 * time.Minute

type config struct {
	planning         Planning
	tasksPerPlanTask int
}

// Option configures the server Start runs.
type Option func(*config)

// WithPlanning sets whether and how the server plans scans (NoPlanning by
// default).
func WithPlanning(p Planning) Option { return func(c *config) { c.planning = p } }

// WithTasksPerPlanTask sets how many file scan tasks one plan task holds
// when the server plans (DefaultTasksPerPlanTask by default): a plan of more
// file scan tasks than that comes back as plan tasks to fetch.
func WithTasksPerPlanTask(n int) Option { return func(c *config) { c.tasksPerPlanTask = n } }

// Jars returns the folder of the server's jars, building them on the first
// call of the process (and only where the cache lacks them). Without java
// or mvn it calls testenv.Missing.
func Jars(t testing.TB) string {
	t.Helper()
	return testenv.JavaTool(t, "icebergrest", "Iceberg's REST catalog server (tools/icebergrest)")
}

// Start runs Iceberg's REST catalog server over the warehouse folder
// warehouseDir (tables it creates go under it; tables registered with it may
// be anywhere on local disk) and returns its base URL, such as
// http://127.0.0.1:41234, once it answers GET /v1/config. The server is
// stopped, by its pid, when t ends; its log goes to t's log if t fails.
func Start(t testing.TB, warehouseDir string, opts ...Option) string {
	t.Helper()
	return StartEach(t, Catalog{Warehouse: warehouseDir, Options: opts})[0]
}

// Catalog is one catalog StartEach serves: its warehouse folder and how
// it plans scans.
type Catalog struct {
	Warehouse string
	Options   []Option
}

// StartEach is Start for several catalogs in one server (one JVM), each
// with a backend, warehouse and planning mode of its own, as if each were
// a server of its own: it returns their base URLs in the order given (the
// first at the server's root, each other under a path of its own, such as
// http://127.0.0.1:41234/catalog-1). One JVM start is most of what a
// server costs a test.
func StartEach(t testing.TB, catalogs ...Catalog) []string {
	t.Helper()
	if len(catalogs) == 0 {
		t.Fatal("icebergrest: no catalog to serve")
	}
	var args []string
	for _, c := range catalogs {
		cfg := config{planning: NoPlanning, tasksPerPlanTask: DefaultTasksPerPlanTask}
		for _, o := range c.Options {
			o(&cfg)
		}
		switch cfg.planning {
		case NoPlanning, SyncPlanning, AsyncPlanning:
		default:
			t.Fatalf("icebergrest: unknown planning mode %q", cfg.planning)
		}
		if cfg.tasksPerPlanTask < 1 {
			t.Fatalf("icebergrest: tasks per plan task must be at least 1, got %d", cfg.tasksPerPlanTask)
		}
		warehouse, err := filepath.Abs(c.Warehouse)
		if err != nil {
			t.Fatalf("icebergrest: warehouse %s: %v", c.Warehouse, err)
		}
		args = append(args, warehouse, string(cfg.planning), strconv.Itoa(cfg.tasksPerPlanTask))
	}
	jars := Jars(t)

	logPath := filepath.Join(t.TempDir(), "icebergrest.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("icebergrest: create the server log: %v", err)
	}
	cmd := testenv.JavaCommand(jars, "sidecar.icebergrest.Main", args...)
	cmd.Stderr = logFile
	// The server runs until its stdin closes: held open here, closed when t
	// ends, or by the kernel if this process dies first.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("icebergrest: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("icebergrest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("icebergrest: start java: %v", err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		<-exited
		_ = logFile.Close()
		if t.Failed() {
			logTail(t, logPath)
		}
	})

	// The first line is "port N", printed once Jetty listens. The rest of
	// stdout is drained so that the server never blocks on it.
	ports := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		ports <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, r)
		exited <- cmd.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var line string
	select {
	case line = <-ports:
	case <-ctx.Done():
		t.Fatalf("icebergrest: the server printed no port in %s", startTimeout)
	}
	port, ok := strings.CutPrefix(line, "port ")
	if _, err := strconv.Atoi(port); !ok || err != nil {
		t.Fatalf("icebergrest: the server did not start (its first line: %q); its log:\n%s", line, readLog(logPath))
	}
	urls := make([]string, len(catalogs))
	for i := range catalogs {
		urls[i] = "http://127.0.0.1:" + port
		if i > 0 {
			urls[i] += "/catalog-" + strconv.Itoa(i)
		}
		if err := waitReady(ctx, urls[i]); err != nil {
			t.Fatalf("icebergrest: %v; its log:\n%s", err, readLog(logPath))
		}
		t.Logf("Iceberg's REST catalog server at %s over %s (planning %s, tasks per plan task %s)", urls[i], args[3*i], args[3*i+1], args[3*i+2])
	}
	return urls
}

// waitReady polls GET /v1/config until it answers 200 or ctx ends.
func waitReady(ctx context.Context, url string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/config", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /v1/config: %s", resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server did not answer GET /v1/config in %s: %w", startTimeout, err)
		case <-tick.C:
		}
	}
}

// readLog returns the last 4 KiB of the server's log.
func readLog(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(read the log: %v)", err)
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return string(data)
}

// logTail logs the end of the server's log: the stack of whatever failed
// on the server side.
func logTail(t testing.TB, path string) {
	t.Helper()
	t.Logf("Iceberg's REST catalog server log (end):\n%s", readLog(path))
}
