package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testlog"
)

// shutdownRows is the size of the table the shutdown tests stream: large
// enough (megabytes of NDJSON, many times the server's send buffer of
// testSendBuffer and what the client's receive buffer grows to while it
// reads the first 64 KiB) that the stream cannot hide in the socket
// buffers, so the server is still writing when the shutdown begins; the
// log shows that it was.
const shutdownRows = 30_000

// TestGracefulShutdown is what SIGTERM does to `sidecar serve` (main turns
// the signal into a cancelled context): the listener closes at once, a
// stream that is running finishes byte-exact within --shutdown-grace, and a
// stream still running when the grace period is over is cut, so that the
// client sees an error and retries instead of taking a clean early end for
// the end of the data.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "streams a table of 30,000 rows through two shutdowns")
	dir := t.TempDir()
	writeBigTable(t, dir, shutdownRows, 0.05, 0.01)
	// wantOf is the split's whole stream, read once: every server with
	// the key serves the same bytes for it (a row stream is
	// byte-deterministic), and each read is megabytes.
	var want []byte
	wantOf := func(t *testing.T, uri string) []byte {
		t.Helper()
		if want == nil {
			want = getBody(t, uri)
		}
		return want
	}

	t.Run("stream finishes within the grace period", func(t *testing.T) {
		s := startServe(t, dir, 2*time.Minute)
		uri := s.rowsURI(t, "bench.big")
		want := wantOf(t, uri)

		t.Logf("the split streams %d bytes", len(want))
		resp, head := s.beginStream(t, uri)
		defer resp.Body.Close()
		s.cancel()
		// The client reads the rest once the listener refuses: after the
		// shutdown began.
		s.waitRefused(t)
		rest, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("the stream broke during a graceful shutdown: %v", err)
		}
		got := append(head, rest...)
		if !bytes.Equal(got, want) {
			t.Fatalf("the stream read during shutdown differs: %d bytes, want %d", len(got), len(want))
		}
		if err := s.wait(t, time.Minute); err != nil {
			t.Fatalf("serve: %v", err)
		}
		// The stream's request line comes after "shutting down": it was
		// still running when the shutdown began.
		logs := s.logs.String()
		shut := strings.Index(logs, "shutting down")
		streamed := strings.LastIndex(logs, `route=/splits/{token}/rows status=200`)
		if shut < 0 || streamed < shut {
			t.Fatalf("the stream did not span the shutdown:\n%s", logs)
		}
	})

	t.Run("stream past the grace period is cut", func(t *testing.T) {
		s := startServe(t, dir, 100*time.Millisecond)
		uri := s.rowsURI(t, "bench.big")
		want := wantOf(t, uri)

		resp, head := s.beginStream(t, uri)
		defer resp.Body.Close()
		s.cancel()
		s.waitRefused(t)
		// The client reads nothing until the server says the grace
		// period is over.
		waitLogged(t, s.logs, "grace period over")
		rest, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Fatalf("the cut stream ended cleanly after %d of %d bytes: Druid would take it for the whole split",
				len(head)+len(rest), len(want))
		}
		if len(head)+len(rest) >= len(want) {
			t.Fatalf("the whole stream arrived (%d bytes) although the grace period was over", len(want))
		}
		if err := s.wait(t, time.Minute); err != nil {
			t.Fatalf("serve: %v", err)
		}
	})

	t.Run("readiness turns before the listener closes", func(t *testing.T) {
		testReadinessFirst(t, dir, wantOf)
	})
}

// testReadinessFirst is SIGTERM to a sidecar process with --health-addr
// and --shutdown-delay, each step held by what the test observes: /readyz
// turns 503 shutting_down while the main listener still accepts and
// serves; a second SIGTERM ends the delay and the main listener refuses;
// a stream that began before the first signal finishes byte-exact; the
// process exits 0. The delay is longer than the test may run, so that
// only the second signal can end it. wantOf gives the stream's bytes.
func testReadinessFirst(t *testing.T, dir string, wantOf func(*testing.T, string) []byte) {
	r := startReplicaEnv(t, nil, "--warehouse", filepath.Join(dir, "warehouse"),
		"--token-key-file", filepath.Join(dir, "token.key"), "--health-addr", "127.0.0.1:0",
		"--shutdown-delay", "1h", "--shutdown-grace", "2m")
	base, health := "http://"+r.addr, "http://"+r.healthAddr
	p := getPlan(t, base+"/splits?mode=rows&table=bench.big")
	if len(p.InputSource.URIs) != 1 {
		t.Fatalf("bench.big: %d splits, want 1", len(p.InputSource.URIs))
	}
	uri := p.InputSource.URIs[0]
	want := wantOf(t, uri)
	if st, body := fetch(t, health+"/readyz"); st != http.StatusOK {
		t.Fatalf("/readyz before the signal: %d %s", st, body)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, head := beginStream(t, client, uri)
	defer resp.Body.Close()

	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The process logs "not ready" once /readyz has turned.
	waitLogged(t, r.logs, `"msg":"not ready"`)
	if st, body := fetch(t, health+"/readyz"); st != http.StatusServiceUnavailable || !strings.Contains(body, `"shutting_down"`) {
		t.Fatalf("/readyz once the sidecar logged not ready: %d %s, want 503 shutting_down\n%s", st, body, tail(r.logs.String()))
	}
	// Not ready, and still serving: a load balancer that polls /readyz
	// takes the replica out before it refuses anything.
	if st, body := fetch(t, base+"/splits?table=bench.big"); st != http.StatusOK {
		t.Fatalf("a plan on the main listener once /readyz is 503, within --shutdown-delay: %d %s", st, body)
	}

	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitRefused(t, r.addr)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the stream broke during the shutdown: %v", err)
	}
	if got := append(head, rest...); !bytes.Equal(got, want) {
		t.Fatalf("the stream read during the shutdown differs: %d bytes, want %d", len(got), len(want))
	}
	select {
	case err := <-r.exited:
		if err != nil {
			t.Fatalf("the sidecar exited with %v, want 0\n%s", err, tail(r.logs.String()))
		}
	case <-time.After(time.Minute):
		t.Fatalf("the sidecar did not exit within a minute of the second signal\n%s", tail(r.logs.String()))
	}
	// The log says the same order.
	logs := r.logs.String()
	order := []string{`"msg":"shutting down"`, `"msg":"not ready"`, `"msg":"second signal: shutdown delay ended"`}
	at := 0
	for _, m := range order {
		i := strings.Index(logs[at:], m)
		if i < 0 {
			t.Fatalf("the log does not say %s after %v in order:\n%s", m, order, tail(logs))
		}
		at += i
	}
}

// waitLogged waits, up to a minute, until logs holds s.
func waitLogged(t *testing.T, logs *testlog.Buffer, s string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := logs.Await(ctx, func(l string) bool { return strings.Contains(l, s) }); err != nil {
		t.Fatalf("no log line says %q: %v\n%s", s, err, tail(logs.String()))
	}
}

// served is one `sidecar serve` running in the test.
type served struct {
	base   string
	addr   string
	cancel context.CancelFunc
	done   chan error
	logs   *testlog.Buffer
	client *http.Client
}

// writeBigTable writes bench.big, one Snappy-compressed data file of rows
// rows with the given fractions of positional and equality deletes, into
// the local warehouse in dir.
func writeBigTable(t *testing.T, dir string, rows int, pos, eq float64) {
	t.Helper()
	cat, err := hadoop.NewCatalog("sidecar", filepath.Join(dir, "warehouse"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if _, err := tablegen.Bench(context.Background(), catalogtest.SnappyWrites(cat), table.Identifier{"bench", "big"}, rows, 1, pos, eq); err != nil {
		t.Fatalf("write the bench table: %v", err)
	}
}

// startServe runs serve on the warehouse in dir with grace as
// --shutdown-grace.
func startServe(t *testing.T, dir string, grace time.Duration) *served {
	t.Helper()
	s, _ := startServeWith(t, dir, func(c *config) { c.ShutdownGrace = grace })
	return s
}

// startServeArgs runs serve in the test with the flags args and the
// configuration they give changed by change (when not nil), and returns
// once it listens. It is stopped, if the test did not stop it, when the
// test ends.
func startServeArgs(t *testing.T, args []string, change func(*config)) (*served, config) {
	t.Helper()
	cfg, err := parseServe(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{cancel: cancel, done: make(chan error, 1), logs: &testlog.Buffer{},
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	ready := make(chan string, 1)
	go func() { s.done <- serve(ctx, cfg, s.logs, ready) }()
	t.Cleanup(func() {
		cancel()
		_ = s.wait(t, time.Minute)
	})
	select {
	case s.addr = <-ready:
	case err := <-s.done:
		t.Fatalf("serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("server did not start")
	}
	s.base = "http://" + s.addr
	return s, cfg
}

func (s *served) rowsURI(t *testing.T, table string) string {
	t.Helper()
	p := getPlan(t, s.base+"/splits?mode=rows&table="+table)
	if len(p.InputSource.URIs) != 1 {
		t.Fatalf("%s: %d splits, want 1", table, len(p.InputSource.URIs))
	}
	return p.InputSource.URIs[0]
}

// beginStream starts reading uri and returns after the first 64 KiB.
func (s *served) beginStream(t *testing.T, uri string) (*http.Response, []byte) {
	t.Helper()
	return beginStream(t, s.client, uri)
}

// beginStream starts reading uri with client and returns after the first
// 64 KiB.
func beginStream(t *testing.T, client *http.Client, uri string) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET %s: %d", uri, resp.StatusCode)
	}
	head := make([]byte, 64<<10)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		resp.Body.Close()
		t.Fatalf("read the start of the stream: %v", err)
	}
	return resp, head
}

// waitRefused waits until the server no longer accepts connections.
func (s *served) waitRefused(t *testing.T) {
	t.Helper()
	waitRefused(t, s.addr)
}

// waitRefused waits, up to 10 s, until addr no longer accepts
// connections: a poll, since net/http's Shutdown closes the listener
// without a word to anyone until the connections have drained.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	testenv.Poll(t, 10*time.Second, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return nil
		}
		c.Close()
		return errors.New("the server still accepts connections after the shutdown began")
	})
}

// stop cancels serve's context, as SIGTERM does, and fails t unless serve
// returns nil within a minute.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	if err := s.wait(t, time.Minute); err != nil {
		t.Fatalf("serve after the shutdown: %v", err)
	}
}

// wait returns serve's result once it returned.
func (s *served) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err, ok := <-s.done:
		if !ok {
			return nil
		}
		close(s.done)
		return err
	case <-time.After(d):
		return errors.New("serve did not return")
	}
}
