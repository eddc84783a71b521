package icewrite

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"
)

func TestWritePositionalDeletes(t *testing.T) {
	ctx := context.Background()
	tbl, err := CreateTable(ctx, newCatalog(t), table.Identifier{"pos", "t"}, idSchema(), 2)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	tests := []struct {
		name         string
		in           []PositionalDelete
		want         []posDeleteRow
		lower, upper string
	}{
		{
			name:  "several data files, unsorted input",
			in:    []PositionalDelete{{"/w/b.parquet", 7}, {"/w/a.parquet", 3}, {"/w/b.parquet", 0}, {"/w/a.parquet", 1}},
			want:  []posDeleteRow{{"/w/a.parquet", 1}, {"/w/a.parquet", 3}, {"/w/b.parquet", 0}, {"/w/b.parquet", 7}},
			lower: "/w/a.parquet", upper: "/w/b.parquet",
		},
		{
			name:  "one data file",
			in:    []PositionalDelete{{"/w/a.parquet", 9}, {"/w/a.parquet", 2}},
			want:  []posDeleteRow{{"/w/a.parquet", 2}, {"/w/a.parquet", 9}},
			lower: "/w/a.parquet", upper: "/w/a.parquet",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := DataPath(tbl, "pos-"+string(rune('a'+i))+".parquet")
			df, err := WritePositionalDeletes(ctx, tbl, loc, tt.in)
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			if df.ContentType() != iceberg.EntryContentPosDeletes || df.FileFormat() != iceberg.ParquetFile {
				t.Errorf("content %s, format %s; want position deletes in parquet", df.ContentType(), df.FileFormat())
			}
			if df.Count() != int64(len(tt.want)) {
				t.Errorf("record count %d, want %d", df.Count(), len(tt.want))
			}
			if ref := df.ReferencedDataFile(); ref != nil {
				t.Errorf("referenced data file %q, want unset", *ref)
			}
			if got := string(df.LowerBoundValues()[posDeleteFilePathID]); got != tt.lower {
				t.Errorf("file_path lower bound %q, want %q", got, tt.lower)
			}
			if got := string(df.UpperBoundValues()[posDeleteFilePathID]); got != tt.upper {
				t.Errorf("file_path upper bound %q, want %q", got, tt.upper)
			}
			st, err := os.Stat(loc)
			if err != nil {
				t.Fatalf("stat: %v", err)
			}
			if df.FileSizeBytes() != st.Size() {
				t.Errorf("file size %d, on disk %d", df.FileSizeBytes(), st.Size())
			}

			f, err := os.Open(loc)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer f.Close()
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				t.Fatalf("open parquet: %v", err)
			}
			for _, c := range []struct {
				name string
				id   int
			}{{"file_path", posDeleteFilePathID}, {"pos", posDeletePosID}} {
				col, ok := pf.Schema().Lookup(c.name)
				if !ok {
					t.Fatalf("column %s missing", c.name)
				}
				if got := col.Node.ID(); got != c.id {
					t.Errorf("column %s has field id %d, want %d", c.name, got, c.id)
				}
				if col.Node.Optional() {
					t.Errorf("column %s is optional, want required", c.name)
				}
			}
			got, err := parquet.Read[posDeleteRow](f, st.Size())
			if err != nil {
				t.Fatalf("read rows: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("rows %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWritePositionalDeletesRejects(t *testing.T) {
	ctx := context.Background()
	tbl, err := CreateTable(ctx, newCatalog(t), table.Identifier{"pos", "t"}, idSchema(), 2)
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	for name, in := range map[string][]PositionalDelete{
		"no rows":           nil,
		"negative position": {{"/w/a.parquet", -1}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := WritePositionalDeletes(ctx, tbl, DataPath(tbl, "x.parquet"), in); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("error = %v, want ErrInvalidArgument", err)
			}
		})
	}
}
