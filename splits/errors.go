package splits

import (
	"errors"
	"syscall"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/splits/split"
)

// The sentinel errors of planning (the token errors are the split
// package's); handlers map them to
// HTTP statuses with errors.Is.
var (
	// ErrTableNotFound: the catalog has no such table.
	ErrTableNotFound = errors.New("table not found")
	// ErrSnapshotNotFound: no snapshot matches the requested id, time or ref.
	ErrSnapshotNotFound = errors.New("snapshot not found")
	// ErrBadRequest: the request itself is malformed.
	ErrBadRequest = errors.New("bad request")
	// ErrConflict: the request contradicts the table, such as mode=files on a
	// table whose scan carries delete files.
	ErrConflict = errors.New("request conflicts with the table")
	// ErrTooManySplits: a raw-file plan (mode=files) holds more data files
	// than the planner hands out URIs (WithMaxSplits).
	ErrTooManySplits = errors.New("too many splits")
	// ErrUnavailable: the catalog or storage did not answer; try again later.
	ErrUnavailable = errors.New("catalog or storage unavailable")
	// ErrDenied: the catalog or the object store refused the sidecar's
	// credentials; retrying does not help until the configuration changes.
	ErrDenied = errors.New("credentials refused")
	// ErrUnsupported: the table uses something this service cannot serve.
	// It is the split package's, so a split a token cannot spell is the same
	// error as a table that cannot be served.
	ErrUnsupported = split.ErrUnsupported
)

// IsDamagedMetadata reports an error of reading a table's metadata that no
// retry mends: a metadata file that is not valid JSON, or has a format
// version iceberg-go does not know, or names a schema it does not hold
// (iceberg-go's table.ErrInvalidMetadata), or a metadata location that is
// a directory. The table needs repair, not the request.
func IsDamagedMetadata(err error) bool {
	return errors.Is(err, table.ErrInvalidMetadata) || errors.Is(err, table.ErrInvalidMetadataFormatVersion) ||
		errors.Is(err, syscall.EISDIR)
}
