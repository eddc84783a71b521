package split

import "errors"

// The sentinel errors that the planner, the catalog, the reader and the
// HTTP layer share: token handling's own, and those of loading a table and
// reading its files, which the catalog package classifies and the planner
// passes on. handlers maps them to HTTP statuses with errors.Is.
var (
	// ErrMalformedToken: the token is not a token at all.
	ErrMalformedToken = errors.New("malformed token")
	// ErrBadSignature: the token is well formed but no configured key signed it.
	ErrBadSignature = errors.New("bad token signature")
	// ErrTokenExpired: the token is ours but older than the configured TTL.
	ErrTokenExpired = errors.New("token expired")
	// ErrUnsupported: a split holds something a token cannot spell, or the
	// table uses something this service cannot serve.
	ErrUnsupported = errors.New("unsupported")
	// ErrBadRequest: the request itself is malformed, such as a table
	// name that no catalog could hold.
	ErrBadRequest = errors.New("bad request")
	// ErrTableNotFound: the catalog has no such table.
	ErrTableNotFound = errors.New("table not found")
	// ErrUnavailable: the catalog or storage did not answer, or the
	// credentials the catalog vends for a table could not be renewed; try
	// again later.
	ErrUnavailable = errors.New("catalog or storage unavailable")
	// ErrDenied: the catalog or the object store refused the credentials
	// (the sidecar's own, or those the catalog vended); retrying does not
	// help until the configuration changes.
	ErrDenied = errors.New("credentials refused")
	// ErrUpstream: the catalog or the object store answered with an
	// error of its own that a retry does not cure and that is not a
	// refusal of the credentials (a catalog's 400, say).
	ErrUpstream = errors.New("the catalog or storage answered with an error")
	// ErrForbiddenLocation: a location the sidecar refuses to open, such
	// as one that climbs out of its location map's target.
	ErrForbiddenLocation = errors.New("location refused")
	// ErrNotServed: the table is outside the namespaces and tables the
	// sidecar is configured to serve.
	ErrNotServed = errors.New("table not served")
)
