package storage

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"syscall"

	"gocloud.dev/gcerrors"
)

// deniedCodes are the S3 error codes of refused credentials.
var deniedCodes = []string{"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
	"InvalidToken", "TokenRefreshRequired", "AuthorizationHeaderMalformed", "Forbidden"}

// IsDenied reports errors of an object store that refused the credentials
// (HTTP 401 or 403, or S3's codes for it): no retry cures them.
func IsDenied(err error) bool {
	if IsNetwork(err) {
		return false
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && (status.HTTPStatusCode() == http.StatusUnauthorized || status.HTTPStatusCode() == http.StatusForbidden) {
		return true
	}
	var api interface{ ErrorCode() string }
	if errors.As(err, &api) && slices.Contains(deniedCodes, api.ErrorCode()) {
		return true
	}
	return gcerrors.Code(err) == gcerrors.PermissionDenied
}

// IsTransient reports errors that a retry may cure: the network, refused or
// reset connections, timeouts, and any failed HTTP exchange. Planning and
// reading map them to 503 with Retry-After; anything else is not worth a
// client's retry.
func IsTransient(err error) bool {
	var urlErr *url.Error
	return IsNetwork(err) || errors.As(err, &urlErr)
}

// IsNetwork reports errors caused by the network itself: a refused or reset
// connection, a failed lookup, a timeout. A refusal of credentials that
// could not even be sent is one of these, not a refusal.
func IsNetwork(err error) bool {
	// Not net.Error: syscall.Errno satisfies it, so every missing file
	// would look like a network problem.
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}
