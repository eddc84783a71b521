package handlers

import (
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/druidiceberg/sidecar/druid"
)

// TestWriteSplitsIsWriteJSON: the fast writer of /splits answers writes
// the very bytes writeJSON writes, for answers with and without every
// optional part, and strings that need escaping.
func TestWriteSplitsIsWriteJSON(t *testing.T) {
	// The fields writeSplits writes; a new field must be taught to it
	// (and counted here).
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[splitsResponse]():         8,
		reflect.TypeFor[planColumn]():             5,
		reflect.TypeFor[druid.HTTPInputSource]():  4,
		reflect.TypeFor[druid.PasswordProvider](): 2,
		reflect.TypeFor[druid.InputFormat]():      3,
		reflect.TypeFor[splitResponse]():          12,
		reflect.TypeFor[splitRange]():             2,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, writeSplits writes %d: teach it the new ones", typ, typ.NumField(), n)
		}
	}
	id := int64(-42)
	full := splitsResponse{
		Table:      "ns.t",
		SnapshotID: &id,
		Mode:       "v2",
		InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{"http://h/splits/a.b/rows", "http://h/files/c.d"},
			Username: "druid", Password: &druid.PasswordProvider{Type: "environment", Variable: "SIDECAR_HTTP_PASSWORD"}},
		InputFormat: druid.InputFormat{Type: "parquet", BinaryAsString: true, FlattenSpec: &druid.FlattenSpec{UseFieldDiscovery: true,
			Fields: []druid.FlattenField{{Type: "path", Name: "__time_value", Expr: "$.__time"}}}},
		Columns: []planColumn{{Name: "id", IcebergType: "long", DruidType: "LONG"},
			{Name: "g \"quoted\" <&>", IcebergType: "geography(EPSG:4326, karney)", DruidType: "STRING", CRS: "EPSG:4326", EdgeAlgorithm: "karney"}},
		Splits: []splitResponse{
			{ID: "0011223344556677", URI: "http://h/splits/a.b/rows", DataFile: "s3://b/t/data/x=1/a.parquet", RecordCount: 10,
				PositionDeleteFiles: 1, EqualityDeleteFiles: 2, DeletionVectorFiles: 3, DataFileSizeInBytes: 1 << 40, DeleteFileSizeInBytes: 7},
			{ID: "8899aabbccddeeff", URI: "http://h/files/c.d", DataFile: "/tmp/wh/t/data/ünïcode \"quoted\" \\ <&> \t\n\x01\u2028\xff.parquet",
				RecordCount: -1},
			{ID: "0123456789abcdef", URI: "http://h/splits/e.f/rows", DataFile: "s3://b/t/data/big.parquet", RecordCount: 500,
				RecordCountEstimated: true, Range: &splitRange{Start: 4, Length: 268435456}},
		},
		Warnings: []string{"residual filter on 1 file(s): id > 3 && name <> 'x'", "é"},
	}
	empty := splitsResponse{Table: "ns.empty", Mode: "v1", InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{}},
		InputFormat: druid.InputFormat{Type: "parquet"}, Columns: []planColumn{}, Splits: []splitResponse{}, Warnings: []string{}}
	nils := splitsResponse{Table: "ns.nil"}
	// Many chunks' worth.
	many := full
	many.Splits, many.InputSource.URIs = nil, nil
	for i := range 3000 {
		sp := full.Splits[i%2]
		sp.RecordCount = int64(i)
		many.Splits = append(many.Splits, sp)
		many.InputSource.URIs = append(many.InputSource.URIs, sp.URI)
	}
	for name, resp := range map[string]splitsResponse{"full": full, "empty": empty, "nil slices": nils, "many": many} {
		t.Run(name, func(t *testing.T) {
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			if err := writeJSON(want, resp); err != nil {
				t.Fatal(err)
			}
			if err := writeSplits(got, resp); err != nil {
				t.Fatal(err)
			}
			if got.Body.String() != want.Body.String() {
				t.Fatalf("writeSplits wrote\n%s\nwriteJSON wrote\n%s", got.Body, want.Body)
			}
			if !reflect.DeepEqual(got.Header(), want.Header()) {
				t.Fatalf("headers %v, want %v", got.Header(), want.Header())
			}
		})
	}
}
