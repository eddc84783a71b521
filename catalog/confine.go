// Every file a table opens is confined to roots the operator configured,
// whatever a token, a manifest or a table's metadata names: a signed token
// is only as safe as the key that signs it, whoever writes a table's
// metadata is not the operator, and the storage credentials reach far
// more than the lake.

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
	"github.com/druidiceberg/sidecar/internal/fault"
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
				return place{}, fmt.Errorf("%w: %s names another host", fault.ErrForbiddenLocation, loc)
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
		return place{}, fmt.Errorf("%w: %s: %w", fault.ErrForbiddenLocation, loc, err)
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
				return fmt.Errorf("%w: %s has a %q segment", fault.ErrForbiddenLocation, loc, seg)
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

// operatorPlace is the place of a location the operator gives (a
// warehouse, a data root, a location map's target). A local path without
// a URI scheme is made absolute and clean first: the operator's
// "./warehouse" (the demo's default) or "../lake" is a folder relative to
// the working folder, where a table's own locations are refused any dot
// segment (parsePlace).
func operatorPlace(loc string) (place, error) {
	if scheme, _, ok := strings.Cut(loc, ":"); !ok || !isScheme(scheme) {
		abs, err := filepath.Abs(loc)
		if err != nil {
			return place{}, fmt.Errorf("%w: %s: %w", fault.ErrForbiddenLocation, loc, err)
		}
		loc = abs
	}
	return parsePlace(loc)
}

// roots is a set of places files may be opened under.
type roots []place

// add adds the root at loc; a location that does not parse (or is empty)
// adds nothing. A root given twice is held twice, which costs holds one
// more comparison: roots come from the operator's configuration, a
// handful, never from a table's metadata.
func (r *roots) add(loc string) {
	if loc == "" {
		return
	}
	p, err := operatorPlace(loc)
	if err != nil {
		return
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

// operatorRoots are the roots the operator gives every table of the
// catalog, and the only ones: its warehouse, when it is a location (a REST
// catalog's warehouse is often a name), its data roots, its storage
// prefixes, its location maps' targets, and for the static catalog the
// table folder of each metadata file it names. A table's metadata (its
// location, write.data.path, its metadata log) adds none: whoever writes
// a table's metadata would make any file the process can read a table's.
func operatorRoots(cfg Config) roots {
	var r roots
	if w := cfg.Warehouse; w != "" && (cfg.Type == "local" || strings.Contains(w, "://") || strings.HasPrefix(w, "/") ||
		strings.HasPrefix(strings.ToLower(w), "file:")) {
		r.add(w)
	}
	for _, d := range cfg.DataRoots {
		r.add(d)
	}
	for _, s := range cfg.StoragePrefixes {
		r.add(s)
	}
	for _, m := range cfg.LocationMap {
		r.add(m.To)
	}
	if cfg.Type == "static" {
		for _, loc := range cfg.Tables {
			r.add(tableDir(loc))
		}
	}
	return r
}

// within checks that location, after the location map, is under one of
// the operator's roots (a mapped location under its map's target), without
// looking at the file: the check of a plan's files and of a table's
// locations. It returns the roots that allow it.
func (c *Catalog) within(location string) (place, roots, error) {
	var allowed roots
	target := location
	if m, ok := c.server.mapping(location); ok {
		target = c.server.Rewrite(location)
		allowed.add(m.To)
	} else {
		allowed = c.roots
	}
	p, err := parsePlace(target)
	if err != nil {
		return place{}, nil, err
	}
	if !allowed.holds(p) {
		return place{}, nil, c.outside(location, p)
	}
	return p, allowed, nil
}

// outside is the error of a location (at p, after the location map)
// outside the operator's roots, naming the setting that admits it.
func (c *Catalog) outside(location string, p place) error {
	if _, ok := c.server.mapping(location); ok {
		return fmt.Errorf("%w: %s lands outside the target of its location map", fault.ErrForbiddenLocation, location)
	}
	how := "add its bucket or a prefix of it with --allow-storage-prefix (allowStoragePrefixes in the config file)"
	if p.scheme == "file" {
		how = "add its folder with --data-root (dataRoots in the config file)"
	}
	return fmt.Errorf("%w: %s is outside the locations catalog %q serves files from (its warehouse, data roots, storage "+
		"prefixes and location map targets, which the operator sets, never a table's metadata); if the table's files "+
		"belong there, %s", fault.ErrForbiddenLocation, location, c.cfg.Name, how)
}

// checkTable refuses a table whose metadata puts its files outside the
// operator's roots: its location, the properties that put files elsewhere
// (locationProps) and its metadata file. Its older locations (the metadata
// log, manifest lists) are not checked here: a file there is opened only
// when a snapshot names it, and confine refuses it then.
func (c *Catalog) checkTable(ident []string, meta table.Metadata, metadataLocation string) error {
	check := func(what, loc string) error {
		if loc == "" {
			return nil
		}
		if _, _, err := c.within(loc); err != nil {
			return fmt.Errorf("table %s: its %s: %w", strings.Join(ident, "."), what, err)
		}
		return nil
	}
	if err := check("location", meta.Location()); err != nil {
		return err
	}
	props := meta.Properties()
	for _, key := range locationProps {
		if err := check(key, props[key]); err != nil {
			return err
		}
	}
	return check("metadata file", metadataLocation)
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
		err = fmt.Errorf("%w: %s changed while it was opened", fault.ErrForbiddenLocation, l.path)
	}
	if err != nil {
		_ = f.Close()
	}
	return err
}

// confine checks that location may be opened for the table, before
// anything opens it, and returns the local file it names (nil for an
// object store's). A location under a location map's prefix must land
// within the map's target; any other must be under one of the operator's
// roots (operatorRoots). A local file must also be a regular file whose
// real path (symbolic links resolved) is under the real path of one of
// those roots, and none of the process's own files: a link that leads out,
// a directory, a device, a named pipe and the token key are refused.
func (t *tableIO) confine(location string) (*localFile, error) {
	p, allowed, err := t.c.within(location)
	if err != nil {
		return nil, err
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
		return nil, fmt.Errorf("%w: %s is a symbolic link out of the table's locations", fault.ErrForbiddenLocation, location)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", fault.ErrForbiddenLocation, location, fileKind(info.Mode()))
	}
	for _, own := range c.private {
		if oi, err := os.Stat(own); err == nil && os.SameFile(oi, info) {
			return nil, fmt.Errorf("%w: %s is one of the sidecar's own files (its token key, configuration or credentials), "+
				"which no table may name", fault.ErrForbiddenLocation, location)
		}
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
