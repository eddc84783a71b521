package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/druidiceberg/sidecar/internal/fault"
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
	if s := httpStatus(err); s == http.StatusUnauthorized || s == http.StatusForbidden {
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

// classifyLoadError maps a catalog's table-load error onto the sentinels;
// the message names the catalog, so that an operator with several knows
// which one failed.
func classifyLoadError(catalogName string, ident table.Identifier, err error) error {
	name := strings.Join(ident, ".")
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable), errors.Is(err, catalog.ErrNoSuchNamespace):
		return fmt.Errorf("%w: %s in catalog %q", fault.ErrTableNotFound, name, catalogName)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s: metadata file missing: %w", fault.ErrTableNotFound, name, err)
	}
	return classify(catalogName, "load table "+name, err)
}

// classify maps an error of the catalog or its storage onto the sentinels:
// refused credentials are fault.ErrDenied; a network failure, a server
// error (5xx) or credentials that could not be renewed fault.ErrUnavailable;
// any other error answer of a REST catalog fault.ErrUpstream. An error
// already classified keeps its class; a missing file stays fs.ErrNotExist.
func classify(catalogName, doing string, err error) error {
	var kind error
	switch {
	case errors.Is(err, fault.ErrDenied), errors.Is(err, fault.ErrUnavailable), errors.Is(err, fault.ErrUpstream),
		errors.Is(err, fault.ErrForbiddenLocation), errors.Is(err, fault.ErrUnsupported):
	case deniedByCatalog(err) || IsDenied(err) || noCredentials(err):
		kind = fault.ErrDenied
	case IsTransient(err), errors.Is(err, rest.ErrVendedCredentialsExpired), errors.Is(err, rest.ErrServiceUnavailable),
		errors.Is(err, rest.ErrServerError), httpStatus(err) >= http.StatusInternalServerError:
		kind = fault.ErrUnavailable
	case errors.Is(err, rest.ErrRESTError):
		kind = fault.ErrUpstream
	}
	if kind == nil {
		return fmt.Errorf("%s in catalog %q: %w", doing, catalogName, err)
	}
	return fmt.Errorf("%w: %s in catalog %q: %w", kind, doing, catalogName, err)
}

// noCredentials reports a store request that found no credentials to
// sign with: the catalog vended none for the table and the catalog's
// properties and the AWS SDK's chain hold none. The SDK reports it in
// words only (smithy's "get identity", the credentials cache's "failed
// to refresh cached credentials"), matched here by them.
func noCredentials(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "get identity: get credentials") || strings.Contains(msg, "failed to retrieve credentials") ||
		strings.Contains(msg, "failed to refresh cached credentials")
}

// httpStatus is the HTTP status an error of an SDK carries (the S3 SDK's
// do), 0 when none.
func httpStatus(err error) int {
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		return status.HTTPStatusCode()
	}
	return 0
}

// oauthRefusals are the error codes of an OAuth2 token endpoint that
// refused the client (RFC 6749 5.2). iceberg-go reports a token request that
// never reached the endpoint as an OAuth error too, with the network error
// as text only; these codes tell the two apart.
var oauthRefusals = []string{"invalid_client", "invalid_grant", "unauthorized_client", "access_denied", "invalid_scope",
	"invalid_request", "unsupported_grant_type"}

// deniedByCatalog reports a catalog that refused the credentials: a REST
// catalog's 401, 403 or OAuth refusal, a database's authentication failure
// (SQLSTATE class 28).
func deniedByCatalog(err error) bool {
	if IsNetwork(err) {
		return false
	}
	if errors.Is(err, rest.ErrOAuthError) {
		msg := err.Error()
		return slices.ContainsFunc(oauthRefusals, func(code string) bool { return strings.Contains(msg, code) })
	}
	// A database refusing the credentials: SQLSTATE class 28 (invalid
	// authorization), which pgx's PgError reports; matched by its method,
	// so that the catalog does not link the driver.
	var sqlErr interface{ SQLState() string }
	return errors.Is(err, rest.ErrUnauthorized) || errors.Is(err, rest.ErrForbidden) ||
		errors.Is(err, rest.ErrAuthorizationExpired) || (errors.As(err, &sqlErr) && strings.HasPrefix(sqlErr.SQLState(), "28"))
}

// quotesNoBytes keeps a file's bytes out of the error of decoding it as
// JSON: Go's decoder quotes the first character it refuses, which for a
// file that is no metadata (a key, a password file) is the file's. It
// gives the offset instead.
func quotesNoBytes(err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), se.Error(), fmt.Sprintf("not JSON at byte %d", se.Offset)), err: err}
}
