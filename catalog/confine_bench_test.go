package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// logMetadata is a table's metadata whose metadata log holds n entries,
// each in a folder of its own (a table moved n times, or a writer that
// padded its log), as issue 32's item 6 replays it.
func logMetadata(b *testing.B, n int) table.Metadata {
	b.Helper()
	var log strings.Builder
	for i := range n {
		if i > 0 {
			log.WriteString(",")
		}
		fmt.Fprintf(&log, `{"metadata-file": "s3://lake/moved/%d/t/metadata/v%d.metadata.json", "timestamp-ms": %d}`, i, i, i)
	}
	meta, err := table.ParseMetadataBytes([]byte(`{
  "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "s3://lake/db/t", "last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 1,
  "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}],
  "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
  "metadata-log": [` + log.String() + `]
}`))
	if err != nil {
		b.Fatal(err)
	}
	return meta
}

// BenchmarkTableLoadRoots is what every table load spends on roots, for a
// metadata log of 20,000 entries in distinct folders (issue 32, item 6):
// the check of the table's stated locations against the operator's roots,
// which reads none of the log (before: the table's own roots, built from
// every entry with a scan of the roots so far, quadratic).
func BenchmarkTableLoadRoots(b *testing.B) {
	meta := logMetadata(b, 20_000)
	cat, err := New(Config{Type: "rest", Name: "lake", URI: "http://127.0.0.1:1", Warehouse: "s3://lake/db"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cat.Close() })
	b.ResetTimer()
	for range b.N {
		if err := cat.checkTable([]string{"db", "t"}, meta, "s3://lake/db/t/metadata/v20001.metadata.json"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRootsAdd adds 20,000 distinct roots: linear (before: each add
// scanned the roots so far for a duplicate, quadratic).
func BenchmarkRootsAdd(b *testing.B) {
	locs := make([]string, 20_000)
	for i := range locs {
		locs[i] = fmt.Sprintf("s3://lake/moved/%d/t", i)
	}
	b.ResetTimer()
	for range b.N {
		var r roots
		for _, l := range locs {
			r.add(l)
		}
		if len(r) != len(locs) {
			b.Fatalf("%d roots, want %d", len(r), len(locs))
		}
	}
}
