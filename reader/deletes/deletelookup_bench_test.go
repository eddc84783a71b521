package deletes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
	"github.com/druidiceberg/sidecar/token"
)

// The delete lookups of Run's hot loop, on delete sets loaded through a
// Cache as a stream gets them: they must not allocate.

// writeParquet writes rows as the Parquet file dir/name and returns its
// path and size.
func writeParquet[T any](b testing.TB, dir, name string, rows []T) (string, int64) {
	b.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, int64(buf.Len())
}

// BenchmarkDeleteLookup measures one lookup per op: a position in the
// bitmap of a positional delete file (5% of 1M positions deleted), and a
// row's key in the key sets of equality delete files (10,000 longs; two
// files of 10,000 strings), with a hit on about every other lookup.
func BenchmarkDeleteLookup(b *testing.B) {
	dir := b.TempDir()
	cache := NewCache(256<<20, nil)
	loader := &Loader{cfg: Config{Cache: cache, Space: cache.Space()}, fs: icebergio.LocalFS{}, Loaded: map[token.DeleteKind]int64{}}

	b.Run("bitmap_contains", func(b *testing.B) {
		const rows = 1_000_000
		type posDelete struct {
			FilePath string `parquet:"file_path,id(2147483546)"`
			Pos      int64  `parquet:"pos,id(2147483545)"`
		}
		dataPath := "s3://bucket/data.parquet"
		var dels []posDelete
		for p := 0; p < rows; p += 20 {
			dels = append(dels, posDelete{dataPath, int64(p)})
		}
		path, size := writeParquet(b, dir, "pos.parquet", dels)
		s := token.Split{Data: token.DataFile{Path: dataPath}, Deletes: []token.DeleteFile{
			{Kind: token.DeletePosition, Path: path, Format: "PARQUET", Size: size},
		}}
		p, err := LoadPositions(loader, s)
		if err != nil || p.All == nil {
			b.Fatalf("load: %v", err)
		}
		hits := 0
		b.ReportAllocs()
		i := uint64(0)
		for b.Loop() {
			if p.All.Contains(i % rows) {
				hits++
			}
			i += 7
		}
		if hits == 0 {
			b.Fatal("no hit")
		}
	})

	// Half of the lookups hit: 10,000 even keys, ids 0 to 19,999.
	b.Run("equality_key_long", func(b *testing.B) {
		benchLongKeys(b, loader, dir, "eq-long.parquet", 10_000, 2, false, func(i int) int64 { return int64(i % 20_000) })
	})
	// As in a table where 1% of the rows were deleted by key: 20,000 keys
	// over 2,000,000 ids, so 99% of the lookups miss.
	b.Run("equality_key_long_1pct_deleted", func(b *testing.B) {
		benchLongKeys(b, loader, dir, "eq-long-1pct.parquet", 20_000, 100, false, func(i int) int64 { return int64(i*7) % 2_000_000 })
	})
	// The same, walked as a stream walks a column whose ids ascend.
	b.Run("equality_key_long_1pct_deleted_walked", func(b *testing.B) {
		benchLongKeys(b, loader, dir, "eq-long-1pct.parquet", 20_000, 100, true, func(i int) int64 { return int64(i*7) % 2_000_000 })
	})

	b.Run("equality_key_string_two_files", func(b *testing.B) {
		type del struct {
			Name string `parquet:"name,id(2)"`
		}
		schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
		set := &EqualitySet{ids: []int{2}, consts: [][]byte{nil}}
		for f := range 2 {
			var dels []del
			for i := range 10_000 {
				dels = append(dels, del{fmt.Sprintf("customer-%06d", 4*i+2*f)})
			}
			path, size := writeParquet(b, dir, fmt.Sprintf("eq-str-%d.parquet", f), dels)
			d := token.DeleteFile{Kind: token.DeleteEquality, Path: path, Format: "PARQUET", Size: size, EqualityIDs: []int{2}}
			keys, err := loader.equalityKeys(d, token.TableSchema{Schema: schema})
			if err != nil {
				b.Fatal(err)
			}
			set.keys = append(set.keys, keys)
		}
		names := &parquetpage.Values{N: 40_000}
		for i := range names.N {
			at := len(names.Bytes)
			names.Bytes = fmt.Appendf(names.Bytes, "customer-%06d", i)
			names.Refs = append(names.Refs, parquetpage.Ref{Off: uint32(at), Len: uint32(len(names.Bytes) - at)})
		}
		col := &column.Leaf{Type: encode.ValueType{Conv: encode.ConvString}, Cur: names}
		set.cols = []*column.Leaf{col}
		benchEqSet(b, set, func(i int) { col.VPos = i % names.N })
	})
}

// benchEqSet looks the current row up in set once per op, after set(i)
// made row i current.
func benchEqSet(b *testing.B, set *EqualitySet, row func(i int)) {
	b.Helper()
	var kb []byte
	hits, i := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		row(i)
		var hit bool
		if kb, hit = set.Contains(kb); hit {
			hits++
		}
		i++
	}
	if hits == 0 {
		b.Fatal("no hit")
	}
}

// benchLongKeys looks up long ids(i) in the keys of an equality delete file
// on a long column that deletes n ids, every step-th from 0; walked, the
// set walks the keys (intWalk) as loadEqualitySets has it do.
func benchLongKeys(b *testing.B, loader *Loader, dir, name string, n, step int, walked bool, ids func(i int) int64) {
	b.Helper()
	type del struct {
		ID int64 `parquet:"id,id(1)"`
	}
	dels := make([]del, n)
	for i := range dels {
		dels[i] = del{int64(i * step)}
	}
	path, size := writeParquet(b, dir, name, dels)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	d := token.DeleteFile{Kind: token.DeleteEquality, Path: path, Format: "PARQUET", Size: size, EqualityIDs: []int{1}}
	keys, err := loader.equalityKeys(d, token.TableSchema{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	one := &parquetpage.Values{N: 1, Int64: make([]int64, 1)}
	col := &column.Leaf{Type: encode.ValueType{Conv: encode.ConvInt64}, Cur: one}
	set := &EqualitySet{ids: []int{1}, cols: []*column.Leaf{col}, consts: [][]byte{nil}, keys: []*eqKeys{keys}}
	if walked {
		set.walks = make([]intWalk, 1)
	}
	benchEqSet(b, set, func(i int) { one.Int64[0] = ids(i) })
}
