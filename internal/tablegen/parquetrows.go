package tablegen

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetRows decodes a whole Parquet file (a raw data file, as the
// sidecar's /files route serves it) with arrow-go and encodes its rows as
// OracleRows does: the values Druid's Parquet reader gives, so that raw
// files and row streams compare alike. Keys are the file's column names.
func ParquetRows(ctx context.Context, data []byte) ([]string, error) {
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("open parquet: %w", err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read parquet schema: %w", err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("read parquet: %w", err)
	}
	defer tbl.Release()
	sc := tbl.Schema()
	keys := make([][]byte, sc.NumFields())
	for i, f := range sc.Fields() {
		keys[i] = appendJSONString(nil, f.Name)
	}
	rows := []string{}
	var buf []byte
	for c := range tbl.NumCols() {
		if tbl.Column(int(c)).Len() != int(tbl.NumRows()) {
			return nil, fmt.Errorf("read parquet: column %d has %d values for %d rows", c, tbl.Column(int(c)).Len(), tbl.NumRows())
		}
	}
	for r := range int(tbl.NumRows()) {
		buf = append(buf[:0], '{')
		for c := range int(tbl.NumCols()) {
			if c > 0 {
				buf = append(buf, ',')
			}
			buf = append(append(buf, keys[c]...), ':')
			// Find the chunk that holds row r.
			chunks := tbl.Column(c).Data().Chunks()
			i := r
			for _, ch := range chunks {
				if i < ch.Len() {
					if buf, err = appendValue(buf, ch, i); err != nil {
						return nil, fmt.Errorf("encode column %s: %w", sc.Field(c).Name, err)
					}
					break
				}
				i -= ch.Len()
			}
		}
		rows = append(rows, string(append(buf, '}')))
	}
	return rows, nil
}
