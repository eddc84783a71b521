package splits

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// FromTask describes one planned scan task as a split of the given snapshot,
// with meta the metadata the task was planned from.
func FromTask(meta table.Metadata, metadataLocation string, snapshotID int64, schemaID int, task table.FileScanTask) (token.Split, error) {
	return newSplitMaker(meta, metadataLocation, snapshotID, schemaID).split(task)
}

// splitMaker is FromTask for every task of one plan: it looks up each
// partition spec's identity fields once, not once per task (iceberg-go
// hands out a copy of a spec on every lookup).
type splitMaker struct {
	// catalog and ident name the table's catalog and identifier in it.
	catalog          string
	ident            []string
	meta             table.Metadata
	metadataLocation string
	snapshotID       int64
	schemaID         int
	identity         map[int32][]identityField
	// storage refuses a location whose store the catalog cannot open
	// (see StorageChecker); nil checks nothing.
	storage func(location string) error
}

// StorageChecker is a Catalog that can tell, before anything opens it,
// whether it has a FileIO for a location's store
// (catalog.Catalog.Storage).
type StorageChecker interface {
	Storage(location string) error
}

// checking has the maker refuse the data and delete files cat cannot open,
// when cat is a StorageChecker.
func (m *splitMaker) checking(cat Catalog) *splitMaker {
	if sc, ok := cat.(StorageChecker); ok {
		m.storage = sc.Storage
	}
	return m
}

// openable refuses a file of the split whose store cannot be opened, naming
// what the file is to the table.
func (m *splitMaker) openable(what, location string) error {
	if m.storage == nil {
		return nil
	}
	if err := m.storage(location); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func newSplitMaker(meta table.Metadata, metadataLocation string, snapshotID int64, schemaID int) *splitMaker {
	return &splitMaker{meta: meta, metadataLocation: metadataLocation, snapshotID: snapshotID, schemaID: schemaID,
		identity: map[int32][]identityField{}}
}

// in names the catalog and the table's identifier in it, which the splits
// carry.
func (m *splitMaker) in(catalog string, ident []string) *splitMaker {
	m.catalog, m.ident = catalog, ident
	return m
}

// identityOf returns the identity fields of data file f's partition spec,
// worked out once per spec.
func (m *splitMaker) identityOf(f iceberg.DataFile) ([]identityField, error) {
	fields, ok := m.identity[f.SpecID()]
	if !ok {
		var err error
		if fields, err = identityFields(m.meta, f); err != nil {
			return nil, err
		}
		m.identity[f.SpecID()] = fields
	}
	return fields, nil
}

func (m *splitMaker) split(task table.FileScanTask) (token.Split, error) {
	f := task.File
	if !rowFormat(f.FileFormat()) {
		return token.Split{}, fmt.Errorf("%w: data file %s is %s; only Parquet and Avro data files are served",
			fault.ErrUnsupported, f.FilePath(), f.FileFormat())
	}
	if err := m.openable("data file", f.FilePath()); err != nil {
		return token.Split{}, err
	}
	s := token.Split{
		Catalog:          m.catalog,
		Table:            m.ident,
		MetadataLocation: m.metadataLocation,
		SnapshotID:       m.snapshotID,
		SchemaID:         m.schemaID,
		Data: token.DataFile{
			Path:    f.FilePath(),
			Format:  string(f.FileFormat()),
			Size:    f.FileSizeBytes(),
			Records: f.Count(),
			SpecID:  f.SpecID(),
		},
	}
	if m.meta != nil {
		s.Location = m.meta.Location()
		fields, err := m.identityOf(f)
		if err != nil {
			return token.Split{}, err
		}
		ids, err := identityValues(fields, f)
		if err != nil {
			return token.Split{}, err
		}
		s.Data.Identity = ids
	}
	add := func(kind token.DeleteKind, files []iceberg.DataFile) error {
		for _, d := range files {
			// Refused here, when planning, rather than when the first
			// stream opens it.
			ok, want := rowFormat(d.FileFormat()), "Parquet and Avro"
			if kind == token.DeleteDeletionVector {
				ok, want = d.FileFormat() == iceberg.PuffinFile, string(iceberg.PuffinFile)
			}
			if !ok {
				return fmt.Errorf("%w: %s delete file %s of data file %s is %s; only %s ones are served",
					fault.ErrUnsupported, kind, d.FilePath(), f.FilePath(), d.FileFormat(), want)
			}
			if err := m.openable(fmt.Sprintf("%s delete file of data file %s", kind, f.FilePath()), d.FilePath()); err != nil {
				return err
			}
			s.Deletes = append(s.Deletes, DeleteFileOf(kind, d))
		}
		return nil
	}
	if err := add(token.DeletePosition, task.DeleteFiles); err != nil {
		return token.Split{}, err
	}
	if err := add(token.DeleteEquality, task.EqualityDeleteFiles); err != nil {
		return token.Split{}, err
	}
	if err := add(token.DeleteDeletionVector, task.DeletionVectorFiles); err != nil {
		return token.Split{}, err
	}
	return s, nil
}

// rowFormat reports whether the row path reads data and delete files of
// format f: Parquet and Avro, not ORC.
func rowFormat(f iceberg.FileFormat) bool {
	return f == iceberg.ParquetFile || f == iceberg.AvroFile
}

// DeleteFileOf describes the delete file d, of the given kind, as a split
// carries it.
func DeleteFileOf(kind token.DeleteKind, d iceberg.DataFile) token.DeleteFile {
	df := token.DeleteFile{
		Kind:          kind,
		Path:          d.FilePath(),
		Format:        string(d.FileFormat()),
		Size:          d.FileSizeBytes(),
		Records:       d.Count(),
		ContentOffset: d.ContentOffset(),
		ContentSize:   d.ContentSizeInBytes(),
	}
	if kind == token.DeleteEquality {
		df.EqualityIDs = append([]int(nil), d.EqualityFieldIDs()...)
	}
	if r := d.ReferencedDataFile(); r != nil {
		df.ReferencedDataFile = *r
	}
	return df
}
