package splits

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
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

// Split is what a split token pins: one data file of one snapshot and the
// delete files that the planner matched to it. Every field is immutable in
// Iceberg (files are never rewritten in place), so a split always yields the
// same rows.
type Split struct {
	// Catalog names the configured catalog the split was planned in; its
	// FileIO (credentials, location map) opens the split's files. Empty is
	// the default catalog.
	Catalog string `json:"cat,omitempty"`
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
	// Filter, when set, is the part of the request's icebergFilter that
	// planning could not decide for this file (its residual), in iceberg's
	// REST JSON expression form (iceberg.ParseExpr reads it back against the
	// split's schema); the reader drops the rows that do not match it.
	Filter json.RawMessage `json:"r,omitempty"`
}

// Encoding holds the value-encoding choices a client can make.
type Encoding struct {
	// ISOTimestamps writes timestamps as RFC 3339 strings instead of epoch
	// milliseconds.
	ISOTimestamps bool `json:"iso,omitempty"`
	// BinaryAsString writes binary and fixed values as UTF-8 text instead of
	// base64, as Druid's binaryAsString does for Parquet.
	BinaryAsString bool `json:"bas,omitempty"`
}

// DataFile describes the data file of a split.
type DataFile struct {
	// Path is the location as written in the manifest; the location map is
	// applied only when the file is opened.
	Path string `json:"p"`
	// Format is the file format as the manifest names it; a token leaves
	// out PARQUET, the only format served.
	Format  string `json:"f,omitempty"`
	Size    int64  `json:"z"`
	Records int64  `json:"n"`
	SpecID  int32  `json:"sp,omitempty"`
	// Identity holds the values of the identity-partitioned source columns
	// for every row of the file; the spec requires readers to take them from
	// here when the file does not store the column.
	Identity []IdentityValue `json:"i,omitempty"`
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

// FromTask describes one planned scan task as a split of the given snapshot,
// with meta the metadata the task was planned from.
func FromTask(meta table.Metadata, metadataLocation string, snapshotID int64, schemaID int, task table.FileScanTask) (Split, error) {
	return newSplitMaker(meta, metadataLocation, snapshotID, schemaID).split(task)
}

// splitMaker is FromTask for every task of one plan: it looks up each
// partition spec's identity fields once, not once per task (iceberg-go
// hands out a copy of a spec on every lookup).
type splitMaker struct {
	meta             table.Metadata
	metadataLocation string
	snapshotID       int64
	schemaID         int
	identity         map[int32][]identityField
}

func newSplitMaker(meta table.Metadata, metadataLocation string, snapshotID int64, schemaID int) *splitMaker {
	return &splitMaker{meta: meta, metadataLocation: metadataLocation, snapshotID: snapshotID, schemaID: schemaID,
		identity: map[int32][]identityField{}}
}

func (m *splitMaker) split(task table.FileScanTask) (Split, error) {
	f := task.File
	if f.FileFormat() != iceberg.ParquetFile {
		return Split{}, fmt.Errorf("%w: data file %s is %s; only Parquet data files are served",
			ErrUnsupported, f.FilePath(), f.FileFormat())
	}
	s := Split{
		MetadataLocation: m.metadataLocation,
		SnapshotID:       m.snapshotID,
		SchemaID:         m.schemaID,
		Data: DataFile{
			Path:    f.FilePath(),
			Format:  string(f.FileFormat()),
			Size:    f.FileSizeBytes(),
			Records: f.Count(),
			SpecID:  f.SpecID(),
		},
	}
	if m.meta != nil {
		s.Location = m.meta.Location()
		fields, ok := m.identity[f.SpecID()]
		if !ok {
			var err error
			if fields, err = identityFields(m.meta, f); err != nil {
				return Split{}, err
			}
			m.identity[f.SpecID()] = fields
		}
		ids, err := identityValues(fields, f)
		if err != nil {
			return Split{}, err
		}
		s.Data.Identity = ids
	}
	add := func(kind DeleteKind, files []iceberg.DataFile) {
		for _, d := range files {
			df := DeleteFile{
				Kind:          kind,
				Path:          d.FilePath(),
				Format:        string(d.FileFormat()),
				Size:          d.FileSizeBytes(),
				Records:       d.Count(),
				ContentOffset: d.ContentOffset(),
				ContentSize:   d.ContentSizeInBytes(),
			}
			if kind == DeleteEquality {
				df.EqualityIDs = append([]int(nil), d.EqualityFieldIDs()...)
			}
			if r := d.ReferencedDataFile(); r != nil {
				df.ReferencedDataFile = *r
			}
			s.Deletes = append(s.Deletes, df)
		}
	}
	add(DeletePosition, task.DeleteFiles)
	add(DeleteEquality, task.EqualityDeleteFiles)
	add(DeleteDeletionVector, task.DeletionVectorFiles)
	return s, nil
}
