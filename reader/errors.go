package reader

import (
	"errors"

	"github.com/druidiceberg/sidecar/reader/readerr"
)

// The sentinel errors of the reader; callers tell causes apart with
// errors.Is. The first four are the values the reader's subpackages wrap
// (see package readerr). A file that does not exist keeps fs.ErrNotExist
// in the chain instead, and storage errors keep their own cause.
var (
	// ErrCorruptFile: a data or delete file could not be decoded (bad
	// footer, bad page, bad deletion vector, impossible positions, a value
	// its type cannot hold).
	ErrCorruptFile = readerr.ErrCorruptFile
	// ErrNoFieldIDs: a data or equality delete file carries no Iceberg
	// field ids and the table has no name mapping, so its columns cannot be
	// resolved.
	ErrNoFieldIDs = readerr.ErrNoFieldIDs
	// ErrSchemaMismatch: a file column cannot be read as the Iceberg type
	// of the field with the same id.
	ErrSchemaMismatch = readerr.ErrSchemaMismatch
	// ErrUnsupported: the split uses something the reader does not serve,
	// such as a file format other than Parquet and Avro, a compression codec
	// it has no decoder for, or a default value or residual filter it cannot
	// evaluate.
	ErrUnsupported = readerr.ErrUnsupported
	// ErrStreamUsed: Run was called on a stream that already ran or was
	// closed.
	ErrStreamUsed = errors.New("stream already used")
)
