package splits

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// identityValues returns, for every identity transform of the data file's
// partition spec, the source field id and the file's partition value.
func identityValues(meta table.Metadata, f iceberg.DataFile) ([]IdentityValue, error) {
	if meta == nil {
		return nil, nil
	}
	spec := meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s names partition spec %d, which the metadata lacks", f.FilePath(), f.SpecID())
	}
	part := f.Partition()
	var out []IdentityValue
	for _, field := range spec.Fields() {
		if _, ok := field.Transform.(iceberg.IdentityTransform); !ok || len(field.SourceIDs) != 1 {
			continue
		}
		raw, err := identityJSON(part[field.FieldID])
		if err != nil {
			return nil, fmt.Errorf("data file %s: partition field %s: %w", f.FilePath(), field.Name, err)
		}
		out = append(out, IdentityValue{FieldID: field.SourceIDs[0], Value: raw})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FieldID < out[j].FieldID })
	return out, nil
}

// identityJSON encodes a partition value as IdentityValue documents.
func identityJSON(v any) (json.RawMessage, error) {
	var x any
	switch t := v.(type) {
	case nil, bool, int32, int64, float32, float64, string, []byte:
		x = t
	case int:
		x = int64(t)
	case iceberg.Date:
		x = int32(t)
	case iceberg.Time:
		x = int64(t)
	case iceberg.Timestamp:
		x = int64(t)
	case iceberg.TimestampNano:
		x = int64(t)
	case uuid.UUID:
		x = t.String()
	case iceberg.Decimal:
		x = t.Val.BigInt().String()
	default:
		return nil, fmt.Errorf("%w: identity partition value of Go type %T", ErrUnsupported, v)
	}
	return json.Marshal(x)
}
