package token

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// The bounds of a table name, checked before any catalog or filesystem sees
// it: a name part becomes a directory of the local catalog, a key of the
// others.
const (
	// MaxNameBytes bounds each part of NS.NAME, as filesystems bound a
	// file name.
	MaxNameBytes = 255
	// MaxNameParts bounds the levels of NS.NAME.
	MaxNameParts = 16
)

// ParseIdentifier splits NS.NAME (namespaces may have several levels) into
// a table identifier and checks each part: 1 to MaxNameBytes bytes of UTF-8,
// no control character, no / or \ (which a filesystem catalog would take as
// directories). A name that fails is fault.ErrBadRequest, quoted shortened.
func ParseIdentifier(s string) ([]string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: table %s: %s", fault.ErrBadRequest, fault.Quote(s), why)
	}
	if len(s) > MaxNameParts*(MaxNameBytes+1) {
		return nil, bad(fmt.Sprintf("%d bytes is longer than any table name", len(s)))
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return nil, bad("want NAMESPACE.NAME")
	}
	if len(parts) > MaxNameParts {
		return nil, bad(fmt.Sprintf("more than %d levels", MaxNameParts))
	}
	for _, p := range parts {
		switch {
		case len(p) > MaxNameBytes:
			return nil, bad(fmt.Sprintf("a part of %d bytes, more than the %d allowed", len(p), MaxNameBytes))
		case !utf8.ValidString(p):
			return nil, bad("not UTF-8")
		case strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || r == '/' || r == '\\' }):
			return nil, bad("a control character, / or \\ is not part of a name")
		}
	}
	return parts, nil
}
