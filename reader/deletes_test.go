package reader_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/token"
)

type posDelete struct {
	FilePath string `parquet:"file_path,id(2147483546)"`
	Pos      int64  `parquet:"pos,id(2147483545)"`
}

// posDeleteWithRow is a delete file that carries the optional row column
// (Hive, Impala).
type posDeleteWithRow struct {
	FilePath string `parquet:"file_path,id(2147483546)"`
	Pos      int64  `parquet:"pos,id(2147483545)"`
	Row      *struct {
		ID int64 `parquet:"id,id(1)"`
	} `parquet:"row,id(2147483544),optional"`
}

type idRow struct {
	ID   int64  `parquet:"id,id(1)"`
	Name string `parquet:"name,id(2)"`
}

var idSchema = iceberg.NewSchema(0,
	field(1, "id", iceberg.PrimitiveTypes.Int64),
	field(2, "name", iceberg.PrimitiveTypes.String),
)

// writeIDs writes n rows with ids 0..n-1 in row groups of three rows.
func writeIDs(t *testing.T, dir string, n int) (token.Split, []string) {
	t.Helper()
	rows := make([]idRow, n)
	var lines []string
	for i := range rows {
		rows[i] = idRow{ID: int64(i), Name: string(rune('a' + i%26))}
		lines = append(lines, `{"id":`+itoa(i)+`,"name":"`+string(rune('a'+i%26))+`"}`)
	}
	_, size := writeParquet(t, dir, "data.parquet", rows, parquet.MaxRowsPerRowGroup(3), parquet.PageBufferSize(64))
	return dataSplit("data.parquet", size, int64(n)), lines
}

func itoa(i int) string {
	return string(appendInt(nil, i))
}

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// keep returns the lines whose index is not in drop.
func keep(lines []string, drop ...int) []string {
	var out []string
	for i, l := range lines {
		if !slices.Contains(drop, i) {
			out = append(out, l)
		}
	}
	return out
}

func TestPositionalDeletes(t *testing.T) {
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 10)
	dataPath := s.Data.Path
	rewritten := filepath.Join(dir, "data.parquet")

	p1, z1 := writeParquet(t, dir, "del1.parquet", []posDelete{
		{bucket + "/a-other.parquet", 0},
		{dataPath, 1},
		{dataPath, 4},
		{rewritten, 2},                   // the location-mapped path never matches
		{dataPath + ".bak", 3},           // nor a longer one
		{bucket + "/z-other.parquet", 5}, // nor another file
	}, parquet.MaxRowsPerRowGroup(2))
	p2, z2 := writeParquet(t, dir, "del2.parquet", []posDeleteWithRow{
		{FilePath: dataPath, Pos: 4}, // duplicate across files
		{FilePath: dataPath, Pos: 9},
		{FilePath: dataPath, Pos: 6, Row: &struct {
			ID int64 `parquet:"id,id(1)"`
		}{6}},
	})
	// The whole second row group (3, 4, 5) except 3 is deleted; delete 3 too
	// in a third file so the group is skipped without decoding.
	p3, z3 := writeParquet(t, dir, "del3.parquet", []posDelete{{dataPath, 3}, {dataPath, 5}})
	del := func(p string, z int64) token.DeleteFile {
		return token.DeleteFile{Kind: token.DeletePosition, Path: p, Format: "PARQUET", Size: z}
	}

	cases := []struct {
		name    string
		deletes []token.DeleteFile
		want    []string
		deleted int64
	}{
		{"none", nil, lines, 0},
		{"one file, other paths ignored", []token.DeleteFile{del(p1, z1)}, keep(lines, 1, 4), 2},
		{"duplicates across files", []token.DeleteFile{del(p1, z1), del(p2, z2)}, keep(lines, 1, 4, 6, 9), 4},
		{"whole row group", []token.DeleteFile{del(p1, z1), del(p2, z2), del(p3, z3)}, keep(lines, 1, 3, 4, 5, 6, 9), 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.Deletes = tc.deletes
			got, st := readAll(t, newReader(testFS(dir)), s, idSchema)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if st.RowsRead != 10 || st.RowsEmitted != int64(len(tc.want)) || st.RowsDeleted[token.DeletePosition] != tc.deleted {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestDeletionVector(t *testing.T) {
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 10)
	dvFile := writeDV(t, dir, "dv.puffin", s.Data.Path, 0, 2, 7)
	pd, pz := writeParquet(t, dir, "del.parquet", []posDelete{{s.Data.Path, 2}, {s.Data.Path, 8}})

	t.Run("dv", func(t *testing.T) {
		s.Deletes = []token.DeleteFile{dvFile}
		got, st := readAll(t, newReader(testFS(dir)), s, idSchema)
		if want := keep(lines, 0, 2, 7); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if st.RowsDeleted[token.DeleteDeletionVector] != 3 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("dv and positional merged, counted once", func(t *testing.T) {
		s.Deletes = []token.DeleteFile{dvFile, {Kind: token.DeletePosition, Path: pd, Format: "PARQUET", Size: pz}}
		got, st := readAll(t, newReader(testFS(dir)), s, idSchema)
		if want := keep(lines, 0, 2, 7, 8); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		if st.RowsDeleted[token.DeletePosition] != 2 || st.RowsDeleted[token.DeleteDeletionVector] != 2 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestEqualityDeletes(t *testing.T) {
	// The data stores id as int32 and reads it as long; the delete files
	// store it as int64, and one carries whole rows (as Flink writes).
	type dataRow struct {
		ID    int32   `parquet:"id,id(1)"`
		Name  *string `parquet:"name,id(2),optional"`
		Score float32 `parquet:"score,id(3)"`
		Amt   int32   `parquet:"amt,id(4),decimal(2:9)"`
	}
	type delByID struct {
		ID int64 `parquet:"id,id(1)"`
	}
	type delByName struct {
		Extra string  `parquet:"extra,id(77)"`
		Name  *string `parquet:"name,id(2),optional"`
		ID    int64   `parquet:"id,id(1)"`
	}
	type delByAmt struct {
		Amt int64 `parquet:"amt,id(4),decimal(2:18)"`
	}
	dir := t.TempDir()
	rows := []dataRow{
		{1, ptr("a"), 0.5, 100}, {2, ptr("b"), 1, 250}, {3, nil, 2, 300},
		{4, nil, 3, 400}, {5, ptr("e"), 4, -100}, {2, ptr("x"), 5, 0},
	}
	_, size := writeParquet(t, dir, "data.parquet", rows, parquet.MaxRowsPerRowGroup(4))
	s := dataSplit("data.parquet", size, int64(len(rows)))
	schema := iceberg.NewSchema(0,
		field(1, "id", iceberg.PrimitiveTypes.Int64),
		field(2, "name", iceberg.PrimitiveTypes.String),
		field(3, "score", iceberg.PrimitiveTypes.Float64),
		field(4, "amt", iceberg.DecimalTypeOf(18, 2)),
	)
	pID, zID := writeParquet(t, dir, "eq-id.parquet", []delByID{{1}, {42}})
	pName, zName := writeParquet(t, dir, "eq-name.parquet", []delByName{
		{"junk", nil, 3},      // (id 3, name null) matches row 3: null equals null
		{"junk", ptr("b"), 9}, // (9, "b") matches nothing
		{"junk", ptr("x"), 2}, // (2, "x") matches the last row only
	})
	pAmt, zAmt := writeParquet(t, dir, "eq-amt.parquet", []delByAmt{{-100}})
	eq := func(p string, z int64, ids ...int) token.DeleteFile {
		return token.DeleteFile{Kind: token.DeleteEquality, Path: p, Format: "PARQUET", Size: z, EqualityIDs: ids}
	}
	all := []string{
		`{"id":1,"name":"a","score":0.5,"amt":"1.00"}`,
		`{"id":2,"name":"b","score":1,"amt":"2.50"}`,
		`{"id":3,"name":null,"score":2,"amt":"3.00"}`,
		`{"id":4,"name":null,"score":3,"amt":"4.00"}`,
		`{"id":5,"name":"e","score":4,"amt":"-1.00"}`,
		`{"id":2,"name":"x","score":5,"amt":"0.00"}`,
	}
	cases := []struct {
		name    string
		deletes []token.DeleteFile
		want    []string
	}{
		{"by promoted id", []token.DeleteFile{eq(pID, zID, 1)}, keep(all, 0)},
		{"by two columns with null keys", []token.DeleteFile{eq(pName, zName, 1, 2)}, keep(all, 2, 5)},
		{"by decimal of another width", []token.DeleteFile{eq(pAmt, zAmt, 4)}, keep(all, 4)},
		{"every file its own set", []token.DeleteFile{eq(pID, zID, 1), eq(pName, zName, 1, 2), eq(pAmt, zAmt, 4)}, keep(all, 0, 2, 4, 5)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.Deletes = tc.deletes
			got, st := readAll(t, newReader(testFS(dir)), s, schema)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", join(got), join(tc.want))
			}
			if st.RowsDeleted[token.DeleteEquality] != int64(len(all)-len(tc.want)) {
				t.Errorf("stats %+v", st)
			}
		})
	}

	t.Run("keys follow schema order, not file order", func(t *testing.T) {
		s.Deletes = []token.DeleteFile{eq(pID, zID, 1)}
		narrow := iceberg.NewSchema(1, field(2, "name", iceberg.PrimitiveTypes.String), field(1, "id", iceberg.PrimitiveTypes.Int64))
		got, _ := readAll(t, newReader(testFS(dir)), s, narrow)
		if len(got) != 5 || got[0] != `{"name":"b","id":2}` {
			t.Errorf("got %q", got)
		}
	})
	t.Run("positional before equality", func(t *testing.T) {
		pd, pz := writeParquet(t, dir, "pos.parquet", []posDelete{{s.Data.Path, 0}, {s.Data.Path, 1}})
		s.Deletes = []token.DeleteFile{eq(pID, zID, 1), {Kind: token.DeletePosition, Path: pd, Format: "PARQUET", Size: pz}}
		_, st := readAll(t, newReader(testFS(dir)), s, schema)
		if st.RowsDeleted[token.DeletePosition] != 2 || st.RowsDeleted[token.DeleteEquality] != 0 || st.RowsEmitted != 4 {
			t.Errorf("stats %+v", st)
		}
	})
}
