package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testnet"
)

// limitsRows is the size of the table the limit tests stream: each stream
// is about a megabyte of NDJSON, many times what a connection's socket
// buffers hold (the server's send buffer is testSendBuffer, the stalled
// client's receive buffer as small), so a stream whose client stops
// reading stays open and holds its slot. The test checks that margin. It
// is also twice what the slow reader reads slowly (4 KiB a tick for two
// seconds). Each of the 64 stalled streams decodes its file's pages, so
// more rows cost 64 times over.
const limitsRows = 5_000

// testSendBuffer is the send buffer of the connections the limit and
// shutdown tests' servers accept (config.sendBuffer): with the kernel's,
// which grows to megabytes, each stalled stream would encode megabytes of
// rows into it before it stalls.
const testSendBuffer = 16 << 10

// TestLimits holds `sidecar serve`, as main wires it (http.Server, router,
// admission), to the limits docs/security.md promises, over real connections:
// with the default --max-streams the 65th concurrent stream is answered 503
// with Retry-After while 64 are open; a client that sends no header, or
// sends it byte by byte, is disconnected, and so is an idle keep-alive
// connection; POST bodies sent byte by byte take no planning slot and end
// in 408; a slow but live reader of a row stream is not cut; a POST
// body over the limit is 413.
func TestLimits(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "holds 64 row streams open and waits out the slow-client timeouts")
	dir := t.TempDir()
	writeBigTable(t, dir, limitsRows, 0.01, 0)
	// Short slow-client bounds so that the test waits seconds, not minutes;
	// everything else is the default configuration.
	const headerTimeout, bodyTimeout, idleTimeout = 500 * time.Millisecond, time.Second, time.Second
	s, cfg := startServeWith(t, dir, func(c *config) {
		c.readHeaderTimeout, c.bodyTimeout, c.idleTimeout = headerTimeout, bodyTimeout, idleTimeout
	})
	if cfg.MaxStreams != 64 {
		t.Fatalf("the default --max-streams is %d, want 64", cfg.MaxStreams)
	}
	rowsURI := s.rowsURI(t, "bench.big")
	firstSnapshot := firstSnapshotID(t, filepath.Join(dir, "warehouse"))
	fileURI := getPlan(t, fmt.Sprintf("%s/splits?mode=files&table=bench.big&snapshotId=%d", s.base, firstSnapshot)).InputSource.URIs[0]
	want := getBody(t, rowsURI)
	// The kernel doubles a socket's buffer sizes; a stream many times both
	// buffers together cannot end in them.
	if buffers := 2 * (testSendBuffer + stalledReceiveBuffer); len(want) < 8*buffers {
		t.Fatalf("the stream is %d bytes, want at least 8× the %d bytes of socket buffers", len(want), buffers)
	}

	t.Run("65th stream", func(t *testing.T) {
		// 64 clients that read the answer's head and then stop reading:
		// each holds its slot until its connection closes.
		var open []*http.Response
		defer func() {
			for _, r := range open {
				r.Body.Close()
			}
		}()
		client := stalledClient()
		for i := range 64 {
			resp, err := client.Get(rowsURI)
			if err != nil {
				t.Fatalf("stream %d: %v", i+1, err)
			}
			open = append(open, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("stream %d of 64: %d, want 200", i+1, resp.StatusCode)
			}
		}
		// Raw-file streams share the bound.
		for _, uri := range []string{rowsURI, fileURI} {
			resp, err := client.Get(uri)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), `"overloaded"`) {
				t.Fatalf("the 65th stream: %d (Retry-After %q) %s, want 503 overloaded with Retry-After",
					resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
		}
		// Planning has its own bound and still answers.
		if p := getPlan(t, s.base+"/splits?table=bench.big"); len(p.InputSource.URIs) != 1 {
			t.Fatalf("planning while 64 streams are open: %+v", p)
		}
		// Closing the streams frees the slots: each stream's request line
		// is logged once its handler has returned, past the admission
		// that frees its slot. With the first full read, 65 streams end
		// in all; the two turned away above are logged 503.
		for _, r := range open {
			r.Body.Close()
		}
		open = nil
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		err := s.logs.Await(ctx, func(l string) bool {
			return strings.Count(l, "route=/splits/{token}/rows status=200")+
				strings.Count(l, "route=/splits/{token}/rows status=aborted") >= 65
		})
		if err != nil {
			t.Fatalf("the 64 closed streams did not end: %v", err)
		}
		resp, err := client.Get(rowsURI)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a stream once the 64 have ended: %d, want 200: their slots are free", resp.StatusCode)
		}
	})

	t.Run("silent connection is closed", func(t *testing.T) {
		c := dial(t, s.addr)
		// Sends nothing at all.
		if err := waitClosed(c, 20*headerTimeout); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("header sent byte by byte is cut", func(t *testing.T) {
		c := dial(t, s.addr)
		req := "GET /healthz HTTP/1.1\r\nHost: sidecar\r\nX-Slow: " + strings.Repeat("a", 200) + "\r\n\r\n"
		start := time.Now()
		cut := false
		// The pace is what is under test: a byte every tenth of the
		// header timeout keeps the connection busy, and only the
		// header's own deadline may end it.
		pace := time.NewTicker(headerTimeout / 10)
		defer pace.Stop()
		for i := 0; i < len(req); i++ {
			if _, err := c.Write([]byte{req[i]}); err != nil {
				cut = true
				break
			}
			<-pace.C
			if time.Since(start) > 20*headerTimeout {
				break
			}
		}
		if !cut {
			if err := waitClosed(c, 20*headerTimeout); err != nil {
				t.Fatalf("a header sent one byte every %v for %v: %v", headerTimeout/10, time.Since(start).Round(time.Millisecond), err)
			}
		}
	})

	t.Run("trickled bodies take no planning slot", func(t *testing.T) {
		// More connections than --max-plans, each sending a POST /splits
		// body a byte every 50 ms: planning still answers, and each gets
		// a 408 once its body is overdue, and its connection closed.
		if cfg.MaxPlans != 16 {
			t.Fatalf("the default --max-plans is %d, want 16", cfg.MaxPlans)
		}
		body := `{"type":"iceberg","namespace":"bench","tableName":"big"}`
		var conns []net.Conn
		var readers []*bufio.Reader
		for i := range cfg.MaxPlans + 1 {
			c := dial(t, s.addr)
			conns = append(conns, c)
			br := bufio.NewReader(c)
			readers = append(readers, br)
			// With Expect: 100-continue the server says when the router
			// begins to read the body: from then on the request is the
			// router's, and planning must answer beside it.
			fmt.Fprintf(c, "POST /splits HTTP/1.1\r\nHost: sidecar\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
			_ = c.SetReadDeadline(time.Now().Add(20 * bodyTimeout))
			if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
				t.Fatalf("trickler %d: %q %v, want 100 Continue", i, line, err)
			}
			if line, err := br.ReadString('\n'); err != nil || line != "\r\n" {
				t.Fatalf("trickler %d after its 100 Continue: %q %v", i, line, err)
			}
			go func() {
				// A byte every 50 ms, the pace under test: the body is
				// overdue (bodyTimeout) long before its last byte.
				pace := time.NewTicker(50 * time.Millisecond)
				defer pace.Stop()
				for i := 0; i < len(body)-1; i++ {
					if _, err := c.Write([]byte{body[i]}); err != nil {
						return
					}
					<-pace.C
				}
			}()
		}
		if p := getPlan(t, s.base+"/splits?table=bench.big"); len(p.InputSource.URIs) != 1 {
			t.Fatalf("planning while bodies trickle: %+v", p)
		}
		for i, c := range conns {
			br := readers[i]
			_ = c.SetReadDeadline(time.Now().Add(20 * bodyTimeout))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("trickler %d: %v", i, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("trickler %d: %d, want 408", i, resp.StatusCode)
			}
			if err := waitClosedReader(c, br, 20*bodyTimeout); err != nil {
				t.Fatalf("trickler %d after its 408: %v", i, err)
			}
		}
	})

	t.Run("idle keep-alive connection is closed", func(t *testing.T) {
		c := dial(t, s.addr)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: sidecar\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("/healthz: %d, close=%v; want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
		}
		if err := waitClosedReader(c, br, 20*idleTimeout); err != nil {
			t.Fatalf("idle after a request: %v", err)
		}
	})

	t.Run("slow live reader is not cut", func(t *testing.T) {
		// Reads 4 KiB every 20 ms for twice the longest timeout, so that the
		// server keeps writing into a connection that drains slowly, then
		// the rest at full speed: the whole body, byte for byte.
		resp, err := stalledClient().Get(rowsURI)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got bytes.Buffer
		buf := make([]byte, 4<<10)
		// The pace is what is under test: the reader is slow on purpose,
		// for longer than any of the server's timeouts.
		pace := time.NewTicker(20 * time.Millisecond)
		defer pace.Stop()
		for start := time.Now(); time.Since(start) < 2*max(headerTimeout, idleTimeout); <-pace.C {
			n, err := io.ReadFull(resp.Body, buf)
			got.Write(buf[:n])
			if err != nil {
				t.Fatalf("after %d bytes read slowly: %v", got.Len(), err)
			}
		}
		slow := got.Len()
		if _, err := io.Copy(&got, resp.Body); err != nil {
			t.Fatalf("the stream broke after %d bytes read slowly: %v", slow, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("the slowly read stream differs: %d bytes, want %d", got.Len(), len(want))
		}
		t.Logf("read %d bytes slowly, then the rest: %d bytes, byte-exact", slow, got.Len())
	})

	t.Run("oversized POST body", func(t *testing.T) {
		big := `{"type":"iceberg","namespace":"bench","tableName":"` + strings.Repeat("x", 2<<20) + `"}`
		for _, chunked := range []bool{false, true} {
			var body io.Reader = strings.NewReader(big)
			if chunked {
				// No Content-Length: the limit holds while reading.
				body = io.MultiReader(strings.NewReader(big))
			}
			req, err := http.NewRequest(http.MethodPost, s.base+"/splits", body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			// Over a connection of its own, the answer read while the body
			// is still being sent: the server answers 413 and closes
			// without reading the rest, so a client that only reads once
			// it has sent everything (Go's, on a loaded machine) may see
			// the reset of its write instead of the answer.
			conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			go req.Write(conn) // fails once the server stops reading at its limit
			resp, err := http.ReadResponse(bufio.NewReader(conn), req)
			if err != nil {
				conn.Close()
				t.Fatalf("chunked=%v: %v", chunked, err)
			}
			answer, _ := io.ReadAll(resp.Body)
			conn.Close()
			resp.Body.Close()
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			_ = json.Unmarshal(answer, &e)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Code != "too_large" {
				t.Fatalf("a %d-byte body (chunked=%v): %d %s, want 413 too_large", len(big), chunked, resp.StatusCode, answer)
			}
		}
	})
}

// startServeWith runs serve on the warehouse in dir with the default
// configuration changed by change.
func startServeWith(t *testing.T, dir string, change func(*config)) (*served, config) {
	t.Helper()
	return startServeArgs(t, []string{
		"--addr", "127.0.0.1:0",
		"--warehouse", filepath.Join(dir, "warehouse"),
		"--token-key-file", filepath.Join(dir, "token.key"),
		"--shutdown-grace", "1s",
	}, func(c *config) {
		c.sendBuffer = testSendBuffer
		if change != nil {
			change(c)
		}
	})
}

// stalledReceiveBuffer is the receive buffer of stalledClient's
// connections.
const stalledReceiveBuffer = 16 << 10

// stalledClient opens a new connection per request with a small receive
// buffer, so that a response it stops reading fills the connection soon.
func stalledClient() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledReceiveBuffer)
		})
		return errors.Join(err, serr)
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClosed waits until the server closes c, reading (and discarding) what
// it sends, for at most d.
func waitClosed(c net.Conn, d time.Duration) error {
	return waitClosedReader(c, c, d)
}

func waitClosedReader(c net.Conn, r io.Reader, d time.Duration) error {
	if err := c.SetReadDeadline(time.Now().Add(d)); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the server kept the connection open for %v", d)
	}
	return nil // EOF or reset: closed by the server
}

// firstSnapshotID is the first snapshot of bench.big, before its deletes:
// a plan of it is on the raw-file path.
func firstSnapshotID(t *testing.T, warehouse string) int64 {
	t.Helper()
	cat, err := hadoop.NewCatalog("sidecar", warehouse, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"bench", "big"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Metadata().Snapshots()[0].SnapshotID
}

// TestServeBesideAHangingCatalog: a REST catalog that accepts connections
// and never answers kept serve from ever listening, and would have held a
// planning slot for as long as a client waited. serve listens once its
// start-up check gives up, /healthz answers, and a plan ends in 503
// plan_timeout.
func TestServeBesideAHangingCatalog(t *testing.T) {
	t.Parallel()
	hanging := testnet.SilentAddr(t)
	var ahead atomic.Int64
	s, _ := startServeWith(t, t.TempDir(), func(c *config) {
		c.Catalogs = []sidecatalog.Config{{Type: "rest", Name: "lake", URI: "http://" + hanging}}
		c.startupPing, c.PlanTimeout = 200*time.Millisecond, 300*time.Millisecond
		// The catalogs' clock stands still until the test moves it.
		start := time.Now()
		c.clock = func() time.Time { return start.Add(time.Duration(ahead.Load())) }
	})
	if body := getBody(t, s.base+"/healthz"); string(body) != "ok\n" {
		t.Fatalf("/healthz: %q", body)
	}
	// Within the catalog's retry interval (2 s on its clock) its failed
	// start-up check is remembered: a plan is 503 unavailable at once.
	resp, err := s.client.Get(s.base + "/splits?table=demo.orders")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"unavailable"`) {
		t.Fatalf("a plan within the retry interval: %d %s, want 503 unavailable", resp.StatusCode, body)
	}
	// Past it (the catalogs' clock moved on a minute), a plan connects
	// again and waits for the catalog until its deadline.
	ahead.Store(int64(time.Minute))
	resp, err = s.client.Get(s.base + "/splits?table=demo.orders")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"plan_timeout"`) {
		t.Fatalf("a plan against the hanging catalog: %d %s, want 503 plan_timeout", resp.StatusCode, body)
	}
}
