package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// Catalog is one configured catalog as the router serves it, by route
// family: each family sees only what it calls (cmd/sidecar wires them, each
// catalog with its own credentials and location map).
type Catalog struct {
	// Type and Name are the catalog's configured type and name; tokens
	// carry the name.
	Type, Name string
	// Plans plans the tables of /splits, /druid/task, /druid/sql and the
	// status page.
	Plans Plans
	// Changes diffs snapshots and plans the changed intervals of /changes.
	Changes Changes
	// Splits turns a token back into its splits, and opens their table,
	// for the row and file streams.
	Splits Splits
	// Rows reads the live rows of splits.
	Rows Rows
	// Tables lists the tables and loads their metadata for the status
	// page, and checks the catalog for /readyz.
	Tables Tables
}

// Plans plans a table (splits.Planner).
type Plans interface {
	Plan(ctx context.Context, req splits.Request) (splits.Plan, error)
}

// Changes finds the changed intervals between two snapshots
// (changes.Differ); the result plans each (changes.Result.Plan).
type Changes interface {
	Changes(ctx context.Context, req changes.Request) (changes.Result, error)
}

// Splits re-derives the splits a token names, and opens the table they
// read: its schema and the FileIO the catalog gives it (splits.Planner).
type Splits interface {
	Resolve(ctx context.Context, kind token.TokenKind, ref token.PlanRef) ([]token.Split, error)
	Source(ctx context.Context, sp token.Split) (splits.Source, error)
}

// Rows opens the live rows of one split, or of the splits of a packed
// token as one stream, through the FileIO of their table (reader.Reader).
type Rows interface {
	Open(ctx context.Context, fs icebergio.IO, sp token.Split, t token.TableSchema) (*reader.Stream, error)
	OpenAll(ctx context.Context, fs icebergio.IO, parts []token.Split, t token.TableSchema) (*reader.Stream, error)
}

// Tables lists a catalog's tables and loads their metadata for the status
// page, and checks that the catalog answers for /readyz
// (catalog.Catalog).
type Tables interface {
	Tables(ctx context.Context) (names []string, truncated bool, err error)
	LoadTable(ctx context.Context, ident []string) (*table.Table, error)
	Ping(ctx context.Context) error
}

// catalogs are the served catalogs by name, with the default one.
type catalogs struct {
	byName map[string]Catalog
	names  []string
	def    string
}

func newCatalogs(list []Catalog, def string) catalogs {
	cs := catalogs{byName: map[string]Catalog{}, def: def}
	for _, c := range list {
		cs.byName[c.Name] = c
		cs.names = append(cs.names, c.Name)
	}
	if cs.def == "" && len(list) == 1 {
		cs.def = cs.names[0]
	}
	return cs
}

// forRequest is the catalog a planning request names with ?catalog=, or the
// default one.
func (cs catalogs) forRequest(r *http.Request) (Catalog, error) {
	name := r.URL.Query().Get("catalog")
	if name == "" {
		if cs.def == "" {
			return Catalog{}, fmt.Errorf("%w: this sidecar serves the catalogs %s: name one with ?catalog=NAME",
				errBadRequest, strings.Join(cs.names, ", "))
		}
		name = cs.def
	}
	c, ok := cs.byName[name]
	if !ok {
		return Catalog{}, errorf(http.StatusNotFound, "catalog_not_found", fmt.Sprintf(
			"no catalog named %s; this sidecar serves %s", fault.Quote(name), strings.Join(cs.names, ", ")))
	}
	return c, nil
}

// forSplit is the catalog a split was planned in.
func (cs catalogs) forSplit(sp token.Split) (Catalog, error) { return cs.forToken(sp.Catalog) }

// forToken is the catalog a token was planned in. A token names its
// catalog; one that names none is the default catalog's.
func (cs catalogs) forToken(name string) (Catalog, error) {
	if name == "" {
		name = cs.def
	}
	c, ok := cs.byName[name]
	if !ok {
		// The token is genuine (its signature held) but the catalog was
		// removed from the configuration since planning.
		return Catalog{}, errorf(http.StatusGone, "catalog_gone", fmt.Sprintf(
			"the token was planned in catalog %q, which this sidecar no longer serves; plan again with GET /splits", name))
	}
	return c, nil
}
