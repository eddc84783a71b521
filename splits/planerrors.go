package splits

import (
	"errors"
	"syscall"

	"github.com/apache/iceberg-go/table"
)

// The sentinel errors of planning; handlers map them to HTTP statuses with
// errors.Is. Those that the catalog, the reader and the token code share are
// internal/fault's.
var (
	// ErrSnapshotNotFound: no snapshot matches the requested id, time or ref.
	ErrSnapshotNotFound = errors.New("snapshot not found")
	// ErrConflict: the request contradicts the table, such as mode=files on a
	// table whose scan carries delete files.
	ErrConflict = errors.New("request conflicts with the table")
	// ErrTooManySplits: a raw-file plan (mode=files) holds more data files
	// than the planner hands out URIs (WithMaxSplits).
	ErrTooManySplits = errors.New("too many splits")
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
