package handlers

import (
	"fmt"
	"net/http"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/changes"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/splits/split"
)

// Catalog is one configured catalog as the router serves it: the planner
// of its tables and the reader and FileIO of its files (each catalog has its
// own credentials and location map).
type Catalog struct {
	Planner Planner
	Reader  *reader.Reader
	// Files opens raw data files for the v1 path; the location map applies.
	Files icebergio.IO
	// changes finds the changed intervals of /changes with Planner and
	// Files; newCatalogs makes it.
	changes *changes.Differ
}

// name is the catalog's configured name, which tokens carry.
func (c Catalog) name() string {
	_, name := c.Planner.Catalog()
	return name
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
		c.changes = changes.New(c.Planner, c.Files)
		cs.byName[c.name()] = c
		cs.names = append(cs.names, c.name())
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
				splits.ErrBadRequest, strings.Join(cs.names, ", "))
		}
		name = cs.def
	}
	c, ok := cs.byName[name]
	if !ok {
		return Catalog{}, errorf(http.StatusNotFound, "catalog_not_found", fmt.Sprintf(
			"no catalog named %s; this sidecar serves %s", splits.Quote(name), strings.Join(cs.names, ", ")))
	}
	return c, nil
}

// forSplit is the catalog a split was planned in.
func (cs catalogs) forSplit(sp split.Split) (Catalog, error) { return cs.forToken(sp.Catalog) }

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
