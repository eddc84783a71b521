package token

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// A version-2 token spells its split compactly, because a Druid spec holds one
// URI per split and the URIs of a wide table add up (a realistic split with 10
// delete files: 3,178 bytes as version 1, 1,828 as version 2; see
// TestTokenSize):
//
//   - The metadata location and the data file are written relative to the
//     table location (Split.Location) when they are under it: the part after
//     the location and its "/" ("data/x.parquet").
//   - A delete file and a deletion vector's referenced data file in the data
//     file's own directory are written as "./" and their name; Iceberg
//     writers put position deletes beside the data they delete.
//   - Every other path is written as it is: it is absolute (it starts with
//     "/" or a URI scheme such as "s3:"), so it never reads as relative.
//   - The format is left out when it is the usual one (PARQUET; PUFFIN for a
//     deletion vector), and delete kinds are codes ("eq", "dv"; a position
//     delete has none).
//
// expandSplit undoes compactSplit exactly: the decoded paths are the very
// strings the manifests spell, never normalized (no scheme is rewritten,
// s3a:// stays s3a://, "//" stays "//"), because the reader matches a position
// delete's file_path against the data file path byte for byte. A split with a
// path that is not absolute and not under its location (which no spec-abiding
// table has) cannot be spelled this way without ambiguity; its token sets
// asIs and holds every path as it is.

// deleteKindCode is how a version-2 token spells a delete kind.
func deleteKindCode(k DeleteKind) (DeleteKind, error) {
	switch k {
	case DeletePosition:
		return "", nil
	case DeleteEquality:
		return "eq", nil
	case DeleteDeletionVector:
		return "dv", nil
	}
	return "", fmt.Errorf("delete kind %q is not position, equality or deletion_vector", k)
}

// deleteKindOf reads back what deleteKindCode wrote.
func deleteKindOf(code DeleteKind) (DeleteKind, error) {
	switch code {
	case "":
		return DeletePosition, nil
	case "eq":
		return DeleteEquality, nil
	case "dv":
		return DeleteDeletionVector, nil
	}
	return "", fmt.Errorf("delete kind code %q", code)
}

// usualFormat is the format a version-2 token leaves out for a delete file
// of kind k; for the data file it is PARQUET.
func usualFormat(k DeleteKind) string {
	if k == DeleteDeletionVector {
		return string(iceberg.PuffinFile)
	}
	return string(iceberg.ParquetFile)
}

// shortFormat spells a format in a version-2 token: empty for the usual one.
// An empty format would read back as the usual one, so it is refused.
func shortFormat(format, usual, path string) (string, error) {
	switch format {
	case "":
		return "", fmt.Errorf("file %s has no format", path)
	case usual:
		return "", nil
	}
	return format, nil
}

// isAbsolute reports whether a path starts with "/" or a URI scheme
// (RFC 3986: a letter, then letters, digits, "+", "-" or ".", then ":").
// The paths a token writes relative are exactly the ones that are not.
func isAbsolute(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// dirRelative marks a path written relative to the data file's directory.
const dirRelative = "./"

// pathBases are the prefixes a version-2 token writes paths relative to.
type pathBases struct {
	// location is the table location with exactly one trailing "/" added
	// when it has none; empty when the split has no location.
	location string
	// dir is the data file's directory, up to and including its last "/";
	// empty when the data path has no "/".
	dir string
}

func basesOf(location, dataPath string) pathBases {
	var b pathBases
	if location != "" {
		b.location = location
		if !strings.HasSuffix(location, "/") {
			b.location += "/"
		}
	}
	if i := strings.LastIndexByte(dataPath, '/'); i >= 0 {
		b.dir = dataPath[:i+1]
	}
	return b
}

// short spells p relative to the data file's directory (when inDir allows
// it), else relative to the location, else as it is. ok is false when p
// is none of these and not absolute either, so it would read as relative.
func (b pathBases) short(p string, inDir bool) (_ string, ok bool) {
	if inDir && b.dir != "" && len(p) > len(b.dir) && strings.HasPrefix(p, b.dir) {
		return dirRelative + p[len(b.dir):], true
	}
	if b.location != "" && strings.HasPrefix(p, b.location) {
		rel := p[len(b.location):]
		// Whatever would read as absolute or as directory-relative stays
		// whole ("s3://t//data/x" under "s3://t/" gives "/data/x").
		if rel != "" && !isAbsolute(rel) && !strings.HasPrefix(rel, dirRelative) {
			return rel, true
		}
	}
	return p, isAbsolute(p)
}

// long reads back what short wrote. The data file's directory must already
// be known, so the data path is read first.
func (b pathBases) long(w string, inDir bool) (string, error) {
	switch {
	case inDir && strings.HasPrefix(w, dirRelative):
		if b.dir == "" {
			return "", fmt.Errorf("path %q is relative to a data file without a directory", w)
		}
		return b.dir + w[len(dirRelative):], nil
	case isAbsolute(w):
		return w, nil
	case b.location == "":
		return "", fmt.Errorf("path %q is relative, and the split has no location", w)
	}
	return b.location + w, nil
}

// compactParts returns the files of a split as a version-2 or -3 token
// spells them: the first as a split, the others as parts; asIs is true
// when the paths of one of them must be written as they are, and then
// every path of every file is.
func compactParts(parts []Split) (first Split, more []Part, asIs bool, err error) {
	first, more, asIs, err = compactAll(parts, false)
	if err == nil && asIs {
		return compactAll(parts, true)
	}
	return first, more, asIs, err
}

// compactAll is one pass of compactParts; whole writes every path as it is.
func compactAll(parts []Split, whole bool) (first Split, more []Part, asIs bool, err error) {
	if first, asIs, err = compact(parts[0], whole); err != nil {
		return Split{}, nil, false, err
	}
	for _, p := range parts[1:] {
		if !SameTable(p, parts[0]) {
			return Split{}, nil, false, fmt.Errorf("data file %s cannot be packed with %s: another table, snapshot, "+
				"schema, projection or encoding", p.Data.Path, parts[0].Data.Path)
		}
		c, pAsIs, err := compact(p, whole)
		if err != nil {
			return Split{}, nil, false, err
		}
		asIs = asIs || pAsIs
		more = append(more, Part{Data: c.Data, Deletes: c.Deletes, Filter: c.Filter})
	}
	return first, more, asIs, nil
}

// expandParts reads back what compactParts wrote.
func expandParts(first Split, more []Part, asIs bool) ([]Split, error) {
	if err := expandSplit(&first, asIs); err != nil {
		return nil, err
	}
	out := make([]Split, 0, 1+len(more))
	out = append(out, first)
	for _, p := range more {
		// The common paths are already expanded, and an expanded path
		// reads back as itself.
		sp := first
		sp.Data, sp.Deletes, sp.Filter = p.Data, p.Deletes, p.Filter
		if err := expandSplit(&sp, asIs); err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// compactSplit returns sp as a version-2 token spells it, and whether its
// paths must be written as they are (see above). It shares no memory that
// it changes with sp.
func compactSplit(sp Split) (Split, bool, error) { return compact(sp, false) }

// compact is compactSplit; whole writes every path as it is whether or
// not it could be shortened.
func compact(sp Split, whole bool) (_ Split, asIs bool, err error) {
	out := sp
	out.Deletes = make([]DeleteFile, len(sp.Deletes))
	copy(out.Deletes, sp.Deletes)

	if out.Data.Format, err = shortFormat(sp.Data.Format, string(iceberg.ParquetFile), sp.Data.Path); err != nil {
		return Split{}, false, err
	}
	for i := range out.Deletes {
		d := &out.Deletes[i]
		if d.Format, err = shortFormat(d.Format, usualFormat(d.Kind), d.Path); err != nil {
			return Split{}, false, err
		}
		if d.Kind, err = deleteKindCode(d.Kind); err != nil {
			return Split{}, false, fmt.Errorf("delete file %s: %w", d.Path, err)
		}
	}

	b := basesOf(sp.Location, sp.Data.Path)
	all := true
	short := func(p string, inDir bool) string {
		if !utf8.ValidString(p) {
			// JSON would replace the invalid bytes, and the path would no
			// longer match a position delete's file_path.
			err = cmp.Or(err, fmt.Errorf("%w: path %q is not UTF-8", fault.ErrUnsupported, p))
		}
		w, ok := b.short(p, inDir)
		all = all && ok
		return w
	}
	out.MetadataLocation = short(sp.MetadataLocation, false)
	out.Data.Path = short(sp.Data.Path, false)
	for i := range out.Deletes {
		d, orig := &out.Deletes[i], sp.Deletes[i]
		d.Path = short(orig.Path, true)
		if orig.ReferencedDataFile != "" {
			d.ReferencedDataFile = short(orig.ReferencedDataFile, true)
		}
	}
	if !utf8.ValidString(sp.Location) {
		err = cmp.Or(err, fmt.Errorf("%w: table location %q is not UTF-8", fault.ErrUnsupported, sp.Location))
	}
	if err != nil {
		return Split{}, false, err
	}
	if !all || whole {
		// Some path is not absolute: write every path whole.
		out.MetadataLocation, out.Data.Path = sp.MetadataLocation, sp.Data.Path
		for i := range out.Deletes {
			out.Deletes[i].Path = sp.Deletes[i].Path
			out.Deletes[i].ReferencedDataFile = sp.Deletes[i].ReferencedDataFile
		}
		return out, true, nil
	}
	return out, false, nil
}

// expandSplit turns a split decoded from a version-2 token back into the one
// that was signed, in place.
func expandSplit(sp *Split, asIs bool) error {
	if sp.Data.Format == "" {
		sp.Data.Format = string(iceberg.ParquetFile)
	}
	for i := range sp.Deletes {
		d := &sp.Deletes[i]
		k, err := deleteKindOf(d.Kind)
		if err != nil {
			return err
		}
		d.Kind = k
		if d.Format == "" {
			d.Format = usualFormat(k)
		}
	}
	if asIs {
		return nil
	}
	var err error
	b := basesOf(sp.Location, "")
	if sp.MetadataLocation, err = b.long(sp.MetadataLocation, false); err != nil {
		return err
	}
	if sp.Data.Path, err = b.long(sp.Data.Path, false); err != nil {
		return err
	}
	b = basesOf(sp.Location, sp.Data.Path)
	for i := range sp.Deletes {
		d := &sp.Deletes[i]
		if d.Path, err = b.long(d.Path, true); err != nil {
			return err
		}
		if d.ReferencedDataFile != "" {
			if d.ReferencedDataFile, err = b.long(d.ReferencedDataFile, true); err != nil {
				return err
			}
		}
	}
	return nil
}
