package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/internal/testnet"
)

func TestIsTransient(t *testing.T) {
	_, missing := os.Open(filepath.Join(t.TempDir(), "nope"))
	_, refused := net.Dial("tcp", testnet.FreeAddr(t))
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

type httpStatusErr int

func (e httpStatusErr) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e httpStatusErr) HTTPStatusCode() int { return int(e) }

type apiCodeErr string

func (e apiCodeErr) Error() string     { return string(e) }
func (e apiCodeErr) ErrorCode() string { return string(e) }

// TestClassify: refused credentials are told apart from the network
// failures that kept them from being sent.
func TestClassify(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://s3", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name                       string
		err                        error
		denied, network, transient bool
	}{
		{"403", fmt.Errorf("open: %w", httpStatusErr(403)), true, false, false},
		{"401", httpStatusErr(401), true, false, false},
		{"404", httpStatusErr(404), false, false, false},
		{"signature", fmt.Errorf("get: %w", apiCodeErr("SignatureDoesNotMatch")), true, false, false},
		{"no such key", apiCodeErr("NoSuchKey"), false, false, false},
		{"refused connection", refused, false, true, true},
		{"a 403 that never left", fmt.Errorf("%w: %w", httpStatusErr(403), refused), false, true, true},
		{"failed HTTP exchange", &url.Error{Op: "Get", URL: "http://s3", Err: errors.New("EOF")}, false, false, true},
		{"missing file", fmt.Errorf("open: %w", syscall.ENOENT), false, false, false},
	}
	for _, tc := range tests {
		if got := IsDenied(tc.err); got != tc.denied {
			t.Errorf("%s: IsDenied %v", tc.name, got)
		}
		if got := IsNetwork(tc.err); got != tc.network {
			t.Errorf("%s: IsNetwork %v", tc.name, got)
		}
		if got := IsTransient(tc.err); got != tc.transient {
			t.Errorf("%s: IsTransient %v", tc.name, got)
		}
	}
}

// TestNoCredentialsIsDenied: a store request that found no credentials to
// sign with (nothing vended, none configured) is a refusal of the
// configuration, not an internal error.
func TestNoCredentialsIsDenied(t *testing.T) {
	err := errors.New(`operation error S3: GetObject, get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found`)
	if got := classify("lake", "open s3://b/k", err); !errors.Is(got, fault.ErrDenied) {
		t.Fatalf("no credentials: %v, want ErrDenied", got)
	}
	if got := classify("lake", "open s3://b/k", errors.New("some other failure")); errors.Is(got, fault.ErrDenied) {
		t.Fatalf("another failure: %v, is ErrDenied", got)
	}
}
