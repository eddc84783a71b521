package druidsim

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
)

// partitionsSpec is the part of a native tuningConfig's partitionsSpec
// the model checks.
type partitionsSpec struct {
	Type                 string   `json:"type"`
	PartitionDimensions  []string `json:"partitionDimensions"`
	TargetRowsPerSegment *int     `json:"targetRowsPerSegment"`
	MaxRowsPerSegment    *int     `json:"maxRowsPerSegment"`
	MaxTotalRows         *int64   `json:"maxTotalRows"`
	NumShards            *int     `json:"numShards"`
}

// parsePartitionsSpec reads tuningConfig.partitionsSpec and checks it as
// Druid does when it builds the task:
//
//   - PartitionsSpec's Jackson subtypes: dynamic, hashed, range (and the
//     older single_dim, not modelled);
//   - DimensionRangePartitionsSpec: partitionDimensions required ("partitionDimensions
//     must be specified", also ParallelIndexTuningConfig for an empty
//     list), exactly one of targetRowsPerSegment and maxRowsPerSegment,
//     positive;
//   - HashedPartitionsSpec: at most one of targetRowsPerSegment and
//     maxRowsPerSegment, not with numShards, each positive;
//   - IndexTask.IndexTuningConfig.getDefaultPartitionsSpec: with
//     forceGuaranteedRollup a dynamic spec is refused ("DynamicPartitionsSpec
//     cannot be used for perfect rollup"), without it anything but dynamic
//     ("DynamicPartitionsSpec must be used for best-effort rollup");
//   - ParallelIndexSupervisorTask.isGuaranteedRollup: perfect rollup with
//     appendToExisting is refused.
//
// Absent is dynamic (a null partitionsSpec), or with
// forceGuaranteedRollup hashed over every dimension.
func parsePartitionsSpec(raw json.RawMessage, forceGuaranteedRollup, appendToExisting bool) (partitionsSpec, error) {
	ps := partitionsSpec{Type: "dynamic"}
	if forceGuaranteedRollup {
		ps.Type = "hashed"
	}
	if len(raw) > 0 && string(raw) != "null" {
		ps = partitionsSpec{}
		if err := json.Unmarshal(raw, &ps); err != nil {
			return ps, fmt.Errorf("partitionsSpec: %w", err)
		}
	}
	positive := func(name string, v *int) error {
		if v != nil && *v <= 0 {
			return fmt.Errorf("%s[%d] should be positive", name, *v)
		}
		return nil
	}
	switch ps.Type {
	case "dynamic":
		if forceGuaranteedRollup {
			return ps, fmt.Errorf("DynamicPartitionsSpec cannot be used for perfect rollup")
		}
		return ps, positive("maxRowsPerSegment", ps.MaxRowsPerSegment)
	case "range":
		if ps.PartitionDimensions == nil {
			return ps, fmt.Errorf("partitionDimensions must be specified")
		}
		if (ps.TargetRowsPerSegment == nil) == (ps.MaxRowsPerSegment == nil) {
			return ps, fmt.Errorf("Exactly one of targetRowsPerSegment or maxRowsPerSegment must be present")
		}
		if err := positive("targetRowsPerSegment", ps.TargetRowsPerSegment); err != nil {
			return ps, err
		}
		if err := positive("maxRowsPerSegment", ps.MaxRowsPerSegment); err != nil {
			return ps, err
		}
		if len(ps.PartitionDimensions) == 0 {
			return ps, fmt.Errorf("partitionDimensions must be specified")
		}
	case "hashed":
		if ps.TargetRowsPerSegment != nil && ps.MaxRowsPerSegment != nil {
			return ps, fmt.Errorf("At most one of targetRowsPerSegment or maxRowsPerSegment must be present")
		}
		if ps.NumShards != nil && (ps.TargetRowsPerSegment != nil || ps.MaxRowsPerSegment != nil) {
			return ps, fmt.Errorf("At most one of targetRowsPerSegment or numShards must be present")
		}
		for _, p := range []struct {
			name string
			v    *int
		}{{"targetRowsPerSegment", ps.TargetRowsPerSegment}, {"maxRowsPerSegment", ps.MaxRowsPerSegment}, {"numShards", ps.NumShards}} {
			if err := positive(p.name, p.v); err != nil {
				return ps, err
			}
		}
	default:
		return ps, fmt.Errorf("partitionsSpec type %q is not modelled", ps.Type)
	}
	if !forceGuaranteedRollup {
		return ps, fmt.Errorf("DynamicPartitionsSpec must be used for best-effort rollup")
	}
	if appendToExisting {
		return ps, fmt.Errorf("Perfect rollup cannot be guaranteed when appending to existing dataSources")
	}
	return ps, nil
}

// checkRow fails a range-partitioned task on a row that holds several
// values in a partition dimension
// (RangePartitionIndexTaskInputRowIteratorBuilder: "Cannot partition on
// multi-value dimension"); a list of one value is that value.
func (ps partitionsSpec) checkRow(obj map[string]any) error {
	if ps.Type != "range" {
		return nil
	}
	for _, dim := range ps.PartitionDimensions {
		if list, ok := obj[dim].([]any); ok && len(list) > 1 {
			return fmt.Errorf("Cannot partition on multi-value dimension [%s] for input row [%s]", dim, canonical(obj))
		}
	}
	return nil
}

// perfect says whether the spec partitions for perfect rollup (hashed or
// range): the rows of a time chunk are then written by partition, not by
// the subtask that read them.
func (ps partitionsSpec) perfect() bool { return ps.Type == "hashed" || ps.Type == "range" }

// defaultTargetRows is PartitionsSpec.DEFAULT_MAX_ROWS_PER_SEGMENT, the
// targetRowsPerSegment of a hashed spec that names no size.
const defaultTargetRows = 5_000_000

// partitionOf assigns the rows of one time chunk (their fields as read)
// to the partitions of a perfect-rollup task, by index; one partition is
// all zeros. What the model does not follow is an error:
//
//   - hashed with numShards: HashPartitioner over the partitionDimensions'
//     values, each as MapBasedInputRow.getDimension gives it
//     (Rows.objectToStrings: a list of strings, empty for null), the list
//     of them serialized by Jackson (HashBasedNumberedShardSpec
//     .serializeGroupKey) and hashed by HashPartitionFunction.MURMUR3_32_ABS
//     (Guava's murmur3_32 of the bytes, % numShards, absolute); a bucket
//     without rows writes no segment. Without partitionDimensions the key
//     is Rows.toGroupKey of every dimension, which the model does not
//     follow;
//   - hashed without numShards, and range: one partition while the chunk
//     holds no more rows than targetRowsPerSegment (or maxRowsPerSegment;
//     hashed defaults to 5 million). Druid sizes more partitions from the
//     key cardinality (hashed) or a quantile sketch of the keys (range),
//     which the model does not follow.
func (ps partitionsSpec) partitionOf(chunk []map[string]any) ([]int, error) {
	out := make([]int, len(chunk))
	if ps.Type == "hashed" && ps.NumShards != nil && *ps.NumShards > 1 {
		if len(ps.PartitionDimensions) == 0 {
			return nil, fmt.Errorf("hashed partitioning into %d shards without partitionDimensions is not modelled", *ps.NumShards)
		}
		for i, obj := range chunk {
			key := make([]any, len(ps.PartitionDimensions))
			for j, dim := range ps.PartitionDimensions {
				key[j] = dimensionStrings(obj[dim])
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(key); err != nil {
				return nil, err
			}
			h := murmur3(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
			out[i] = int(max(h%int32(*ps.NumShards), -(h % int32(*ps.NumShards))))
		}
		return out, nil
	}
	limit := defaultTargetRows
	for _, n := range []*int{ps.TargetRowsPerSegment, ps.MaxRowsPerSegment} {
		if n != nil {
			limit = *n
		}
	}
	if ps.NumShards == nil && len(chunk) > limit {
		return nil, fmt.Errorf("%s partitioning of %d rows into segments of %d is not modelled", ps.Type, len(chunk), limit)
	}
	return out, nil
}

// dimensionStrings is Rows.objectToStrings: a dimension's values as
// strings, none for null, String.valueOf of each element of a list.
func dimensionStrings(v any) []string {
	switch x := v.(type) {
	case nil:
		return []string{}
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = javaString(e)
		}
		return out
	}
	return []string{javaString(v)}
}

// murmur3 is Guava's Hashing.murmur3_32() (seed 0) of b, as
// HashCode.asInt gives it.
func murmur3(b []byte) int32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	mix := func(k uint32) uint32 { return bits.RotateLeft32(k*c1, 15) * c2 }
	var h uint32
	n := len(b)
	for i := 0; i+4 <= n; i += 4 {
		h ^= mix(binary.LittleEndian.Uint32(b[i:]))
		h = bits.RotateLeft32(h, 13)*5 + 0xe6546b64
	}
	var k uint32
	switch tail := b[n&^3:]; len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		h ^= mix(k)
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}
