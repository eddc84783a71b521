package splits

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// identityField is an identity transform of a partition spec: its
// partition field id and the source field id.
type identityField struct {
	fieldID, sourceID int
	name              string
}

// identityFields returns the identity transforms of the data file's
// partition spec, by source field id.
func identityFields(meta table.Metadata, f iceberg.DataFile) ([]identityField, error) {
	spec := meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s names partition spec %d, which the metadata lacks", f.FilePath(), f.SpecID())
	}
	var out []identityField
	for _, field := range spec.Fields() {
		if _, ok := field.Transform.(iceberg.IdentityTransform); !ok || len(field.SourceIDs) != 1 {
			continue
		}
		out = append(out, identityField{fieldID: field.FieldID, sourceID: field.SourceIDs[0], name: field.Name})
	}
	slices.SortStableFunc(out, func(a, b identityField) int { return cmp.Compare(a.sourceID, b.sourceID) })
	return out, nil
}

// identityValues returns, for every identity transform of the data file's
// partition spec (fields), the source field id and the file's partition
// value.
func identityValues(fields []identityField, f iceberg.DataFile) ([]token.IdentityValue, error) {
	if len(fields) == 0 {
		return nil, nil
	}
	part := f.Partition()
	out := make([]token.IdentityValue, 0, len(fields))
	for _, field := range fields {
		raw, err := identityJSON(part[field.fieldID])
		if err != nil {
			return nil, fmt.Errorf("data file %s: partition field %s: %w", f.FilePath(), field.name, err)
		}
		out = append(out, token.IdentityValue{FieldID: field.sourceID, Value: raw})
	}
	return out, nil
}

// identityJSON encodes a partition value as IdentityValue documents.
func identityJSON(v any) (json.RawMessage, error) {
	// Integers, by far the most common partition values (dates, hours,
	// ids), are spelled directly; the rest as encoding/json spells them.
	var x any
	switch t := v.(type) {
	case int32:
		return strconv.AppendInt(nil, int64(t), 10), nil
	case int64:
		return strconv.AppendInt(nil, t, 10), nil
	case int:
		return strconv.AppendInt(nil, int64(t), 10), nil
	case iceberg.Date:
		return strconv.AppendInt(nil, int64(t), 10), nil
	case iceberg.Time:
		return strconv.AppendInt(nil, int64(t), 10), nil
	case iceberg.Timestamp:
		return strconv.AppendInt(nil, int64(t), 10), nil
	case iceberg.TimestampNano:
		return strconv.AppendInt(nil, int64(t), 10), nil
	case nil, bool, float32, float64, string, []byte:
		x = t
	case uuid.UUID:
		x = t.String()
	case iceberg.Decimal:
		x = t.Val.BigInt().String()
	default:
		return nil, fmt.Errorf("%w: identity partition value of Go type %T", fault.ErrUnsupported, v)
	}
	return json.Marshal(x)
}
