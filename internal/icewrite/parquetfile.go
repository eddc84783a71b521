package icewrite

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"
)

// WriteParquetFile writes rows as one zstd-compressed Parquet file with
// parquet-go (schema from T's struct tags, field ids from their id(…) tags,
// unless opts give a schema) at location through tbl's FileIO and returns
// the file's size. It writes a file and nothing else: describing it to
// Iceberg is the caller's business.
func WriteParquetFile[T any](ctx context.Context, tbl *table.Table, location string, rows []T, opts ...parquet.WriterOption) (int64, error) {
	wfs, err := WriteFS(ctx, tbl)
	if err != nil {
		return 0, err
	}
	f, err := wfs.Create(location)
	if err != nil {
		return 0, fmt.Errorf("create parquet file %s: %w", location, err)
	}
	cw := &countingWriter{w: f}
	pw := parquet.NewGenericWriter[T](cw, append([]parquet.WriterOption{parquet.Compression(&parquet.Zstd)}, opts...)...)
	if _, err := pw.Write(rows); err != nil {
		_ = pw.Close()
		_ = f.Close()
		return 0, fmt.Errorf("write parquet file %s: %w", location, err)
	}
	if err := pw.Close(); err != nil {
		_ = f.Close()
		return 0, fmt.Errorf("finish parquet file %s: %w", location, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("close parquet file %s: %w", location, err)
	}
	return cw.n, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
