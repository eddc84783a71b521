package splits

import (
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/token"
)

// TestSchemaOfMissingSchemaIsDamaged: a token whose pinned metadata file
// no longer holds its schema (the file was rewritten) is damaged metadata,
// a 422, not an internal error.
func TestSchemaOfMissingSchemaIsDamaged(t *testing.T) {
	meta, err := table.ParseMetadataString(`{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1",
		"location":"s3://b/t","last-sequence-number":0,"last-updated-ms":1,"last-column-id":1,
		"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","required":false,"type":"long"}]}],
		"current-schema-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"default-spec-id":0,"last-partition-id":999,
		"sort-orders":[{"order-id":0,"fields":[]}],"default-sort-order-id":0}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schemaOf(meta, token.Split{MetadataLocation: "s3://b/t/m.json", SchemaID: 0}); err != nil {
		t.Fatal(err)
	}
	_, err = schemaOf(meta, token.Split{MetadataLocation: "s3://b/t/m.json", SchemaID: 7})
	if !IsDamagedMetadata(err) {
		t.Fatalf("a schema the metadata does not hold: %v, want damaged metadata", err)
	}
}
