package reader_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/token"
)

// lineageRow stores _row_id and _last_updated_sequence_number as a writer
// that keeps row lineage does (a compaction): null where the row inherits.
type lineageRow struct {
	ID    int64  `parquet:"id,id(1)"`
	RowID *int64 `parquet:"_row_id,id(2147483540),optional"`
	Seq   *int64 `parquet:"_last_updated_sequence_number,id(2147483539),optional"`
}

// plainRow stores no lineage at all.
type plainRow struct {
	ID  int64  `parquet:"id,id(1)"`
	Cat string `parquet:"cat,id(2)"`
}

// TestMetaColumns: each metadata column, in the spec's order after the
// table's columns, by the spec's rules: a stored _row_id or
// _last_updated_sequence_number wins, a null (or no column) inherits the
// file's first_row_id plus the row's position, or its data sequence
// number; positions are the file's whatever rows are deleted; _partition
// has every field of the table's partition type, null where the file's
// spec has none.
func TestMetaColumns(t *testing.T) {
	dir := t.TempDir()
	r := newReader(testFS(dir))
	schema := iceberg.NewSchema(0, field(1, "id", iceberg.PrimitiveTypes.Int64))
	all := token.MetaRowID | token.MetaLastUpdated | token.MetaFile | token.MetaPos | token.MetaSpecID | token.MetaPartition

	t.Run("stored lineage wins over inheritance", func(t *testing.T) {
		_, size := writeParquet(t, dir, "stored.parquet", []lineageRow{
			{ID: 1, RowID: ptr[int64](100), Seq: ptr[int64](3)},
			{ID: 2},
			{ID: 3, RowID: ptr[int64](7)},
			{ID: 4, Seq: ptr[int64](1)},
		})
		s := dataSplit("stored.parquet", size, 4, writeDV(t, dir, "stored-dv.puffin", bucket+"/stored.parquet", 0))
		s.Meta = token.MetaRowID | token.MetaLastUpdated | token.MetaPos
		s.Data.FirstRowID, s.Data.DataSequence = ptr[int64](50), ptr[int64](9)
		got, _ := readAll(t, r, s, schema)
		want := []string{
			`{"id":2,"_row_id":51,"_last_updated_sequence_number":9,"_pos":1}`,
			`{"id":3,"_row_id":7,"_last_updated_sequence_number":9,"_pos":2}`,
			`{"id":4,"_row_id":53,"_last_updated_sequence_number":1,"_pos":3}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("no first_row_id: _row_id is null", func(t *testing.T) {
		_, size := writeParquet(t, dir, "old.parquet", []plainRow{{ID: 1, Cat: "a"}, {ID: 2, Cat: "a"}})
		s := dataSplit("old.parquet", size, 2)
		s.Meta = token.MetaRowID | token.MetaLastUpdated
		s.Data.DataSequence = ptr[int64](2)
		got, _ := readAll(t, r, s, schema)
		want := `{"id":1,"_row_id":null,"_last_updated_sequence_number":2}` + "\n" + `{"id":2,"_row_id":null,"_last_updated_sequence_number":2}`
		if strings.Join(got, "\n") != want {
			t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
		}
	})

	t.Run("every column, partition of an older spec", func(t *testing.T) {
		_, size := writeParquet(t, dir, "part.parquet", []plainRow{{ID: 1, Cat: "a"}, {ID: 2, Cat: "a"}, {ID: 3, Cat: "a"}})
		s := dataSplit("part.parquet", size, 3, writeDV(t, dir, "part-dv.puffin", bucket+"/part.parquet", 1))
		s.Meta = all
		s.Data.SpecID = 1
		s.Data.FirstRowID, s.Data.DataSequence = ptr[int64](10), ptr[int64](4)
		s.Data.Partition = []token.IdentityValue{{FieldID: 1000, Value: []byte(`"a"`)}, {FieldID: 1002, Value: []byte(`19000`)}}
		pt := &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 1000, Name: "cat", Type: iceberg.PrimitiveTypes.String},
			{ID: 1001, Name: "id_bucket", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 1002, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		}}
		got, _ := readTable(t, r, s, token.TableSchema{Schema: schema, PartitionType: pt})
		file := `"_file":"` + bucket + `/part.parquet"`
		part := `"_partition":{"cat":"a","id_bucket":null,"day":1641600000000}`
		want := []string{
			`{"id":1,"_row_id":10,"_last_updated_sequence_number":4,` + file + `,"_pos":0,"_spec_id":1,` + part + `}`,
			`{"id":3,"_row_id":12,"_last_updated_sequence_number":4,` + file + `,"_pos":2,"_spec_id":1,` + part + `}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("a projection of no column but metadata", func(t *testing.T) {
		_, size := writeParquet(t, dir, "pos.parquet", []plainRow{{ID: 1, Cat: "a"}, {ID: 2, Cat: "b"}})
		s := dataSplit("pos.parquet", size, 2)
		s.Meta = token.MetaPos | token.MetaPartition
		got, _ := readTable(t, r, s, token.TableSchema{Schema: iceberg.NewSchema(0), PartitionType: &iceberg.StructType{}})
		want := `{"_pos":0,"_partition":{}}` + "\n" + `{"_pos":1,"_partition":{}}`
		if strings.Join(got, "\n") != want {
			t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
		}
	})

	t.Run("unknown bits are a malformed token", func(t *testing.T) {
		_, size := writeParquet(t, dir, "bad.parquet", []plainRow{{ID: 1}})
		s := dataSplit("bad.parquet", size, 1)
		s.Meta = 1 << 7
		if _, err := r.Open(t.Context(), s, tableOf(schema)); !errors.Is(err, token.ErrMalformedToken) {
			t.Errorf("open: %v, want a malformed-token error", err)
		}
	})
}
