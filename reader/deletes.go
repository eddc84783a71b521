package reader

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/splits"
)

// The reserved field ids and names of a positional delete file's columns.
const (
	fieldIDDeleteFilePath = 2147483546
	fieldIDDeletePos      = 2147483545
	nameDeleteFilePath    = "file_path"
	nameDeletePos         = "pos"
)

// positions is the set of deleted row positions of one data file, from its
// positional delete files and deletion vectors, as one bitmap.
type positions struct {
	// all holds every deleted position; nil when the split has neither kind.
	all *dv.RoaringPositionBitmap
	// byPosition holds the positions named by positional delete files when
	// the split also has a deletion vector, to count each row under the kind
	// that matched first; nil otherwise, and kind says which kind all is.
	byPosition *dv.RoaringPositionBitmap
	kind       splits.DeleteKind
	count      int64
}

// kindOf returns the delete kind a deleted position is counted under.
func (p *positions) kindOf(pos uint64) splits.DeleteKind {
	if p.byPosition == nil {
		return p.kind
	}
	if p.byPosition.Contains(pos) {
		return splits.DeletePosition
	}
	return splits.DeleteDeletionVector
}

// loadPositions reads every positional delete file and deletion vector of
// the split.
func loadPositions(fs *watchedIO, s splits.Split) (*positions, error) {
	var byPos, byDV *dv.RoaringPositionBitmap
	for _, d := range s.Deletes {
		switch d.Kind {
		case splits.DeletePosition:
			if byPos == nil {
				byPos = dv.NewRoaringPositionBitmap()
			}
			if err := readPositionDeletes(fs, d, s.Data.Path, byPos); err != nil {
				return nil, err
			}
		case splits.DeleteDeletionVector:
			bm, err := readDeletionVector(fs, d, s.Data.Path)
			if err != nil {
				return nil, err
			}
			if byDV == nil {
				byDV = bm
			} else {
				byDV.Or(bm)
			}
		}
	}
	p := &positions{}
	switch {
	case byPos != nil && byDV != nil:
		p.all = dv.NewRoaringPositionBitmap()
		p.all.Or(byPos)
		p.all.Or(byDV)
		p.byPosition = byPos
	case byPos != nil:
		p.all, p.kind = byPos, splits.DeletePosition
	case byDV != nil:
		p.all, p.kind = byDV, splits.DeleteDeletionVector
	default:
		return p, nil
	}
	p.count = p.all.Cardinality()
	if p.count == 0 {
		p.all, p.byPosition = nil, nil
	}
	return p, nil
}

// readPositionDeletes adds to bm the positions that the positional delete
// file d names for the data file dataPath. The comparison is on the path
// exactly as the manifests spell it, never on the location-mapped one.
func readPositionDeletes(fs *watchedIO, d splits.DeleteFile, dataPath string, bm *dv.RoaringPositionBitmap) (err error) {
	if !strings.EqualFold(d.Format, string(iceberg.ParquetFile)) {
		return fmt.Errorf("%w: positional delete file %s is %s; only Parquet delete files are read",
			ErrUnsupported, d.Path, d.Format)
	}
	pf, f, err := openParquet(fs, "positional delete file", d.Path, d.Size)
	if err != nil {
		return err
	}
	defer closeErr(f, &err, "close positional delete file "+d.Path)
	root := pf.Root()
	pathCol := deleteColumn(root, fieldIDDeleteFilePath, nameDeleteFilePath)
	posCol := deleteColumn(root, fieldIDDeletePos, nameDeletePos)
	if pathCol == nil || posCol == nil || pathCol.Type().Kind() != parquet.ByteArray || posCol.Type().Kind() != parquet.Int64 {
		return fmt.Errorf("read positional delete file %s: %w: no file_path and pos columns", d.Path, ErrCorruptFile)
	}
	r := &resolver{path: d.Path, leaves: map[int]*leaf{}}
	lp := r.addLeaf(pathCol, valueType{conv: convString})
	lq := r.addLeaf(posCol, valueType{conv: convInt64})
	err = scanRows(fs, pf, r.order, func() error {
		p := &lp.row[0]
		if p.IsNull() || string(p.ByteArray()) != dataPath {
			return nil
		}
		q := &lq.row[0]
		if q.IsNull() || q.Int64() < 0 {
			return fmt.Errorf("%w: position %v", ErrCorruptFile, *q)
		}
		bm.Set(uint64(q.Int64()))
		return nil
	})
	if err != nil {
		return fmt.Errorf("read positional delete file %s: %w", d.Path, err)
	}
	return nil
}

// deleteColumn finds a top-level column of a delete file by its reserved
// field id, or by its reserved name for writers that left the ids out.
func deleteColumn(root *parquet.Column, id int, name string) *parquet.Column {
	for _, c := range root.Columns() {
		if c.ID() == id && c.Leaf() {
			return c
		}
	}
	if c := root.Column(name); c != nil && c.Leaf() {
		return c
	}
	return nil
}

// readDeletionVector reads the deletion vector blob that d locates inside
// its puffin file, through iceberg-go's own decoder.
func readDeletionVector(fs *watchedIO, d splits.DeleteFile, dataPath string) (*dv.RoaringPositionBitmap, error) {
	if d.ContentOffset == nil || d.ContentSize == nil {
		return nil, fmt.Errorf("read deletion vector %s: %w: no content offset and size", d.Path, ErrCorruptFile)
	}
	ref := d.ReferencedDataFile
	if ref == "" {
		ref = dataPath
	}
	if ref != dataPath {
		return nil, fmt.Errorf("read deletion vector %s: %w: it references %s, not %s",
			d.Path, ErrCorruptFile, ref, dataPath)
	}
	b, err := iceberg.NewDataFileBuilder(iceberg.PartitionSpec{}, iceberg.EntryContentPosDeletes,
		d.Path, iceberg.PuffinFile, nil, nil, nil, d.Records, d.Size)
	if err != nil {
		return nil, fmt.Errorf("describe deletion vector %s: %w: %w", d.Path, ErrCorruptFile, err)
	}
	df := b.ReferencedDataFile(ref).ContentOffset(*d.ContentOffset).ContentSizeInBytes(*d.ContentSize).Build()
	bm, err := dv.ReadDV(fs, df)
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("read deletion vector %s: %w", d.Path, err)
		}
		return nil, fmt.Errorf("read deletion vector %s: %w", d.Path, fs.classify(err))
	}
	return bm, nil
}

// scanRows reads every row of pf through the leaves (flat columns only) and
// calls row after each row is loaded.
func scanRows(fs *watchedIO, pf *parquet.File, leaves []*leaf, row func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorruptFile, r)
		}
		for _, l := range leaves {
			if cerr := l.stop(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	for _, rg := range pf.RowGroups() {
		chunks := rg.ColumnChunks()
		for _, l := range leaves {
			if err := l.start(chunks[l.index].Pages()); err != nil {
				return err
			}
		}
		for range rg.NumRows() {
			for _, l := range leaves {
				if err := l.advance(); err != nil {
					return fs.classify(err)
				}
			}
			if err := row(); err != nil {
				return err
			}
		}
		for _, l := range leaves {
			if err := l.end(); err != nil {
				return fs.classify(err)
			}
		}
	}
	return nil
}
