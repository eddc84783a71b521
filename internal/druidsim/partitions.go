package druidsim

import (
	"encoding/json"
	"fmt"
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
