// Package readerr holds the sentinel errors of file reading, so that the
// reader's subpackages (decoding, delete sets, schema resolution, value
// encoding) wrap the very values that package reader exports under the same
// names: callers keep testing reader.ErrCorruptFile and the others with
// errors.Is and never import this package. It holds no other errors: a
// file that does not exist keeps fs.ErrNotExist in the chain instead, and
// storage errors keep their own cause.
package readerr

import "errors"

var (
	// ErrCorruptFile: a data or delete file could not be decoded (bad
	// footer, bad page, bad deletion vector, impossible positions, a value
	// its type cannot hold).
	ErrCorruptFile = errors.New("corrupt file")
	// ErrNoFieldIDs: a data or equality delete file carries no Iceberg
	// field ids and the table has no name mapping, so its columns cannot be
	// resolved.
	ErrNoFieldIDs = errors.New("parquet file has no field ids")
	// ErrSchemaMismatch: a file column cannot be read as the Iceberg type
	// of the field with the same id.
	ErrSchemaMismatch = errors.New("file column does not match the table schema")
	// ErrUnsupported: the split uses something the reader does not serve,
	// such as a file format other than Parquet and Avro, a compression codec
	// it has no decoder for, or a default value or residual filter it cannot
	// evaluate.
	ErrUnsupported = errors.New("unsupported")
)
