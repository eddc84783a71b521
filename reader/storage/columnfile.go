package storage

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/avro"
	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/token"
)

// IsAvro reports whether a file format, as a split spells it, is Avro.
func IsAvro(format string) bool { return strings.EqualFold(format, string(iceberg.AvroFile)) }

// CheckFormat refuses a data or delete file in a format the reader does not
// read (ORC); what names the file ("data file").
func CheckFormat(what, path, format string) error {
	if format == "" || strings.EqualFold(format, string(iceberg.ParquetFile)) || IsAvro(format) {
		return nil
	}
	return fmt.Errorf("%w: %s %s is %s; only Parquet and Avro files are read", readerr.ErrUnsupported, what, path, format)
}

// openAvro opens the Avro file at path through fs and reads its header;
// what names it in errors ("data file"). records is the manifest's row
// count, 0 when unknown.
func openAvro(fs *Watched, what, path string, size, records int64) (*avro.File, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	a, err := avro.Open(f, what, path, size, records, fs.Classify)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return a, nil
}

// OpenAvroData opens the Avro data file d.
func OpenAvroData(fs *Watched, d token.DataFile) (*avro.File, error) {
	if d.Range != nil {
		return nil, fmt.Errorf("read data file %s: %w: a range of row groups of an Avro file", d.Path, token.ErrMalformedToken)
	}
	return openAvro(fs, "data file", d.Path, d.Size, d.Records)
}

// ColumnFile is a delete file opened for reading by columns: a Parquet
// file, or an Avro file shredded into the same leaves.
type ColumnFile struct {
	Root    *parquet.Column
	Parquet *parquet.File
	file    icebergio.File
	avro    *avro.File
}

// OpenColumns opens the delete file d, Parquet or Avro; what names it in
// errors ("equality delete file").
func OpenColumns(fs *Watched, what string, d token.DeleteFile) (*ColumnFile, error) {
	if err := CheckFormat(what, d.Path, d.Format); err != nil {
		return nil, err
	}
	if IsAvro(d.Format) {
		a, err := openAvro(fs, what, d.Path, d.Size, d.Records)
		if err != nil {
			return nil, err
		}
		return &ColumnFile{Root: a.Root, avro: a}, nil
	}
	pf, f, err := OpenParquet(fs, what, d.Path, d.Size)
	if err != nil {
		return nil, err
	}
	return &ColumnFile{Root: pf.Root(), Parquet: pf, file: f}, nil
}

// Scan reads every row of the file through the leaves (flat columns only)
// and calls row after each row is loaded.
func (c *ColumnFile) Scan(fs *Watched, leaves []*column.Leaf, row func() error) error {
	if c.avro != nil {
		return c.avro.Scan(leaves, row)
	}
	return scanRows(fs, c.Parquet, c.file, leaves, row)
}

// Close closes the file.
func (c *ColumnFile) Close() error {
	if c.avro != nil {
		return c.avro.Close()
	}
	return c.file.Close()
}

// scanRows reads every row of pf, whose bytes src holds, through the
// leaves (flat columns only) and calls row after each row is loaded.
func scanRows(fs *Watched, pf *parquet.File, src io.ReaderAt, leaves []*column.Leaf, row func() error) (err error) {
	defer func() {
		for _, l := range leaves {
			l.Stop()
		}
	}()
	var scratch parquetpage.Scratch
	for _, rg := range pf.Metadata().RowGroups {
		for _, l := range leaves {
			l.Start(src, &rg.Columns[l.Index].MetaData, &scratch)
		}
		for range rg.NumRows {
			for _, l := range leaves {
				if err := l.Advance(); err != nil {
					return fs.Classify(err)
				}
			}
			if err := row(); err != nil {
				return err
			}
		}
		for _, l := range leaves {
			if err := l.End(); err != nil {
				return fs.Classify(err)
			}
		}
	}
	return nil
}
