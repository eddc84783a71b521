package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testnet"
)

// TestConnectionFlood: connections had no cap, and idle keep-alives lived
// for two minutes, so about 20,000 of them (the open-file limit there) made
// accept fail with "too many open files", and /healthz timed out: an
// orchestrator would restart a healthy replica. The sidecar now holds at
// most --max-connections (by default three quarters of its open-file
// limit), closes the longest idle ones to make room, refuses a new one with
// a 503 only when every one is busy, and answers /healthz and /readyz on a
// listener of its own. The flood is scaled to the open-file limit: the
// sidecar runs as a process whose limit is a quarter of this one's (at most
// 512: past a limit is past it, and every connection the flood opens costs
// both processes a request; with a smaller limit, the default cap and the
// health listener's 64 connections would no longer fit below it), and the
// flood opens a quarter more connections than that.
func TestConnectionFlood(t *testing.T) {
	t.Parallel()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	limit := min(rl.Cur/4, 512)
	if limit < 128 {
		t.Fatalf("this process may open %d files: too few to flood a sidecar with a quarter of them", rl.Cur)
	}
	dir := t.TempDir()
	r := startReplicaEnv(t, []string{fmt.Sprintf("%s=%d", asSidecarOpenFiles, limit)},
		"--demo", "--warehouse", filepath.Join(dir, "warehouse"), "--token-key-file", filepath.Join(dir, "token.key"),
		"--health-addr", "127.0.0.1:0")
	if r.healthAddr == "" {
		t.Fatalf("no health listener:\n%s", r.logs.String())
	}
	capped := int(limit * 3 / 4)
	flood := int(limit + limit/4)

	t.Run("idle connections past the open-file limit", func(t *testing.T) {
		// Each connection asks once and stays open, kept alive.
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for i := range flood {
			c, err := net.DialTimeout("tcp", r.addr, 10*time.Second)
			if err != nil {
				t.Fatalf("connection %d of %d: %v", i+1, flood, err)
			}
			conns = append(conns, c)
			if st, err := ask(c, bufio.NewReader(c), "GET /healthz HTTP/1.1\r\nHost: sidecar\r\n\r\n"); err != nil || st != http.StatusOK {
				t.Fatalf("/healthz on connection %d of %d, with a limit of %d open files: %d %v\n%s",
					i+1, flood, limit, st, err, tail(r.logs.String()))
			}
		}
		// Beside them, the main listener plans and the health listener answers.
		for _, u := range []string{"http://" + r.addr + "/splits?table=demo.orders", "http://" + r.healthAddr + "/readyz"} {
			if st, body := fetch(t, u); st != http.StatusOK {
				t.Fatalf("%s beside %d idle connections: %d %s", u, flood, st, body)
			}
		}
		if shed := scrapeValue(t, "http://"+r.healthAddr+"/metrics", "sidecar_http_connections_shed_total"); shed < float64(flood-capped) {
			t.Errorf("%v idle connections shed, want at least the %d past the cap of %d", shed, flood-capped, capped)
		}
	})

	t.Run("busy connections past the cap", func(t *testing.T) {
		// Each connection sends a POST header and holds its body back:
		// the handler waits for it (up to the body deadline), so the
		// connection is busy and cannot be shed.
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		busy := func() {
			t.Helper()
			c, err := net.DialTimeout("tcp", r.addr, 10*time.Second)
			if err != nil {
				t.Fatalf("busy connection %d: %v", len(conns)+1, err)
			}
			conns = append(conns, c)
			if _, err := io.WriteString(c, "POST /splits HTTP/1.1\r\nHost: sidecar\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
		}
		for range capped {
			busy()
		}
		// Near the cap, a new connection is admitted by shedding one the
		// server has not read a byte of yet (some of the busy ones, while
		// they are that new): one more busy connection a round, until a
		// new connection finds every one busy and is refused at once, with
		// a 503 the client can read. The body deadline (10 s) frees the
		// busy ones later.
		deadline := time.Now().Add(time.Minute)
		for {
			c, err := net.DialTimeout("tcp", r.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			st, err := ask(c, bufio.NewReader(c), "GET /healthz HTTP/1.1\r\nHost: sidecar\r\n\r\n")
			c.Close()
			if err == nil && st == http.StatusServiceUnavailable {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the main listener with %d busy connections: %d %v, want 503", capped, st, err)
			}
			busy()
		}
		// The health listener answers all along.
		for _, u := range []string{"http://" + r.healthAddr + "/healthz", "http://" + r.healthAddr + "/readyz"} {
			if st, body := fetch(t, u); st != http.StatusOK {
				t.Fatalf("%s beside %d busy connections: %d %s", u, capped, st, body)
			}
		}
	})
	if logs := r.logs.String(); strings.Contains(logs, "too many open files") {
		t.Errorf("the sidecar ran out of file descriptors:\n%s", tail(logs))
	}
}

// ask sends a request on c and reads the answer's status; c stays open.
func ask(c net.Conn, br *bufio.Reader, request string) (int, error) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := testnet.Ask(c, br, request)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// fetch GETs u on a connection of its own.
func fetch(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// scrapeValue is the value of an unlabelled series in a /metrics answer.
func scrapeValue(t *testing.T, u, name string) float64 {
	t.Helper()
	st, body := fetch(t, u)
	if st != http.StatusOK {
		t.Fatalf("%s: %d", u, st)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			return f
		}
	}
	t.Fatalf("%s has no %s", u, name)
	return 0
}

// tail is the end of a log, for a failure message.
func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
