package handlers_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/handlers"
)

// firstAnswer is a listener that tells, on done, when the first connection
// it accepted has finished its first request (left StateActive, for idle or
// closed), and counts the requests that connection began.
type firstAnswer struct {
	net.Listener
	done chan struct{}

	mu     sync.Mutex
	first  net.Conn
	began  int
	closed bool
}

func (l *firstAnswer) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		l.first = c
	}
	if c != l.first {
		return
	}
	switch s {
	case http.StateActive:
		l.began++
	case http.StateIdle, http.StateClosed:
		l.closed = l.closed || s == http.StateClosed
		if l.began == 1 && (s == http.StateClosed || s == http.StateIdle) {
			select {
			case <-l.done:
			default:
				close(l.done)
			}
		}
	}
}

// requests is how many requests the first connection began.
func (l *firstAnswer) requests() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.began
}

// TestHostilePipelinedNonReaders: a planning answer was rendered and its
// slot released before the write, but the connection then read the next
// request the client had pipelined: a client that wrote hundreds of
// planning requests at once and never read kept planning, back to back,
// until the server's send buffer filled (megabytes of answers), and every
// other client met 503 overloaded meanwhile (with --max-plans 1, 40 of 40
// fresh GET /splits refused in 2 ms). A planning answer now closes its
// connection: one request planned per connection, however many were
// pipelined behind it, so a second client's plan succeeds. Every planning
// route is held to it.
func TestHostilePipelinedNonReaders(t *testing.T) {
	t.Parallel()
	spec := `{"type":"iceberg","namespace":"demo","tableName":"orders"}`
	for _, tc := range []struct{ name, request string }{
		{"GET /splits", "GET /splits?table=demo.orders HTTP/1.1\r\nHost: sidecar\r\n\r\n"},
		{"POST /splits", fmt.Sprintf("POST /splits HTTP/1.1\r\nHost: sidecar\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(spec), spec)},
		{"/druid/task", "GET /druid/task?table=demo.orders&dataSource=o&timestampColumn=order_ts HTTP/1.1\r\nHost: sidecar\r\n\r\n"},
		{"/druid/sql", "GET /druid/sql?table=demo.orders&dataSource=o&timestampColumn=order_ts HTTP/1.1\r\nHost: sidecar\r\n\r\n"},
		{"/changes", "GET /changes?table=demo.orders&timeColumn=order_ts HTTP/1.1\r\nHost: sidecar\r\n\r\n"},
		{"the status page", "GET /?table=demo.orders HTTP/1.1\r\nHost: sidecar\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := &firstAnswer{done: make(chan struct{})}
			srv := newDemoServerListening(t, testDeleteCacheSize, func(ln net.Listener) net.Listener { l.Listener = ln; return l },
				func(c *handlers.Config) { c.MaxPlans, c.PlanTimeout = 1, time.Minute })
			c := dialSmallReceiver(t, strings.TrimPrefix(srv.URL, "http://"))
			if _, err := c.Write([]byte(strings.Repeat(tc.request, 300))); err != nil {
				t.Fatal(err)
			}
			select {
			case <-l.done:
			case <-time.After(time.Minute):
				t.Fatal("the non-reader's first request was not answered within a minute")
			}
			for i := range 20 {
				if resp, body := srv.get(t, "/splits?table=demo.orders"); resp.StatusCode != http.StatusOK {
					t.Fatalf("fresh GET /splits %d beside a client that pipelined 300 %s and never reads: %d %.200s "+
						"(the non-reader's connection began %d requests)", i, tc.name, resp.StatusCode, body, l.requests())
				}
			}
			if n := metricValue(t, srv, "sidecar_admission_rejected_total", "kind", "plan"); n != 0 {
				t.Errorf("sidecar_admission_rejected_total{kind=\"plan\"} %v, want 0: nobody was refused a slot", n)
			}
			if n := l.requests(); n != 1 {
				t.Errorf("the non-reader's connection began %d requests, want 1: a planning answer closes its connection", n)
			}
		})
	}
}

// dialSmallReceiver opens a connection whose receive buffer is a few KiB;
// the caller writes on it and never reads.
func dialSmallReceiver(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return errors.Join(err, serr)
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
