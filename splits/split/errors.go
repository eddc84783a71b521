package split

import "errors"

// The sentinel errors of token handling; handlers map them to HTTP statuses
// with errors.Is.
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
)
