package deletes

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/reader/readerr"
	"github.com/druidiceberg/sidecar/token"
)

// TestReadDeleteColumns reads the columns of delete files as the /changes
// diff does: a positional file's paths, and equality keys in the table's
// types (a millisecond timestamp column read in the table's microseconds,
// an int32 key widened to long), nulls marked.
func TestReadDeleteColumns(t *testing.T) {
	dir := t.TempDir()
	type posDelete struct {
		FilePath string `parquet:"file_path,id(2147483546)"`
		Pos      int64  `parquet:"pos,id(2147483545)"`
	}
	pPos, zPos := writeParquet(t, dir, "pos.parquet", []posDelete{{"s3://b/a.parquet", 0}, {"s3://b/c.parquet", 7}})
	type eqRow struct {
		ID   int32     `parquet:"id,id(1)"`
		Name *string   `parquet:"name,id(2),optional"`
		TS   time.Time `parquet:"ts,id(3),timestamp(millisecond)"`
		OK   bool      `parquet:"ok,id(4)"`
	}
	ts := time.Date(2024, 3, 1, 9, 15, 0, 0, time.UTC)
	a := "a"
	pEq, zEq := writeParquet(t, dir, "eq.parquet", []eqRow{{7, &a, ts, true}, {8, nil, ts.Add(time.Second), false}})
	schema := token.TableSchema{Schema: iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "ok", Type: iceberg.PrimitiveTypes.Bool},
	)}
	fs := icebergio.LocalFS{}

	pos := token.DeleteFile{Kind: token.DeletePosition, Path: pPos, Format: "PARQUET", Size: zPos, Records: 2}
	cols, err := ReadColumns(fs, pos, schema, []int{FieldIDDeleteFilePath, FieldIDDeletePos}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, b := range cols[0].Bytes {
		paths = append(paths, string(b))
	}
	if !slices.Equal(paths, []string{"s3://b/a.parquet", "s3://b/c.parquet"}) || !slices.Equal(cols[1].Int, []int64{0, 7}) {
		t.Fatalf("positional columns %q %v", paths, cols[1].Int)
	}

	eq := token.DeleteFile{Kind: token.DeleteEquality, Path: pEq, Format: "PARQUET", Size: zEq, Records: 2, EqualityIDs: []int{1, 2, 3, 4}}
	cols, err = ReadColumns(fs, eq, schema, []int{1, 2, 3, 4}, 10)
	if err != nil {
		t.Fatal(err)
	}
	us := ts.UnixMicro()
	if !slices.Equal(cols[0].Int, []int64{7, 8}) ||
		string(cols[1].Bytes[0]) != "a" || !slices.Equal(cols[1].Null, []bool{false, true}) ||
		!slices.Equal(cols[2].Int, []int64{us, us + 1_000_000}) ||
		!slices.Equal(cols[3].Bool, []bool{true, false}) {
		t.Fatalf("equality columns %+v", cols)
	}

	t.Run("more rows than the bound", func(t *testing.T) {
		if _, err := ReadColumns(fs, eq, schema, []int{1}, 1); !errors.Is(err, readerr.ErrUnsupported) {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
	})
	t.Run("a column it does not read", func(t *testing.T) {
		dbl := token.TableSchema{Schema: iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Float64})}
		if _, err := ReadColumns(fs, eq, dbl, []int{1}, 10); err == nil {
			t.Fatal("a double key read as a delete column")
		}
	})
	t.Run("damaged", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, "eq.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 4; i < len(b)/2; i++ {
			b[i] ^= 0xff
		}
		if err := os.WriteFile(filepath.Join(dir, "bad.parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		bad := eq
		bad.Path = filepath.Join(dir, "bad.parquet")
		if _, err := ReadColumns(fs, bad, schema, []int{1, 2}, 10); !errors.Is(err, readerr.ErrCorruptFile) {
			t.Fatalf("err = %v, want ErrCorruptFile", err)
		}
	})
}
