package splits

import "errors"

// The sentinel errors of planning and token handling; handlers map them to
// HTTP statuses with errors.Is.
var (
	// ErrTableNotFound: the catalog has no such table.
	ErrTableNotFound = errors.New("table not found")
	// ErrSnapshotNotFound: no snapshot matches the requested id, time or ref.
	ErrSnapshotNotFound = errors.New("snapshot not found")
	// ErrBadRequest: the request itself is malformed.
	ErrBadRequest = errors.New("bad request")
	// ErrConflict: the request contradicts the table, such as mode=files on a
	// table whose scan carries delete files.
	ErrConflict = errors.New("request conflicts with the table")
	// ErrUnavailable: the catalog or storage did not answer; try again later.
	ErrUnavailable = errors.New("catalog or storage unavailable")
	// ErrDenied: the catalog or the object store refused the sidecar's
	// credentials; retrying does not help until the configuration changes.
	ErrDenied = errors.New("credentials refused")
	// ErrUnsupported: the table uses something this service cannot serve.
	ErrUnsupported = errors.New("unsupported")
	// ErrMalformedToken: the token is not a token at all.
	ErrMalformedToken = errors.New("malformed token")
	// ErrBadSignature: the token is well formed but no configured key signed it.
	ErrBadSignature = errors.New("bad token signature")
	// ErrTokenExpired: the token is ours but older than the configured TTL.
	ErrTokenExpired = errors.New("token expired")
)
