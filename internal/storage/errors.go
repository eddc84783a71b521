package storage

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
)

// IsTransient reports errors that a retry may cure: the network, refused or
// reset connections, timeouts. Planning and reading map them to 503 with
// Retry-After; anything else is not worth a client's retry.
func IsTransient(err error) bool {
	// Not net.Error: syscall.Errno satisfies it, so every missing file
	// would look like a network problem.
	var opErr *net.OpError
	var dnsErr *net.DNSError
	var urlErr *url.Error
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.As(err, &urlErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}
