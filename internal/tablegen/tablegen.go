// Package tablegen writes Iceberg tables with iceberg-go's own writers, for
// the tests and benchmarks of reader/, handlers/ and the other packages, and
// reads them back with iceberg-go's Scan.ReadTasks as an oracle that is
// independent of the sidecar's reader. It is test tooling: the sidecar binary
// does not link it (its demo tables are internal/demo's).
//
// Every table lives in whatever catalog the caller passes (in practice
// iceberg-go's hadoop catalog over a local warehouse) and is unpartitioned,
// except IdentityPartitioned. The evolution builders (Evolution, Migrated,
// IdentityPartitioned, AllTypes) return a Built with the expected rows of
// every snapshot; Migrated and IdentityPartitioned write their data files
// with parquet-go, as foreign writers would. Otherwise tables are written
// with internal/icewrite: data files with table.WriteRecords, equality
// deletes with Transaction.WriteEqualityDeletes, positional delete files with
// parquet-go, and every commit goes through Transaction.NewRowDelta;
// deletion vectors are written with dv.DVWriter.
//
// Data file names are deterministic (see DataFileName): the n-th data file a
// builder writes into a table is named 00000-0-00000000-0000-4000-8000-0000000000nn-00001.parquet
// under the table's data directory, so the lexical order of data file paths is
// the order in which the builder wrote them. Delete file names are not.
//
// The package example writes a table of 1,000 rows in one data file, 1% of
// them deleted by position and 1% by equality, and reads it back with the
// oracle.
package tablegen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
)

// ErrInvalidArgument is returned when a builder is called with arguments it
// cannot honour (a negative row count, fractions that do not add up…).
var ErrInvalidArgument = errors.New("tablegen: invalid argument")

// formatVersionKey is the table property that selects the Iceberg format.
const formatVersionKey = "format-version"

// identString renders a table identifier as ns.table for error messages.
func identString(ident table.Identifier) string { return strings.Join(ident, ".") }

// arrowFieldID is the Iceberg field id iceberg-go stamps on an Arrow field.
func arrowFieldID(f arrow.Field) (int, error) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, fmt.Errorf("%w: arrow field %s has no field id", ErrInvalidArgument, f.Name)
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: arrow field %s has field id %q: %w", ErrInvalidArgument, f.Name, v, err)
	}
	return id, nil
}
