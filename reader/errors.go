package reader

import "errors"

// The sentinel errors of the reader; callers tell causes apart with
// errors.Is. A file that does not exist keeps fs.ErrNotExist in the chain
// instead, and storage errors keep their own cause.
var (
	// ErrCorruptFile: a data or delete file could not be decoded (bad
	// footer, bad page, bad deletion vector, impossible positions).
	ErrCorruptFile = errors.New("corrupt file")
	// ErrNoFieldIDs: a data or equality delete file carries no Iceberg
	// field ids and the table has no name mapping, so its columns cannot be
	// resolved.
	ErrNoFieldIDs = errors.New("parquet file has no field ids")
	// ErrSchemaMismatch: a file column cannot be read as the Iceberg type
	// of the field with the same id.
	ErrSchemaMismatch = errors.New("file column does not match the table schema")
	// ErrUnsupported: the split uses something the reader does not serve,
	// such as a non-Parquet file or a variant or geospatial column.
	ErrUnsupported = errors.New("unsupported")
	// ErrStreamUsed: Run was called on a stream that already ran or was
	// closed.
	ErrStreamUsed = errors.New("stream already used")
)
