package sidecartest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// LoadTarget is a URI path a load test reads, with its reference bytes.
type LoadTarget struct {
	Path string
	Want []byte
}

// Comparer checks what is written to it against Want, in order: Off is how
// much was written, Differ whether any of it differed or went past Want;
// Counted, when set, is told how much each write held.
type Comparer struct {
	Want    []byte
	Off     int
	Differ  bool
	Counted func(int)
}

func (c *Comparer) Write(p []byte) (int, error) {
	if c.Counted != nil {
		c.Counted(len(p))
	}
	if c.Off+len(p) > len(c.Want) || !bytes.Equal(p, c.Want[c.Off:c.Off+len(p)]) {
		c.Differ = true
	}
	c.Off += len(p)
	return len(p), nil
}

// Attack is one hostile client's request, repeated for as long as a load
// runs: Run sends it once and returns the status, which must be one of
// Want.
type Attack struct {
	Name string
	Want []int
	Run  func() (int, error)
}

// Attacks are hostile clients that need nothing but a server of the
// tables load.t and load.wide (or none: every attack is refused before it
// plans), each a replay of a TestHostile* attack of handlers with its
// payload built once: filters nested and wide, trickled bodies, 900 KB
// values, names that are not names, too many include intervals. done
// closes their idle connections.
func Attacks(srv *Server) (_ []Attack, done func()) {
	// Their own connections, so that the Druid-like clients' pool is not
	// taken, nor shared with connections the server closes.
	transport := &http.Transport{}
	c := &http.Client{Transport: transport}
	get := AttackGetter(srv, c)
	post := func(body string) func() (int, error) {
		return func() (int, error) {
			resp, err := c.Post(srv.URL+"/splits", "application/json", strings.NewReader(body))
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			_, err = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, err
		}
	}
	trickle := func() (int, error) {
		// A POST /splits body a byte every 50 ms: the server answers 408
		// once the body deadline passes. The ticker's period is the
		// attack: a client that sends its body slower than the deadline.
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		body := `{"type":"iceberg","namespace":"load","tableName":"t"}`
		if _, err := fmt.Fprintf(conn, "POST /splits HTTP/1.1\r\nHost: sidecar\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)); err != nil {
			return 0, err
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for i := 0; i < len(body)-1; i++ {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				if _, err := conn.Write([]byte{body[i]}); err != nil {
					return
				}
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	big := strings.Repeat("x", 900_000)
	return []Attack{
		{"nested filter", []int{http.StatusBadRequest}, get("/splits?" + Q("table", "load.t", "icebergFilter", NestedNot(2000)).Encode())},
		{"wide filter", []int{http.StatusBadRequest}, post(`{"namespace":"load","tableName":"t","icebergFilter":` + WideOr(1000) + `}`)},
		{"trickled body", []int{http.StatusRequestTimeout}, trickle},
		{"trickled body 2", []int{http.StatusRequestTimeout}, trickle},
		{"900 KB value", []int{http.StatusBadRequest}, get("/splits?table=load.t&mode=" + big)},
		{"name with a NUL", []int{http.StatusBadRequest}, get("/splits?" + Q("table", "load.t\x00").Encode())},
		{"1001 include intervals", []int{http.StatusBadRequest}, get("/changes?" + Q("table", "load.t", "timeColumn", "ts",
			"include", strings.TrimSuffix(strings.Repeat("2024-01-01/2024-01-02,", 1001), ",")).Encode())},
	}, transport.CloseIdleConnections
}

// AttackGetter makes attacks that GET a path of srv with c, with the
// headers given as name, value pairs (Host sets the request's host).
func AttackGetter(srv *Server, c *http.Client) func(path string, header ...string) func() (int, error) {
	return func(path string, header ...string) func() (int, error) {
		return func() (int, error) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			if err != nil {
				return 0, err
			}
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			if req.Header.Get("Host") != "" {
				req.Host = req.Header.Get("Host")
			}
			return StatusOf(c, req)
		}
	}
}

// StatusOf sends req with c and reads the answer whole: its status.
func StatusOf(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// NestedNot is a filter of depth `not`s around one equals on demo.orders.
func NestedNot(depth int) string {
	return strings.Repeat(`{"type":"not","filter":`, depth) +
		`{"type":"equals","filterColumn":"status","filterValue":"x"}` + strings.Repeat("}", depth)
}

// WideOr is an or of width equals filters on demo.orders.
func WideOr(width int) string {
	parts := make([]string, width)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"type":"equals","filterColumn":"status","filterValue":"s%d"}`, i)
	}
	return `{"type":"or","filters":[` + strings.Join(parts, ",") + `]}`
}

// SmallBuffers wraps a listener so that every connection it accepts (from
// the address Only, when set) has a send buffer of a few KiB: a client that
// stops reading blocks the server's writes after that much, not after the
// megabytes Linux's buffer autotuning allows, so attacks need answers of a
// few MB.
type SmallBuffers struct {
	net.Listener
	Only net.IP
}

func (l SmallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		if a, ok := tc.RemoteAddr().(*net.TCPAddr); ok && (l.Only == nil || a.IP.Equal(l.Only)) {
			_ = tc.SetWriteBuffer(4 << 10)
		}
	}
	return c, err
}

// DialNonReader sends one GET for path to addr, with the headers given as
// name, value pairs, on a connection of its own from the address from
// (nil: any), whose receive buffer is a few KiB, reads the answer's head
// and then nothing: the server's writes of the body block once the buffers
// between are full. Its body, read later, tells whether and how the server
// ended it. The caller closes the connection, returned whenever it was
// opened.
func DialNonReader(addr, path string, from net.IP, header ...string) (*http.Response, net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return errors.Join(err, serr)
	}}
	if from != nil {
		d.LocalAddr = &net.TCPAddr{IP: from}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	var head strings.Builder
	fmt.Fprintf(&head, "GET %s HTTP/1.1\r\nHost: sidecar\r\n", path)
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&head, "%s: %s\r\n", header[i], header[i+1])
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(c, head.String()); err != nil {
		return nil, c, err
	}
	// The head only: a bufio.Reader of its smallest size holds a few
	// bytes of the body at most.
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
	if err != nil {
		return nil, c, fmt.Errorf("GET %s: %w", path, err)
	}
	return resp, c, nil
}
