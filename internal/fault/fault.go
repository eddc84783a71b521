// Package fault holds the sentinel errors that the catalog, the planner,
// the reader and the HTTP layer share, and the quoting of client input for
// their messages. Each error is wrapped with %w where it arises, saying what
// was being done; handlers maps the sentinels to HTTP statuses with
// errors.Is. A package's own failures (a malformed token, a corrupt file, a
// snapshot that does not exist) are that package's sentinels.
package fault

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The shared sentinels.
var (
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

// Quote is %q of a client's value for an error, shortened to its first 64
// bytes: an error is logged and answered, and a value can be a megabyte.
func Quote(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// Short is a name of client input as it stands when it is short, or
// quoted and cut (Quote) when it is long, for messages.
func Short(s string) string {
	if len(s) <= 64 && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return Quote(s)
}
