package reader

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/reader/avro"
	"github.com/druidiceberg/sidecar/reader/column"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/splits/split"
)

// Avro data and delete files are opened here through the split's FileIO
// and decoded by package avro into the leaves a stream reads, a chunk of
// records at a time, so that everything past the decoding (column
// resolution, deletes, residual filters, value encoding) is the Parquet
// path's own and the two formats give the same bytes for the same values.

// isAvro reports whether a file format, as a split spells it, is Avro.
func isAvro(format string) bool { return strings.EqualFold(format, string(iceberg.AvroFile)) }

// checkFormat refuses a data or delete file in a format the reader does not
// read (ORC); what names the file ("data file").
func checkFormat(what, path, format string) error {
	if format == "" || strings.EqualFold(format, string(iceberg.ParquetFile)) || isAvro(format) {
		return nil
	}
	return fmt.Errorf("%w: %s %s is %s; only Parquet and Avro files are read", ErrUnsupported, what, path, format)
}

// openAvro opens the Avro file at path through fs and reads its header;
// what names it in errors ("data file"). records is the manifest's row
// count, 0 when unknown.
func openAvro(fs *watchedIO, what, path string, size, records int64) (*avro.File, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	a, err := avro.Open(f, what, path, size, records, fs.classify)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return a, nil
}

// openAvroData opens the Avro data file d.
func openAvroData(fs *watchedIO, d split.DataFile) (*avro.File, error) {
	if d.Range != nil {
		return nil, fmt.Errorf("read data file %s: %w: a range of row groups of an Avro file", d.Path, split.ErrMalformedToken)
	}
	return openAvro(fs, "data file", d.Path, d.Size, d.Records)
}

// runAvro writes the surviving rows of an Avro data file into b, a chunk
// of records at a time; positions count records from the file's first.
func (f *fileStream) runAvro(b *batch, dels *positionWalk) error {
	var base int64
	for {
		n, err := f.avro.Fill()
		if err != nil {
			return fmt.Errorf("read data file %s: %w", f.path, err)
		}
		if n == 0 {
			return nil
		}
		for i := range n {
			for _, l := range f.leaves {
				if l.MaxRep == 0 {
					// A flat column: its row is the next entry (as in run).
					l.Cur, l.Pos, l.RowEnd, l.VPos = &l.Batch, l.Next, l.Next+1, l.NextV
					if l.Batch.Def == nil || int(l.Batch.Def[l.Next]) == l.MaxDef {
						l.NextV++
					}
					l.Next++
					continue
				}
				if err := l.Advance(); err != nil {
					return fmt.Errorf("read data file %s: %w", f.path, err)
				}
			}
			if err := f.row(b, dels, base+int64(i)); err != nil {
				return err
			}
		}
		base += int64(n)
	}
}

// columnFile is a delete file opened for reading by columns: a Parquet
// file, or an Avro file shredded into the same leaves.
type columnFile struct {
	root *parquet.Column
	pf   *parquet.File
	file icebergio.File
	avro *avro.File
}

// openColumns opens the delete file d, Parquet or Avro; what names it in
// errors ("equality delete file").
func openColumns(fs *watchedIO, what string, d split.DeleteFile) (*columnFile, error) {
	if err := checkFormat(what, d.Path, d.Format); err != nil {
		return nil, err
	}
	if isAvro(d.Format) {
		a, err := openAvro(fs, what, d.Path, d.Size, d.Records)
		if err != nil {
			return nil, err
		}
		return &columnFile{root: a.Root, avro: a}, nil
	}
	pf, f, err := openParquet(fs, what, d.Path, d.Size)
	if err != nil {
		return nil, err
	}
	return &columnFile{root: pf.Root(), pf: pf, file: f}, nil
}

// scan reads every row of the file through the leaves (flat columns only)
// and calls row after each row is loaded.
func (c *columnFile) scan(fs *watchedIO, leaves []*column.Leaf, row func() error) error {
	if c.avro != nil {
		return c.avro.Scan(leaves, row)
	}
	return scanRows(fs, c.pf, c.file, leaves, row)
}

// Close closes the file.
func (c *columnFile) Close() error {
	if c.avro != nil {
		return c.avro.Close()
	}
	return c.file.Close()
}
