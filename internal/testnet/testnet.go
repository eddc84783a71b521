// Package testnet gives tests loopback addresses to point a client or a
// server at: one where nothing listens, and one where a peer accepts
// connections and never answers; and Ask, a request sent over a raw
// connection whose every byte the test controls. Only tests import it.
package testnet

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

// FreeAddr returns a 127.0.0.1 address nothing listens on: a port the
// kernel has just handed out and taken back, for a server the test starts
// or for a connection that must be refused.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// SilentAddr returns a 127.0.0.1 address whose listener accepts every
// connection and never reads or answers: a peer that hangs, such as a
// catalog that stopped responding. The listener and its connections are
// closed when the test ends.
func SilentAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn // the accepting goroutine's until done is closed
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Ask sends request, a whole HTTP/1.1 request, on c and reads the answer
// through br (a reader of c, which a later Ask on c must share), its body
// read whole and closed. The connection stays open; the caller sets its
// deadlines.
func Ask(c net.Conn, br *bufio.Reader, request string) (*http.Response, error) {
	if _, err := io.WriteString(c, request); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}
