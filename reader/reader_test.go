package reader_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/token"
)

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	s, _ := writeIDs(t, dir, 4)
	type noIDs struct {
		ID int64 `parquet:"id"`
	}
	_, zNoIDs := writeParquet(t, dir, "noids.parquet", []noIDs{{1}})
	if err := os.WriteFile(filepath.Join(dir, "junk.parquet"), []byte("PAR1 this is not parquet PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	withDeletes := func(d ...token.DeleteFile) token.Split {
		c := s
		c.Deletes = d
		return c
	}
	cases := []struct {
		name   string
		split  token.Split
		schema *iceberg.Schema
		want   error
	}{
		{"missing data file", dataSplit("nope.parquet", 10, 1), idSchema, fs.ErrNotExist},
		{"missing positional delete file", withDeletes(token.DeleteFile{Kind: token.DeletePosition, Path: bucket + "/gone.parquet", Format: "PARQUET"}), idSchema, fs.ErrNotExist},
		{"missing equality delete file", withDeletes(token.DeleteFile{Kind: token.DeleteEquality, Path: bucket + "/gone.parquet", Format: "PARQUET", EqualityIDs: []int{1}}), idSchema, fs.ErrNotExist},
		{"corrupt data file", dataSplit("junk.parquet", 29, 1), idSchema, reader.ErrCorruptFile},
		{"corrupt delete file", withDeletes(token.DeleteFile{Kind: token.DeletePosition, Path: bucket + "/junk.parquet", Format: "PARQUET"}), idSchema, reader.ErrCorruptFile},
		{"no field ids", dataSplit("noids.parquet", zNoIDs, 1), idSchema, reader.ErrNoFieldIDs},
		{"string read as long", s, iceberg.NewSchema(0, field(2, "name", iceberg.PrimitiveTypes.Int64)), reader.ErrSchemaMismatch},
		{"orc delete file", withDeletes(token.DeleteFile{Kind: token.DeletePosition, Path: bucket + "/d.orc", Format: "ORC"}), idSchema, reader.ErrUnsupported},
		{"variant over a string column", s, iceberg.NewSchema(0, field(2, "v", iceberg.VariantType{})), reader.ErrSchemaMismatch},
		{"geometry over a long column", s, iceberg.NewSchema(0, field(1, "g", iceberg.GeometryType{})), reader.ErrSchemaMismatch},
		{"equality delete without the key column", withDeletes(token.DeleteFile{Kind: token.DeleteEquality, Path: bucket + "/data.parquet", Format: "PARQUET", EqualityIDs: []int{2, 1}}), iceberg.NewSchema(0, field(1, "id", iceberg.PrimitiveTypes.Int64)), reader.ErrUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := newReader(testFS(dir)).Open(context.Background(), tc.split, tableOf(tc.schema))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if st != nil {
				t.Errorf("stream returned with error")
			}
		})
	}
}

func TestRunBatchesAndLifecycle(t *testing.T) {
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 10)
	r := newReader(testFS(dir), reader.WithBatchRows(4))
	ctx := context.Background()

	var first []byte
	for i := range 2 {
		st, err := r.Open(ctx, s, tableOf(idSchema))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		var sizes []int
		if err := st.Run(ctx, &buf, func() error { sizes = append(sizes, buf.Len()); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(sizes) != 3 {
			t.Errorf("flushes after %v bytes, want 3 batches of at most 4 rows", sizes)
		}
		if err := st.Run(ctx, &buf, nil); !errors.Is(err, reader.ErrStreamUsed) {
			t.Errorf("second Run: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if i == 0 {
			first = bytes.Clone(buf.Bytes())
			if got := bytes.Count(first, []byte("\n")); got != len(lines) {
				t.Errorf("%d lines, want %d", got, len(lines))
			}
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Errorf("output is not deterministic")
		}
	}

	t.Run("cancel between batches", func(t *testing.T) {
		st, err := r.Open(ctx, s, tableOf(idSchema))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		cctx, cancel := context.WithCancel(ctx)
		var buf bytes.Buffer
		err = st.Run(cctx, &buf, func() error { cancel(); return nil })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		// The writer flushes a batch while the next is decoded, so the
		// cancel is seen at the end of the first batch or of the second.
		if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 4 && n != 8 {
			t.Errorf("%d rows written before the cancel, want one or two batches of 4", n)
		}
	})
	t.Run("stats while running", func(t *testing.T) {
		st, err := r.Open(ctx, s, tableOf(idSchema))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 100 {
				_ = st.Stats()
			}
		}()
		if err := st.Run(ctx, io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		<-done
		if got := st.Stats(); got.RowsRead != 10 || got.RowsEmitted != 10 {
			t.Errorf("stats %+v", got)
		}
	})
	t.Run("write error", func(t *testing.T) {
		st, err := r.Open(ctx, s, tableOf(idSchema))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		boom := errors.New("boom")
		if err := st.Run(ctx, failWriter{boom}, nil); !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
	})
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// TestRepeatedAcrossReads reads a repeated column whose rows cross page
// boundaries (data page v1, tiny pages) and decode-chunk boundaries (large
// pages).
func TestRepeatedAcrossReads(t *testing.T) {
	type row struct {
		ID int64    `parquet:"id,id(1)"`
		L  []string `parquet:"l,id(2),list" parquet-element:",id(3)"`
	}
	var rows []row
	var want bytes.Buffer
	for i := range 3000 {
		r := row{ID: int64(i)}
		want.WriteString(`{"id":` + itoa(i) + `,"l":[`)
		for j := range i % 7 {
			if j > 0 {
				want.WriteByte(',')
			}
			r.L = append(r.L, "v"+itoa(j))
			want.WriteString(`"v` + itoa(j) + `"`)
		}
		want.WriteString("]}\n")
		rows = append(rows, r)
	}
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "l", &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}),
	)
	cases := []struct {
		name string
		opts []parquet.WriterOption
	}{
		{"data page v1, tiny pages", []parquet.WriterOption{parquet.DataPageVersion(1), parquet.PageBufferSize(128), parquet.MaxRowsPerRowGroup(1000)}},
		{"one large page", []parquet.WriterOption{parquet.PageBufferSize(4 << 20)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, size := writeParquet(t, dir, "data.parquet", rows, tc.opts...)
			got, _ := readAll(t, newReader(testFS(dir)), dataSplit("data.parquet", size, int64(len(rows))), schema)
			if join(got) != want.String() {
				t.Errorf("output differs (%d lines, want %d)", len(got), len(rows))
			}
		})
	}
}
