package testnet_test

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/druidiceberg/sidecar/internal/testnet"
)

func TestFreeAddrRefuses(t *testing.T) {
	_, err := net.DialTimeout("tcp", testnet.FreeAddr(t), 5*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial a free address: %v, want connection refused", err)
	}
}

func TestSilentAddrHangs(t *testing.T) {
	c, err := net.DialTimeout("tcp", testnet.SilentAddr(t), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read from a silent peer: %d bytes, %v; want the deadline to pass", n, err)
	}
}
