// Every file a table opens is confined to roots the server knows, whatever
// a token (or a manifest) names: a signed token is only as safe as the key
// that signs it, and the storage credentials reach far more than the lake.

package catalog

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/splits/split"
)

// locationProps are the table properties that put a table's files
// elsewhere than under its location: its data (write.data.path, and the
// deprecated object-storage and folder-storage paths that Iceberg's
// object-store layout reads before it) and its metadata.
var locationProps = []string{"write.data.path", "write.object-storage.path", "write.folder-storage.path", "write.metadata.path"}

// place is a location taken apart for comparison: a scheme family (s3a and
// s3n are s3; abfss abfs; wasbs wasb; a local path file), the authority
// (bucket, container@account, name node), and a slash-separated path that
// starts with "/" and ends without one (but "/" itself).
type place struct {
	scheme, host, path string
}

// schemeFamilies are the schemes that name the same store.
var schemeFamilies = map[string]string{"s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs", "wasbs": "wasb"}

// parsePlace takes a location apart. A local location (a path, or a file:
// URI) is made absolute. A location with a "." or ".." segment, as written
// or percent-decoded, is refused: no writer of a table produces one, and a
// store or a file system that resolves it would leave its root.
func parsePlace(loc string) (place, error) {
	if scheme, rest, ok := strings.Cut(loc, ":"); ok && isScheme(scheme) && !strings.EqualFold(scheme, "file") {
		scheme = strings.ToLower(scheme)
		if f, ok := schemeFamilies[scheme]; ok {
			scheme = f
		}
		host := ""
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			host, rest, _ = strings.Cut(after, "/")
			rest = "/" + rest
		}
		if err := dotSegments(loc, rest); err != nil {
			return place{}, err
		}
		return place{scheme: scheme, host: strings.ToLower(host), path: trimSlash(rest)}, nil
	}
	p := loc
	if rest, ok := cutFold(p, "file:"); ok {
		p = rest
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			host, _, _ := strings.Cut(after, "/")
			if host != "" && !strings.EqualFold(host, "localhost") {
				return place{}, fmt.Errorf("%w: %s names another host", split.ErrForbiddenLocation, loc)
			}
			p = after[len(host):]
		}
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
	}
	if err := dotSegments(loc, filepath.ToSlash(p)); err != nil {
		return place{}, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return place{}, fmt.Errorf("%w: %s: %w", split.ErrForbiddenLocation, loc, err)
	}
	return place{scheme: "file", path: filepath.ToSlash(abs)}, nil
}

// isScheme reports whether s is a URI scheme of more than one character
// (one is a Windows drive letter).
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// cutFold is strings.CutPrefix with the prefix in any case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// dotSegments refuses a path with a "." or ".." segment, as written or
// percent-decoded.
func dotSegments(loc, p string) error {
	forms := []string{p}
	if u, err := url.PathUnescape(p); err == nil && u != p {
		forms = append(forms, u)
	}
	for _, f := range forms {
		for _, seg := range strings.Split(f, "/") {
			if seg == "." || seg == ".." {
				return fmt.Errorf("%w: %s has a %q segment", split.ErrForbiddenLocation, loc, seg)
			}
		}
	}
	return nil
}

// trimSlash drops the trailing slashes of a path, keeping "/" for the root.
func trimSlash(p string) string {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return "/"
	}
	return p
}

// within reports whether p is root or under it, segment by segment.
func (p place) within(root place) bool {
	if p.scheme != root.scheme || p.host != root.host {
		return false
	}
	return root.path == "/" || p.path == root.path || strings.HasPrefix(p.path, root.path+"/")
}

// roots is a set of places files may be opened under.
type roots []place

// add adds the root at loc; a location that does not parse (or is empty)
// adds nothing.
func (r *roots) add(loc string) {
	if loc == "" {
		return
	}
	p, err := parsePlace(loc)
	if err != nil {
		return
	}
	for _, have := range *r {
		if have == p {
			return
		}
	}
	*r = append(*r, p)
}

// holds reports whether p is under one of the roots.
func (r roots) holds(p place) bool {
	for _, root := range r {
		if p.within(root) {
			return true
		}
	}
	return false
}

// tableRoots are the roots of a table as its metadata file (at
// metadataLocation) records it: its location, the properties that put
// files elsewhere, and the folders of its metadata files and manifest
// lists, now and in the metadata log, since a table moved or migrated
// keeps reading the files its older snapshots wrote where it was. Each
// folder of metadata counts as the table location it is in (its parent
// when it is a "metadata" folder).
func tableRoots(meta table.Metadata, metadataLocation string) roots {
	var r roots
	r.add(meta.Location())
	props := meta.Properties()
	for _, key := range locationProps {
		r.add(props[key])
	}
	r.add(tableDir(metadataLocation))
	for e := range meta.PreviousFiles() {
		r.add(tableDir(e.MetadataFile))
	}
	for _, s := range meta.Snapshots() {
		r.add(tableDir(s.ManifestList))
	}
	return r
}

// tableDir is the table location a metadata file or manifest list is in:
// its folder, or that folder's parent when it is a "metadata" folder; ""
// when that is the root of a bucket or a file system, which is no table's
// location.
func tableDir(loc string) string {
	i := strings.LastIndex(loc, "/")
	if i < 0 {
		return ""
	}
	dir := strings.TrimSuffix(loc[:i], "/metadata")
	if p, err := parsePlace(dir); err != nil || p.path == "/" {
		return ""
	}
	return dir
}

// catalogRoots are the roots a catalog's configuration gives every table:
// its warehouse, when it is a location (a REST catalog's warehouse is often
// a name), and its data roots.
func catalogRoots(cfg Config) roots {
	var r roots
	if w := cfg.Warehouse; w != "" && (cfg.Type == "local" || strings.Contains(w, "://") || strings.HasPrefix(w, "/") ||
		strings.HasPrefix(strings.ToLower(w), "file:")) {
		r.add(w)
	}
	for _, d := range cfg.DataRoots {
		r.add(d)
	}
	return r
}

// localFile is a local file that confine checked: the opened file must be
// the same one.
type localFile struct {
	path string
	info fs.FileInfo
}

// verify checks that f, opened after the check, is the file checked (a
// file swapped in between, for a symlink, say, is refused) and closes it
// when it is not.
func (l *localFile) verify(f icebergio.File) error {
	if l == nil {
		return nil
	}
	st, err := f.Stat()
	if err == nil && reflect.TypeOf(st) == reflect.TypeOf(l.info) && !os.SameFile(st, l.info) {
		err = fmt.Errorf("%w: %s changed while it was opened", split.ErrForbiddenLocation, l.path)
	}
	if err != nil {
		_ = f.Close()
	}
	return err
}

// confine checks that location may be opened for the table, before
// anything opens it, and returns the local file it names (nil for an
// object store's). A location under a location map's prefix must land
// within the map's target; any other must be under one of the table's
// roots (tableRoots of the table as the catalog loaded it and of the
// metadata the read pins) or the catalog's (catalogRoots). A local file
// must also be a regular file whose real path (symbolic links resolved) is
// under the real path of one of those roots: a link that leads out, a
// directory, a device or a named pipe is refused.
func (t *tableIO) confine(location string) (*localFile, error) {
	var allowed roots
	target := location
	if m, ok := t.c.server.mapping(location); ok {
		target = t.c.server.Rewrite(location)
		allowed.add(m.To)
		if len(allowed) == 0 {
			return nil, fmt.Errorf("%w: %s: the target of its location map does not parse", split.ErrForbiddenLocation, location)
		}
	} else {
		l, err := t.c.cached(t.c.ctx, t.ident)
		if err != nil {
			return nil, err
		}
		allowed = append(append(append(allowed, t.c.roots...), l.roots...), t.pinnedRoots()...)
	}
	p, err := parsePlace(target)
	if err != nil {
		return nil, err
	}
	if !allowed.holds(p) {
		return nil, fmt.Errorf("%w: %s is outside table %s's locations and the catalog's roots (its warehouse, "+
			"location map targets and data roots)", split.ErrForbiddenLocation, location, strings.Join(t.ident, "."))
	}
	if p.scheme != "file" {
		return nil, nil
	}
	return t.c.checkLocal(location, filepath.FromSlash(p.path), allowed)
}

// checkLocal checks a local file that is under one of allowed: its real
// path must be under one of their real paths, and it must be a regular
// file.
func (c *Catalog) checkLocal(location, name string, allowed roots) (*localFile, error) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err // a missing file stays fs.ErrNotExist
	}
	rp := place{scheme: "file", path: filepath.ToSlash(real)}
	inside := false
	for _, root := range allowed {
		if root.scheme == "file" && rp.within(place{scheme: "file", path: c.realPath(root.path)}) {
			inside = true
			break
		}
	}
	if !inside {
		return nil, fmt.Errorf("%w: %s is a symbolic link out of the table's locations", split.ErrForbiddenLocation, location)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", split.ErrForbiddenLocation, location, fileKind(info.Mode()))
	}
	return &localFile{path: location, info: info}, nil
}

// fileKind names what a file that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// realPath is the real path of a local root (its symbolic links
// resolved), or the root itself while it does not exist. Resolved roots are
// remembered.
func (c *Catalog) realPath(p string) string {
	if real, ok := c.realRoots.Get(p); ok {
		return real
	}
	real, err := filepath.EvalSymlinks(filepath.FromSlash(p))
	if err != nil {
		return p
	}
	real = filepath.ToSlash(real)
	c.realRoots.Add(p, real)
	return real
}

// pinnedRoots are the roots of the metadata the table reads through
// (readThrough), computed once per metadata file.
func (t *tableIO) pinnedRoots() roots {
	if t.meta == nil {
		return nil
	}
	if r, ok := t.c.metaRoots.Get(t.metaLocation); ok {
		return r
	}
	r := tableRoots(t.meta, t.metaLocation)
	t.c.metaRoots.Add(t.metaLocation, r)
	return r
}
