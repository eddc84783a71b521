package splits

import (
	"errors"

	"github.com/druidiceberg/sidecar/splits/split"
)

// The sentinel errors of planning; handlers map them to HTTP statuses with
// errors.Is. Those that the catalog, the reader and the token code share are
// the split package's, under the same names here.
var (
	// ErrSnapshotNotFound: no snapshot matches the requested id, time or ref.
	ErrSnapshotNotFound = errors.New("snapshot not found")
	// ErrConflict: the request contradicts the table, such as mode=files on a
	// table whose scan carries delete files.
	ErrConflict = errors.New("request conflicts with the table")
	// ErrTooManySplits: a raw-file plan (mode=files) holds more data files
	// than the planner hands out URIs (WithMaxSplits).
	ErrTooManySplits = errors.New("too many splits")

	// ErrBadRequest: the request itself is malformed.
	ErrBadRequest = split.ErrBadRequest
	// ErrTableNotFound: the catalog has no such table.
	ErrTableNotFound = split.ErrTableNotFound
	// ErrUnavailable: the catalog or storage did not answer, or vended
	// credentials could not be renewed; try again later.
	ErrUnavailable = split.ErrUnavailable
	// ErrDenied: the catalog or the object store refused the credentials;
	// retrying does not help until the configuration changes.
	ErrDenied = split.ErrDenied
	// ErrUnsupported: the table uses something this service cannot serve.
	ErrUnsupported = split.ErrUnsupported
)
