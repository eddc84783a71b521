// Package token holds what a split token pins and its encoding: the Split
// type (a data file of one snapshot, or a range of its row groups, with the
// delete files the planner matched to it), and the Signer that turns a split
// into a short signed token and back. It knows no catalog: the reader and
// the HTTP layer use it without linking a catalog SDK, and package splits
// plans the splits it signs.
package token

import (
	"encoding/json"
	"math/bits"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go/format"
)

// DeleteKind says how a delete file names the rows it deletes.
type DeleteKind string

// The delete kinds; their strings are also the values of the
// rows-deleted metric's kind label.
const (
	DeletePosition       DeleteKind = "position"
	DeleteEquality       DeleteKind = "equality"
	DeleteDeletionVector DeleteKind = "deletion_vector"
)

// Split is what a split token pins: one data file of one snapshot (or a
// range of its row groups, see DataFile.Range) and the delete files that the
// planner matched to it. Every field is immutable in
// Iceberg (files are never rewritten in place), so a split always yields the
// same rows.
type Split struct {
	// Catalog names the configured catalog the split was planned in; its
	// FileIO (credentials, location map) opens the split's files. Empty is
	// the default catalog.
	Catalog string `json:"cat,omitempty"`
	// Table is the table's identifier in its catalog (namespace levels,
	// then name): a replica loads the table by it to obtain the FileIO the
	// catalog gives the table (vended credentials), which a token never
	// carries.
	Table []string `json:"tb"`
	// Location is the table location the metadata file records. A token
	// spells the paths under it relative to it, which is most of what makes
	// tokens short; the decoded split always carries absolute paths.
	Location string `json:"loc,omitempty"`
	// MetadataLocation is the table metadata file the split was planned from.
	MetadataLocation string `json:"m"`
	SnapshotID       int64  `json:"s"`
	// SchemaID is the schema the rows are emitted in: the snapshot's schema
	// for time travel, the table's current schema otherwise.
	SchemaID int          `json:"sc"`
	Data     DataFile     `json:"d"`
	Deletes  []DeleteFile `json:"x,omitempty"`
	// Columns are the field ids of the top-level fields emitted, in schema
	// order; empty means every field of the schema.
	Columns []int `json:"c,omitempty"`
	// Encoding pins how values are written, so a token always yields the
	// same bytes.
	Encoding Encoding `json:"e,omitzero"`
	// Meta are the metadata columns the rows carry after the schema's
	// (see MetaColumns); the data file then carries what they need.
	Meta MetaColumns `json:"mc,omitempty"`
	// Filter, when set, is the part of the request's icebergFilter that
	// planning could not decide for this file (its residual), in iceberg's
	// REST JSON expression form (iceberg.ParseExpr reads it back against the
	// split's schema); the reader drops the rows that do not match it.
	Filter json.RawMessage `json:"r,omitempty"`
}

// Part is one file of a packed split after the first, as a version-3
// token spells it: what it does not share with the split's first file
// (the catalog, table, snapshot, schema, projection and encoding are the
// first's).
type Part struct {
	Data    DataFile        `json:"d"`
	Deletes []DeleteFile    `json:"x,omitempty"`
	Filter  json.RawMessage `json:"r,omitempty"`
}

// SameTable reports whether two splits can be packed into one: they read
// the same table's snapshot in the same catalog, schema, projection,
// encoding and metadata columns.
func SameTable(a, b Split) bool {
	return a.Catalog == b.Catalog && slices.Equal(a.Table, b.Table) && a.Location == b.Location && a.MetadataLocation == b.MetadataLocation &&
		a.SnapshotID == b.SnapshotID && a.SchemaID == b.SchemaID && slices.Equal(a.Columns, b.Columns) &&
		a.Encoding == b.Encoding && a.Meta == b.Meta
}

// RowEncoding is the version of the row encoding: how the reader writes a
// split's rows as bytes (value formats, escaping, key order, which values
// a type maps to). It changes with any change to those bytes, so that a
// token planned by one release is never resumed at a byte offset by a
// replica of another: Encoding.Version pins it. The reader's golden files
// name the version they hold (TestGoldenEncodingVersion).
const RowEncoding = 3

// Encoding holds how a split's values are written: the row encoding's
// version the split was planned under, and the choices a client can make.
type Encoding struct {
	// Version is RowEncoding when the split was planned.
	Version int `json:"v,omitempty"`
	// ISOTimestamps writes timestamps as RFC 3339 strings instead of epoch
	// milliseconds.
	ISOTimestamps bool `json:"iso,omitempty"`
	// BinaryAsString writes binary and fixed values as UTF-8 text instead of
	// base64, as Druid's binaryAsString does for Parquet.
	BinaryAsString bool `json:"bas,omitempty"`
	// GeoWKB writes geometry and geography values as base64 WKB instead of
	// WKT.
	GeoWKB bool `json:"wkb,omitempty"`
}

// DataFile describes the data file of a split.
type DataFile struct {
	// Path is the location as written in the manifest; the location map is
	// applied only when the file is opened.
	Path string `json:"p"`
	// Format is the file format as the manifest names it (PARQUET or
	// AVRO); a token leaves out the usual one (tokenpaths.go).
	Format  string `json:"f,omitempty"`
	Size    int64  `json:"z"`
	Records int64  `json:"n"`
	SpecID  int32  `json:"sp,omitempty"`
	// Identity holds the values of the identity-partitioned source columns
	// for every row of the file; the spec requires readers to take them from
	// here when the file does not store the column.
	Identity []IdentityValue `json:"i,omitempty"`
	// Range, when set, narrows the split to the row groups of one part of
	// the file (see RowGroupRange); nil is the whole file, so the token of
	// a file that is not split has no such field.
	Range *RowGroupRange `json:"g,omitempty"`
	// FirstRowID and DataSequence are the file's first_row_id (after
	// inheritance; nil when the file has none) and the data sequence
	// number of its manifest entry: what a row's _row_id and
	// _last_updated_sequence_number inherit when the file stores none.
	// The planner sets them only for a split that serves those columns.
	FirstRowID   *int64 `json:"fr,omitempty"`
	DataSequence *int64 `json:"ds,omitempty"`
	// Partition is the file's partition tuple, for _partition: each
	// partition field of its spec by partition field id (FieldID), with
	// its value in the form IdentityValue documents, as the transform's
	// result type. The planner sets it only for a split that serves
	// _partition.
	Partition []IdentityValue `json:"pt,omitempty"`
}

// RowGroupRange is the part of a data file that one of its splits reads, in
// Iceberg's convention (Java's and Spark's, iceberg-go's FileScanTask.Start
// and Length): the byte range [Start, Start+Length) of the file, and in it
// the row groups whose first page (RowGroupStart) falls in the range. The
// reader finds the row groups in the file's own footer, never in the
// manifest.
//
// The ranges of one file's splits are contiguous and together cover
// [0, size), so every row group falls in exactly one of them however the
// boundaries and the row groups line up: split offsets in a manifest that
// disagree with the file move a row group to a neighbouring split, never
// drop or repeat it, and a range that holds no row group's first page reads
// no rows. The last range (the one that ends at the file's size) also takes
// any row group that starts at or past its end, so a manifest that states
// the file smaller than it is cannot drop one either.
//
// Positions stay file-absolute: the reader counts the rows of every row
// group before the range, so positional deletes and deletion vectors, which
// name rows by their position in the whole file, apply unchanged.
type RowGroupRange struct {
	Start  int64 `json:"s"`
	Length int64 `json:"l"`
	// Records, when set, is the number of rows of the row groups in the
	// range as the planner read them from the file's footer; the reader
	// refuses a file whose footer says otherwise. It is nil when the planner
	// took the boundaries from the manifest's split offsets and did not read
	// the footer.
	Records *int64 `json:"n,omitempty"`
}

// Valid reports whether the range lies inside a file of fileSize bytes.
func (r RowGroupRange) Valid(fileSize int64) bool {
	return r.Start >= 0 && r.Length > 0 && r.Length <= fileSize-r.Start
}

// Contains reports whether the row group whose first page is at offset
// start (RowGroupStart) belongs to the range of a file of fileSize bytes.
func (r RowGroupRange) Contains(start, fileSize int64) bool {
	end := r.Start + r.Length
	return start >= r.Start && (start < end || end >= fileSize)
}

// RowGroupStart is the offset of a Parquet row group's first page: the
// dictionary page of its first column chunk when it has one, else that
// chunk's first data page, and the row group's optional file_offset when it
// has no column. It is what Iceberg's writers record as a data file's split
// offsets (Java's BlockMetaData.getStartingPos, iceberg-go's writer), and
// what a RowGroupRange is matched against.
func RowGroupStart(rg *format.RowGroup) int64 {
	if len(rg.Columns) == 0 {
		return rg.FileOffset
	}
	md := &rg.Columns[0].MetaData
	if d := md.DictionaryPageOffset; d > 0 && d < md.DataPageOffset {
		return d
	}
	return md.DataPageOffset
}

// RecordCount returns the number of rows the split reads before deletes and
// whether that number is exact: the data file's record count for a whole
// file, the footer's count of the range's row groups when the planner read
// it; otherwise an estimate in proportion to the range's bytes. The
// estimates of one file's ranges add up to the file's record count.
func (s Split) RecordCount() (n int64, exact bool) {
	r, d := s.Data.Range, s.Data
	switch {
	case r == nil:
		return d.Records, true
	case r.Records != nil:
		return *r.Records, true
	case d.Size <= 0 || d.Records <= 0:
		return 0, false
	}
	start := min(max(r.Start, 0), d.Size)
	end := min(max(r.Start+r.Length, start), d.Size)
	return proportion(d.Records, end, d.Size) - proportion(d.Records, start, d.Size), false
}

// proportion is floor(n*part/whole) for 0 <= part <= whole, without
// overflowing.
func proportion(n, part, whole int64) int64 {
	hi, lo := bits.Mul64(uint64(n), uint64(part))
	q, _ := bits.Div64(hi, lo, uint64(whole))
	return int64(q)
}

// IdentityValue is the value of one identity-partitioned source column.
// Value is JSON: null; a boolean; an integer for int, long, date (days),
// time (micros), timestamp (micros) and timestamp_ns (nanos); a number for
// float and double; a string for string and uuid (canonical form); base64
// for binary and fixed; the unscaled integer as a decimal string for
// decimal (the scale is the field type's).
type IdentityValue struct {
	FieldID int             `json:"f"`
	Value   json.RawMessage `json:"v"`
}

// DeleteFile describes one delete file that applies to a split's data file.
type DeleteFile struct {
	// Kind and Format are spelled short in a token (see compactSplit): the
	// wire tags are omitempty because a token leaves their common values
	// out, not because they may be empty.
	Kind    DeleteKind `json:"k,omitempty"`
	Path    string     `json:"p"`
	Format  string     `json:"f,omitempty"`
	Size    int64      `json:"z"`
	Records int64      `json:"n"`
	// EqualityIDs are the field ids an equality delete file matches on.
	EqualityIDs []int `json:"e,omitempty"`
	// ContentOffset, ContentSize and ReferencedDataFile locate a deletion
	// vector's blob inside its puffin file.
	ContentOffset      *int64 `json:"o,omitempty"`
	ContentSize        *int64 `json:"l,omitempty"`
	ReferencedDataFile string `json:"r,omitempty"`
}

// Count returns how many of the split's delete files are of kind k.
func (s Split) Count(k DeleteKind) int {
	n := 0
	for _, d := range s.Deletes {
		if d.Kind == k {
			n++
		}
	}
	return n
}

// TableSchema is what a reader needs of a table besides the split: the
// schema rows are emitted in, and the name mapping for data files written
// without field ids.
type TableSchema struct {
	Schema *iceberg.Schema
	// NameMapping is the table's schema.name-mapping.default; nil when the
	// table has none.
	NameMapping iceberg.NameMapping
	// PartitionType is the table's partition type, the type of the
	// _partition metadata column (see MetaColumns.Fields); nil when the
	// split serves no _partition.
	PartitionType *iceberg.StructType
}
