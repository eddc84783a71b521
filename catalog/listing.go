package catalog

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// maxListedTables bounds Tables, which serves a status page, not a crawler.
const maxListedTables = 500

// tableLister is what iceberg-go's catalogs offer to list tables.
type tableLister interface {
	ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error)
	ListTables(ctx context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error]
}

// Tables lists the catalog's tables that it serves as NS.NAME, sorted, at most
// maxListedTables of them (truncated reports whether there were more).
func (c *Catalog) Tables(ctx context.Context) (names []string, truncated bool, err error) {
	loader, err := c.conn.get(ctx)
	if err != nil {
		return nil, false, err
	}
	switch l := loader.(type) {
	case staticCatalog:
		for n := range l.tables {
			if ident, err := token.ParseIdentifier(n); err == nil && c.allow.allows(ident) {
				names = append(names, n)
			}
		}
	case tableLister:
		var walk func(parent table.Identifier, depth int) error
		walk = func(parent table.Identifier, depth int) error {
			nss, err := l.ListNamespaces(ctx, parent)
			if err != nil {
				return err
			}
			for _, ns := range nss {
				for ident, err := range l.ListTables(ctx, ns) {
					if err != nil {
						return err
					}
					if !c.allow.allows(ident) {
						continue
					}
					names = append(names, strings.Join(ident, "."))
					if len(names) > maxListedTables {
						return nil
					}
				}
				if depth < 3 {
					if err := walk(ns, depth+1); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := walk(nil, 0); err != nil {
			return nil, false, redact(classify(c.cfg.Name, "list tables", err), c.secrets)
		}
	default:
		return nil, false, fmt.Errorf("%w: the %s catalog cannot list its tables", fault.ErrUnsupported, c.cfg.Type)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) > maxListedTables {
		return names[:maxListedTables], true, nil
	}
	return names, false, nil
}
