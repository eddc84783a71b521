package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestIsTransient(t *testing.T) {
	_, missing := os.Open(filepath.Join(t.TempDir(), "nope"))
	_, refused := net.Dial("tcp", closedAddr(t))
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"missing file", missing, false},
		{"wrapped missing file", fmt.Errorf("open data file: %w", missing), false},
		{"not exist sentinel", fs.ErrNotExist, false},
		{"connection refused", refused, true},
		{"deadline", fmt.Errorf("load: %w", context.DeadlineExceeded), true},
		{"plain error", errors.New("boom"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("the test case produced no error")
			}
			if got := IsTransient(tc.err); got != tc.want {
				t.Fatalf("IsTransient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
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
