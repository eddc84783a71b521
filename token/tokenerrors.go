package token

import "errors"

// The sentinel errors of token handling; handlers maps them to HTTP
// statuses with errors.Is. Those that the catalog, the planner, the reader
// and the HTTP layer share are internal/fault's.
var (
	// ErrMalformedToken: the token is not a token at all.
	ErrMalformedToken = errors.New("malformed token")
	// ErrBadSignature: the token is well formed but no configured key signed it.
	ErrBadSignature = errors.New("bad token signature")
	// ErrTokenExpired: the token is ours but older than the configured TTL.
	ErrTokenExpired = errors.New("token expired")
)
