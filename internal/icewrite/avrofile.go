package icewrite

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// WriteAvroFile writes records as one deflate-compressed Avro Object
// Container File at location through tbl's FileIO and returns the file's
// size. schema is the file's Avro schema as Iceberg writes it, field ids
// as "field-id" (and "element-id", "key-id", "value-id") attributes;
// records are decoded-Avro values (map[string]any for a record, nil for a
// null). Like WriteParquetFile it writes a file and nothing else.
func WriteAvroFile(ctx context.Context, tbl *table.Table, location, schema string, records []map[string]any) (int64, error) {
	s, err := avro.Parse(schema)
	if err != nil {
		return 0, fmt.Errorf("%w: avro schema of %s: %w", ErrInvalidArgument, location, err)
	}
	wfs, err := WriteFS(ctx, tbl)
	if err != nil {
		return 0, err
	}
	f, err := wfs.Create(location)
	if err != nil {
		return 0, fmt.Errorf("create avro file %s: %w", location, err)
	}
	cw := &countingWriter{w: f}
	w, err := ocf.NewWriter(cw, s, ocf.WithCodec(ocf.DeflateCodec(6)))
	if err != nil {
		_ = f.Close()
		return 0, fmt.Errorf("write avro file %s: %w", location, err)
	}
	for _, r := range records {
		if err := w.Encode(r); err != nil {
			_ = w.Close()
			_ = f.Close()
			return 0, fmt.Errorf("write avro file %s: %w", location, err)
		}
	}
	if err := w.Close(); err != nil {
		_ = f.Close()
		return 0, fmt.Errorf("finish avro file %s: %w", location, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("close avro file %s: %w", location, err)
	}
	return cw.n, nil
}
