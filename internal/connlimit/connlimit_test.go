package connlimit_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/connlimit"
	"github.com/druidiceberg/sidecar/internal/testnet"
)

// capped serves a small answer on a real listener capped at limit and
// returns its address and the listener; shed and refused count what it did.
// Each request for /busy gets its answer once the test ends, and sends on
// busy when its handler starts: net/http has then read its request and
// told the listener the connection is active.
func capped(t *testing.T, limit int, shed, refused *atomic.Int64) (addr string, ln *connlimit.Listener, busy <-chan struct{}) {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = connlimit.New(tcp, limit, connlimit.Hooks{
		Shed: func() { shed.Add(1) },
		Refused: func(c net.Conn) {
			refused.Add(1)
			_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		},
	})
	release := make(chan struct{})
	started := make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/busy" {
				select {
				case started <- struct{}{}:
				case <-release:
				}
				<-release
			}
			_, _ = io.WriteString(w, "ok\n")
		}),
		ConnState: ln.ConnState,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		close(release)
		_ = srv.Close()
	})
	return tcp.Addr().String(), ln, started
}

// request sends one GET on c and reads the answer; the connection stays
// open (kept alive).
func request(t *testing.T, c net.Conn, br *bufio.Reader) int {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := testnet.Ask(c, br, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reports whether the server closed c: a read gets EOF or
// a reset, within d.
func closedByServer(c net.Conn, br *bufio.Reader, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestIdleShedFirst: with every connection idle (kept alive after a
// request), a new one is admitted by closing the longest idle one; the
// count never passes the cap, and nothing is refused.
func TestIdleShedFirst(t *testing.T) {
	const limit = 8
	var shed, refused atomic.Int64
	addr, ln, _ := capped(t, limit, &shed, &refused)
	type kept struct {
		c  net.Conn
		br *bufio.Reader
	}
	var conns []kept
	for i := range 3 * limit {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		if st := request(t, c, br); st != http.StatusOK {
			t.Fatalf("connection %d: %d", i, st)
		}
		conns = append(conns, kept{c, br})
		if n := ln.Open(); n > limit {
			t.Fatalf("%d connections open, cap %d", n, limit)
		}
	}
	if refused.Load() != 0 || shed.Load() == 0 {
		t.Fatalf("%d refused, %d shed; want none refused, idle ones shed", refused.Load(), shed.Load())
	}
	// The first connections, idle longest, were the ones closed.
	if !closedByServer(conns[0].c, conns[0].br, 10*time.Second) {
		t.Errorf("the connection idle longest is still open")
	}
	last := conns[len(conns)-1]
	if st := request(t, last.c, last.br); st != http.StatusOK {
		t.Errorf("the newest connection, reused: %d", st)
	}
}

// TestBusyRefused: with every connection in the middle of a request (its
// handler running), nothing can be shed and a new connection is refused:
// answered by the Refused hook and closed. A connection whose request
// header is still arriving is not busy yet (net/http counts it new or
// idle), so connections that trickle their headers are shed like idle
// ones.
func TestBusyRefused(t *testing.T) {
	const limit = 4
	var shed, refused atomic.Int64
	addr, ln, busy := capped(t, limit, &shed, &refused)
	for range limit {
		c := dial(t, addr)
		if _, err := io.WriteString(c, "GET /busy HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	// Busy once their handlers run.
	timeout := time.After(10 * time.Second)
	for i := range limit {
		select {
		case <-busy:
		case <-timeout:
			t.Fatalf("%d of %d handlers started in 10 s", i, limit)
		}
	}
	if ln.Open() != limit || ln.Idle() != 0 {
		t.Fatalf("%d connections open, %d idle; want %d busy", ln.Open(), ln.Idle(), limit)
	}
	c := dial(t, addr)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a connection beyond %d busy ones: %v, want the Refused hook's 503", limit, fmt.Sprint(resp, err))
	}
	if !closedByServer(c, bufio.NewReader(c), 10*time.Second) {
		t.Errorf("the refused connection is still open")
	}
	if refused.Load() == 0 || ln.Open() > limit {
		t.Fatalf("%d refused, %d open; want a refusal and at most %d open", refused.Load(), ln.Open(), limit)
	}
}
