// Which tables a catalog serves: with one catalog principal for the whole
// sidecar, the allowlist is what keeps a Druid task (or anyone who reaches
// the port) from reading every table that principal can.

package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// allowlist is the namespaces and tables a catalog serves, each as its
// identifier's parts; empty serves every table.
type allowlist [][]string

// parseAllow parses the entries of Config.Allow: each NS or NS.NAME, a
// namespace or table name as requests spell them (token.ParseIdentifier).
// An entry serves
// the table of that name and every table of the namespace of that name
// (and of its nested namespaces): "sales" serves sales.orders and
// sales.eu.orders; "sales.orders" serves that table (and the tables of a
// namespace sales.orders, if the catalog has one).
func parseAllow(entries []string) (allowlist, error) {
	var a allowlist
	for _, e := range entries {
		// A namespace is a table name without its last part.
		ident, err := token.ParseIdentifier(e + ".x")
		if err != nil {
			return nil, fmt.Errorf("allowed table or namespace %s: want NS or NS.NAME, each part 1 to %d bytes of UTF-8 "+
				"without a control character, / or \\", fault.Quote(e), token.MaxNameBytes)
		}
		a = append(a, ident[:len(ident)-1])
	}
	return a, nil
}

// allows reports whether the table ident is served.
func (a allowlist) allows(ident []string) bool {
	if len(a) == 0 {
		return true
	}
	for _, e := range a {
		if len(e) <= len(ident) && slices.Equal(e, ident[:len(e)]) {
			return true
		}
	}
	return false
}

// check refuses a table the catalog does not serve, before the catalog
// or storage is asked anything about it.
func (c *Catalog) check(ident []string) error {
	if c.allow.allows(ident) {
		return nil
	}
	return fmt.Errorf("%w: catalog %q serves only the namespaces and tables it allows, and %s is not one of them",
		fault.ErrNotServed, c.cfg.Name, strings.Join(ident, "."))
}
