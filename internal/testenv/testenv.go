// Package testenv tells a test what the machine it runs on offers: the
// outside programs some tests run (promtool and Prometheus, Chromium,
// PostgreSQL, SeaweedFS, Node.js) and whether a long test may be left out;
// and Poll, the one way a test waits on another process that tells nobody
// when its state changes.
//
// A test that cannot run skips with a message naming what it lacks and how
// to get it, so that a fresh clone with only Go passes; under CI (the CI
// environment variable set, as .ci/run does after installing every tool)
// the same test fails instead, since there a check that did not run is a
// defect. Only tests import this package.
package testenv

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CI reports whether the tests run under CI: the CI environment variable is
// set to anything but the empty string.
func CI() bool { return os.Getenv("CI") != "" }

// Missing ends t because something it needs is not there; what names it
// and says how to get it. It skips t, or under CI fails it.
func Missing(t testing.TB, what string) {
	t.Helper()
	if CI() {
		t.Fatalf("%s; under CI a test that cannot run fails", what)
	}
	t.Skip(what)
}

// Tool returns the path of the program name on PATH. Where it is missing it
// calls Missing with install, how to install it (such as "apt-get install
// prometheus").
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, fmt.Sprintf("%s is not on PATH (%s)", name, install))
	}
	return p
}

// javaBuilds are the Maven projects under tools/ built so far by this
// process, by folder: each is built (or found in its cache) once.
var javaBuilds struct {
	mu   sync.Mutex
	done map[string]javaBuild
}

type javaBuild struct {
	dir string
	err error
}

// JavaTool returns the folder of the jars of tools/NAME, a Maven project
// whose build.sh builds it once into the user cache and prints that folder
// (tools/icebergjava, tools/icebergrest); what names it in messages. The
// first call of the process runs build.sh, later calls reuse its answer.
// Without java or mvn, or where Maven cannot build it (no network, or a
// dependency the registry lacks), it calls Missing.
func JavaTool(t testing.TB, name, what string) string {
	t.Helper()
	Tool(t, "java", "apt-get install openjdk-17-jdk-headless")
	Tool(t, "mvn", "apt-get install maven")
	javaBuilds.mu.Lock()
	b, ok := javaBuilds.done[name]
	if !ok {
		b = buildJavaTool(name)
		if javaBuilds.done == nil {
			javaBuilds.done = map[string]javaBuild{}
		}
		javaBuilds.done[name] = b
	}
	javaBuilds.mu.Unlock()
	if b.err != nil {
		Missing(t, fmt.Sprintf("%s is not built: %v", what, b.err))
	}
	return b.dir
}

// JavaCommand is the command that runs the class main of a Maven tool's
// jars (the folder JavaTool returns) with args, on a client VM: C1 alone
// and the serial collector. The tools run for seconds on a shared 2-core
// machine, where the JIT's later tiers and the parallel collectors cost
// more CPU than they win back: the Iceberg Java history writer spends half
// the CPU for the suite's 8 histories, and less wall time for 40.
func JavaCommand(jars, main string, args ...string) *exec.Cmd {
	return exec.Command("java", append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-cp", filepath.Join(jars, "*"), main}, args...)...)
}

// buildJavaTool runs tools/NAME/build.sh.
func buildJavaTool(name string) javaBuild {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "tools", name, "build.sh")
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return javaBuild{err: fmt.Errorf("tools/%s/build.sh: %w\n%s", name, err, stderr.Bytes())}
	}
	return javaBuild{dir: strings.TrimSpace(string(out))}
}

// pgRoot holds Debian's PostgreSQL server programs, one folder a major
// version, off PATH.
const pgRoot = "/usr/lib/postgresql"

// PostgresTool returns the path of the PostgreSQL program name (initdb,
// postgres, pg_isready): on PATH, or else in the newest version's folder
// of Debian's /usr/lib/postgresql/*/bin. Where it is in neither it calls
// Missing.
func PostgresTool(t testing.TB, name string) string {
	t.Helper()
	return postgresTool(t, name, pgRoot)
}

func postgresTool(t testing.TB, name, root string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob(filepath.Join(root, "*", "bin", name))
	if len(matches) == 0 {
		Missing(t, fmt.Sprintf("%s is neither on PATH nor in %s/*/bin (apt-get install postgresql)", name, root))
	}
	// The newest major version: 15 before 9, as numbers.
	version := func(p string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
		return v
	}
	return slices.MaxFunc(matches, func(a, b string) int { return version(a) - version(b) })
}

// histories is the -histories flag of every test binary that imports
// testenv.
var histories = flag.Int("histories", 0, "random Iceberg histories each model test of /changes and sync runs (0: the test's own count, fewer with -short)")

// Histories is how many random Iceberg histories a model test runs: the
// -histories flag when set (.ci/run's model stage runs hundreds), else
// short under -short and full otherwise.
func Histories(full, short int) int {
	switch {
	case *histories > 0:
		return *histories
	case testing.Short():
		return short
	}
	return full
}

// SkipShort skips t under -short; why says what makes it long ("writes a
// table of 300,000 rows"). Under CI it fails t instead: .ci/run does not
// pass -short, and a CI run that did would leave the test out unseen.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if CI() {
		t.Fatalf("-short would leave out this test, which %s; under CI every test runs", why)
	}
	t.Skipf("-short: the test %s", why)
}

// PromtoolCheckGatherer lints what g exports, as /metrics serves it, with
// PromtoolCheck, and returns that scrape.
func PromtoolCheckGatherer(t testing.TB, g prometheus.Gatherer) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(g, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	PromtoolCheck(t, rec.Body.Bytes())
	return rec.Body.String()
}

// PromtoolCheck lints a Prometheus text exposition with `promtool check
// metrics` (Debian's prometheus package) and fails t on any complaint.
func PromtoolCheck(t testing.TB, scrape []byte) {
	t.Helper()
	bin := Tool(t, "promtool", "apt-get install prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrape)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// ChildEnv returns env, the environment of a child process that runs this
// test binary again, with the race detector's pause at exit turned off
// (GORACE=atexit_sleep_ms=0) unless env sets GORACE: a -race binary sleeps
// a second when it exits, to let other threads finish their reports, and
// the tests wait for their children to exit. A race in the child is still
// reported, and still fails its exit status.
func ChildEnv(env []string) []string {
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GORACE=") }) {
		return env
	}
	return append(env, "GORACE=atexit_sleep_ms=0")
}

// CollectLess lets the Go heap of a test binary grow to five times its live
// size between collections (GOGC=400) unless GOGC is set: under -race, whose
// shadow memory makes every allocation dearer, garbage collection was a
// sixth of the CPU of the packages that write and serve many tables, for
// memory this machine has. A package calls it at the start of TestMain;
// processes the tests start run with the runtime's default.
func CollectLess() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// Poll calls cond until it returns nil, and fails t with cond's last
// error once within has passed without. It asks at once, then after 10 ms,
// the wait doubling up to half a second.
//
// Polling is for what a test can only watch by asking again: the state of
// another process that sends no notification when it changes, such as a
// real Druid's task status or SQL answer, a child process's port, or a
// listener that net/http's Server.Shutdown closes without telling its
// caller (Shutdown returns only once the connections have drained). What
// happens within the test's own process has a signal to wait on instead
// (a channel, a hook, a log line through testlog.Buffer.Await) or runs
// under testing/synctest; a process that logs what it did is waited on
// through its log.
func Poll(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	wait := 10 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %v", within, err)
		}
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
}
