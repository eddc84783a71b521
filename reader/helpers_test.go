package reader_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

// writeParquet writes rows as a Parquet file named name in dir and returns
// its path and size.
func writeParquet[T any](t testing.TB, dir, name string, rows []T, opts ...parquet.WriterOption) (string, int64) {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, opts...); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := writeFile(path, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return path, int64(buf.Len())
}

// writeDV writes a deletion vector of the data file dataPath, deleting the
// given positions, as the Puffin file name in dir, and returns it as the
// split's delete file.
func writeDV(t testing.TB, dir, name, dataPath string, positions ...int64) token.DeleteFile {
	t.Helper()
	w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	if err := w.Add(dataPath, positions, 0, nil); err != nil {
		t.Fatal(err)
	}
	files, err := w.Flush(context.Background(), filepath.Join(dir, name))
	if err != nil || len(files) != 1 {
		t.Fatalf("write DV: %v (%d files)", err, len(files))
	}
	f := files[0]
	return token.DeleteFile{
		Kind: token.DeleteDeletionVector, Path: f.FilePath(), Format: "PUFFIN", Size: f.FileSizeBytes(),
		Records: f.Count(), ContentOffset: f.ContentOffset(), ContentSize: f.ContentSizeInBytes(),
		ReferencedDataFile: *f.ReferencedDataFile(),
	}
}

// bucket is the location prefix test tables pretend to live under; the
// test FS maps it onto a temporary directory.
const bucket = "s3://bucket/warehouse/t"

// testFS returns an FS that maps bucket onto dir.
func testFS(dir string) *catalog.FS {
	return catalog.NewFS(nil, []catalog.Mapping{{From: bucket, To: dir}})
}

// fsReader is a Reader whose splits all read through one FileIO, as the
// tests' tables do.
type fsReader struct {
	*reader.Reader
	fs icebergio.IO
}

// newReader returns a Reader that opens every split through fs.
func newReader(fs icebergio.IO, opts ...reader.Option) fsReader {
	return fsReader{Reader: reader.New(nil, opts...), fs: fs}
}

func (r fsReader) Open(ctx context.Context, s token.Split, t token.TableSchema) (*reader.Stream, error) {
	return r.Reader.Open(ctx, r.fs, s, t)
}

func (r fsReader) OpenAll(ctx context.Context, parts []token.Split, t token.TableSchema) (*reader.Stream, error) {
	return r.Reader.OpenAll(ctx, r.fs, parts, t)
}

// dataSplit describes a data file written under dir, named by its bucket
// location.
func dataSplit(name string, size, records int64, deletes ...token.DeleteFile) token.Split {
	return token.Split{
		Data: token.DataFile{
			Path: bucket + "/" + name, Format: "PARQUET", Size: size, Records: records,
		},
		Deletes: deletes,
	}
}

// readAll opens and runs a split of a table without a name mapping and
// returns its output lines.
func readAll(t testing.TB, r fsReader, s token.Split, schema *iceberg.Schema) ([]string, reader.Stats) {
	t.Helper()
	return readTable(t, r, s, token.TableSchema{Schema: schema})
}

// readTable opens and runs a split and returns its output lines.
func readTable(t testing.TB, r fsReader, s token.Split, ts token.TableSchema) ([]string, reader.Stats) {
	t.Helper()
	return readParts(t, r, []token.Split{s}, ts)
}

// readParts opens and runs the files parts as one (packed) split and
// returns its output lines.
func readParts(t testing.TB, r fsReader, parts []token.Split, ts token.TableSchema) ([]string, reader.Stats) {
	t.Helper()
	ctx := context.Background()
	st, err := r.OpenAll(ctx, parts, ts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer st.Close()
	var buf bytes.Buffer
	if err := st.Run(ctx, &buf, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	out := strings.TrimSuffix(buf.String(), "\n")
	if out == "" {
		return nil, st.Stats()
	}
	return strings.Split(out, "\n"), st.Stats()
}

// field is a shorthand for an optional schema field.
func field(id int, name string, typ iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: typ}
}

// tableOf wraps a schema without a name mapping.
func tableOf(schema *iceberg.Schema) token.TableSchema { return token.TableSchema{Schema: schema} }

func ptr[T any](v T) *T { return &v }

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
