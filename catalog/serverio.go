// The server's own FileIO: what reads the tables of a catalog that vends
// no credentials, and every location under a location map's prefix.

package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// Mapping rewrites locations that start with From to start with To.
type Mapping struct {
	From, To string
}

// ParseMapping parses FROM=TO.
func ParseMapping(s string) (Mapping, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || from == "" || to == "" {
		return Mapping{}, fmt.Errorf("location map %q: want FROM=TO", s)
	}
	return Mapping{From: from, To: to}, nil
}

// ErrReadOnly is returned by the methods that would change storage.
var ErrReadOnly = errors.New("storage is read-only for the sidecar")

// FS is a read-only iceberg-go FileIO over every scheme iceberg-go knows,
// with the server's properties (credentials, endpoint) and the location map
// applied. It is safe for concurrent use.
type FS struct {
	props    map[string]string
	mappings []Mapping

	mu     sync.Mutex
	byRoot map[string]icebergio.IO
}

// NewFS returns an FS that hands props to iceberg-go's FileIO factories and
// rewrites locations through mappings (longest From first).
func NewFS(props map[string]string, mappings []Mapping) *FS {
	m := append([]Mapping(nil), mappings...)
	sort.SliceStable(m, func(i, j int) bool { return len(m[i].From) > len(m[j].From) })
	return &FS{props: props, mappings: m, byRoot: map[string]icebergio.IO{}}
}

// ErrOutsideMapping is the error of a location under a mapped prefix that
// climbs out of the mapping's target with a ".." segment.
var ErrOutsideMapping = fmt.Errorf("%w: it climbs out of its location map target", fault.ErrForbiddenLocation)

// Rewrite applies the location map to a location.
func (f *FS) Rewrite(location string) string {
	for _, m := range f.mappings {
		if strings.HasPrefix(location, m.From) {
			return m.To + location[len(m.From):]
		}
	}
	return location
}

// Mapped reports whether a location is under a location map's prefix.
func (f *FS) Mapped(location string) bool {
	_, ok := f.mapping(location)
	return ok
}

// mapping is the mapping that rewrites a location, if any.
func (f *FS) mapping(location string) (Mapping, bool) {
	for _, m := range f.mappings {
		if strings.HasPrefix(location, m.From) {
			return m, true
		}
	}
	return Mapping{}, false
}

// Open opens a location for reading. A mapping's target is a root: a mapped
// location with a ".." segment is refused with ErrOutsideMapping, never
// opened, since it could name any file the sidecar can read.
func (f *FS) Open(location string) (icebergio.File, error) {
	for _, m := range f.mappings {
		if rest, ok := strings.CutPrefix(location, m.From); ok {
			if slices.Contains(strings.Split(rest, "/"), "..") {
				return nil, &fs.PathError{Op: "open", Path: location, Err: ErrOutsideMapping}
			}
			break
		}
	}
	path := f.Rewrite(location)
	fsys, err := f.ioFor(path)
	if err != nil {
		return nil, err
	}
	return fsys.Open(path)
}

// Remove refuses: the sidecar never changes a table's files.
func (f *FS) Remove(string) error { return ErrReadOnly }

// ioFor returns the FileIO for a location's scheme and bucket, building it
// once. iceberg-go's object-store FileIOs are bound to a single bucket.
func (f *FS) ioFor(path string) (icebergio.IO, error) {
	root := ""
	if u, err := url.Parse(path); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		root = u.Scheme + "://" + u.Host
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fsys, ok := f.byRoot[root]; ok {
		return fsys, nil
	}
	fsys, err := icebergio.LoadFS(context.Background(), f.props, path)
	if err != nil {
		return nil, fmt.Errorf("load file IO for %s: %w", path, err)
	}
	f.byRoot[root] = fsys
	return fsys, nil
}

// Storage checks that this build of the sidecar has a FileIO for a
// location's store, after the location map: the scheme (s3, s3a, s3n and
// oss are iceberg-go's S3 FileIO; gs its GCS one; abfs, abfss, wasb and
// wasbs its Azure one; file and a plain path the local one) must be one
// iceberg-go registered in this binary (io.GetRegisteredSchemes). A
// location it would not open is refused with fault.ErrUnsupported, naming
// the location and its scheme, so that a plan refuses the table rather
// than hand out a URI whose stream fails.
func (f *FS) Storage(location string) error {
	target := f.Rewrite(location)
	u, err := url.Parse(target)
	if err != nil || len(u.Scheme) <= 1 {
		return nil // a local path (or a drive letter); opening it says the rest
	}
	if slices.Contains(icebergio.GetRegisteredSchemes(), u.Scheme) {
		return nil
	}
	return fmt.Errorf("%w: %s is on %s:// storage, which this sidecar cannot open: its iceberg-go has no FileIO "+
		"for the scheme (gs:// and the Azure schemes come with the gcs and azure build tags; the container image "+
		"has every store), or map the location to one it can open (locationMap)", fault.ErrUnsupported, location, u.Scheme)
}

// Storage is FS.Storage with the catalog's location map, and refuses a
// location outside the operator's roots (within) with
// fault.ErrForbiddenLocation, so that a plan refuses a table that names a
// file outside them rather than hand out a token no route would open.
func (c *Catalog) Storage(location string) error {
	if err := c.server.Storage(location); err != nil {
		return err
	}
	_, _, err := c.within(location)
	return err
}
