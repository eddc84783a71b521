package druid

import (
	"fmt"
	"slices"
	"strings"
)

// Partitioning is the secondary partitioning of the segments a generated
// spec writes, within each time chunk: the same columns under both
// engines, so that the statement and the task of one change lay out the
// datasource alike.
type Partitioning struct {
	// ClusteredBy are the columns rows are sorted and split by: an MSQ
	// statement's CLUSTERED BY, and a native range or hashed partitionsSpec's
	// partitionDimensions.
	ClusteredBy []string
	// Native is the type of a native task's partitionsSpec: dynamic (also
	// when empty), range or hashed.
	Native string
	// TargetRows, MaxRows and NumShards are the partitionsSpec's
	// targetRowsPerSegment, maxRowsPerSegment and numShards; 0 is unset.
	TargetRows, MaxRows, NumShards int
}

// The native partitionsSpec types (PartitionsSpec's Jackson subtypes).
const (
	PartitionsDynamic = "dynamic"
	PartitionsRange   = "range"
	PartitionsHashed  = "hashed"
)

// DefaultTargetRows is the targetRowsPerSegment of a range partitionsSpec
// that names neither it nor maxRowsPerSegment: Druid wants exactly one
// (DimensionRangePartitionsSpec), and 5 million rows is the segment size
// Druid's documentation recommends.
const DefaultTargetRows = 5_000_000

// ParsePartitions reads a native partitionsSpec type: dynamic, range or
// hashed, in any case; empty is dynamic.
func ParsePartitions(s string) (string, error) {
	switch t := strings.ToLower(s); t {
	case "", PartitionsDynamic:
		return PartitionsDynamic, nil
	case PartitionsRange, PartitionsHashed:
		return t, nil
	}
	return "", fmt.Errorf("%w: partitionsSpec %q: want dynamic, range or hashed", ErrInvalid, s)
}

// check refuses what Druid refuses of the partitioning, and columns src
// does not serve as scalars.
//
// Druid's rules: a range partitionsSpec needs partitionDimensions and
// exactly one of targetRowsPerSegment and maxRowsPerSegment, each positive
// (DimensionRangePartitionsSpec, ParallelIndexTuningConfig); a hashed one
// takes at most one of targetRowsPerSegment (or maxRowsPerSegment) and
// numShards, each positive (HashedPartitionsSpec); a dynamic one takes
// maxRowsPerSegment only (DynamicPartitionsSpec).
//
// The columns must be served, once each, and hold one scalar per row:
// range partitioning fails the task on a row with several values
// ("Cannot partition on multi-value dimension",
// RangePartitionIndexTaskInputRowIteratorBuilder), and MSQ cannot sort by
// a COMPLEX<json> column (FrameWriterUtils.verifySortColumns, the
// ColumnTypeNotSupported fault). Lists, structs, maps and variants are
// refused under both engines.
func (p Partitioning) check(src Source) error {
	native, err := ParsePartitions(p.Native)
	if err != nil {
		return err
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"targetRowsPerSegment", p.TargetRows}, {"maxRowsPerSegment", p.MaxRows}, {"numShards", p.NumShards}} {
		if n.v < 0 {
			return fmt.Errorf("%w: %s %d: want a positive number", ErrInvalid, n.name, n.v)
		}
	}
	switch native {
	case PartitionsDynamic:
		if p.TargetRows > 0 || p.NumShards > 0 {
			return fmt.Errorf("%w: targetRowsPerSegment and numShards go with partitionsSpec range or hashed; "+
				"a dynamic partitionsSpec takes maxRowsPerSegment", ErrInvalid)
		}
	case PartitionsRange:
		if len(p.ClusteredBy) == 0 {
			return fmt.Errorf("%w: partitionsSpec range needs clusteredBy, the columns to partition by (partitionDimensions)", ErrInvalid)
		}
		if p.TargetRows > 0 && p.MaxRows > 0 {
			return fmt.Errorf("%w: partitionsSpec range takes targetRowsPerSegment or maxRowsPerSegment, not both", ErrInvalid)
		}
		if p.NumShards > 0 {
			return fmt.Errorf("%w: numShards goes with partitionsSpec hashed; range takes targetRowsPerSegment or maxRowsPerSegment", ErrInvalid)
		}
	case PartitionsHashed:
		if p.TargetRows > 0 && p.MaxRows > 0 {
			return fmt.Errorf("%w: partitionsSpec hashed takes targetRowsPerSegment or maxRowsPerSegment, not both", ErrInvalid)
		}
		if p.NumShards > 0 && (p.TargetRows > 0 || p.MaxRows > 0) {
			return fmt.Errorf("%w: partitionsSpec hashed takes numShards or targetRowsPerSegment, not both", ErrInvalid)
		}
	}
	outputs, err := src.outputs()
	if err != nil {
		return err
	}
	for i, name := range p.ClusteredBy {
		if slices.Contains(p.ClusteredBy[:i], name) {
			return fmt.Errorf("%w: clusteredBy names %q twice", ErrInvalid, name)
		}
		at := slices.IndexFunc(outputs, func(c Column) bool { return c.Name == name })
		if at < 0 {
			return fmt.Errorf("%w: clusteredBy %q is not a column the plan serves", ErrInvalid, name)
		}
		if c := outputs[at]; IsArray(c.Extern) || c.Druid == TypeComplex {
			return fmt.Errorf("%w: clusteredBy %q is %s: Druid partitions by columns of one scalar per row (range partitioning "+
				"fails on a list, MSQ cannot sort by nested data)", ErrInvalid, name, c.Druid)
		}
	}
	return nil
}

// partitionsSpec is the native tuningConfig's partitionsSpec, and whether
// it needs forceGuaranteedRollup: range and hashed do, dynamic must go
// without it (IndexTask.IndexTuningConfig: "DynamicPartitionsSpec cannot be
// used for perfect rollup", "DynamicPartitionsSpec must be used for
// best-effort rollup").
func (p Partitioning) partitionsSpec() (spec map[string]any, perfect bool) {
	native, _ := ParsePartitions(p.Native)
	spec = map[string]any{"type": native}
	switch native {
	case PartitionsDynamic:
		if p.MaxRows > 0 {
			spec["maxRowsPerSegment"] = p.MaxRows
		}
		return spec, false
	case PartitionsRange:
		spec["partitionDimensions"] = p.ClusteredBy
		switch {
		case p.MaxRows > 0:
			spec["maxRowsPerSegment"] = p.MaxRows
		case p.TargetRows > 0:
			spec["targetRowsPerSegment"] = p.TargetRows
		default:
			spec["targetRowsPerSegment"] = DefaultTargetRows
		}
	case PartitionsHashed:
		if len(p.ClusteredBy) > 0 {
			spec["partitionDimensions"] = p.ClusteredBy
		}
		switch {
		case p.NumShards > 0:
			spec["numShards"] = p.NumShards
		case p.MaxRows > 0:
			spec["maxRowsPerSegment"] = p.MaxRows
		case p.TargetRows > 0:
			spec["targetRowsPerSegment"] = p.TargetRows
		}
	}
	return spec, true
}

// clusteredBy is a statement's CLUSTERED BY clause, or "".
func (p Partitioning) clusteredBy() string {
	if len(p.ClusteredBy) == 0 {
		return ""
	}
	names := make([]string, len(p.ClusteredBy))
	for i, n := range p.ClusteredBy {
		names[i] = Ident(n)
	}
	return "\nCLUSTERED BY " + strings.Join(names, ", ")
}
