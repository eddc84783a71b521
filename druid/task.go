package druid

import (
	"encoding/json"
	"fmt"
)

// Task is a native index_parallel task that reads a Source, the body of
// Druid's POST /druid/indexer/v1/task.
type Task struct {
	DataSource         string
	SegmentGranularity Granularity
	// SubTasks is tuningConfig.maxNumConcurrentSubTasks.
	SubTasks int
	// Interval, when bounded, is replaced exactly: granularitySpec.intervals
	// names it (rows outside it are thrown away) and dropExisting drops
	// what it held, also when no row is read (Druid then writes
	// tombstones). The zero Interval replaces the time chunks the rows
	// fall into.
	Interval Interval
	// Partitioning is the secondary partitioning of the segments: a
	// range or hashed partitionsSpec comes with forceGuaranteedRollup.
	Partitioning Partitioning
}

// Spec renders the task over src; one larger than MaxPayloadBytes is
// refused (ErrTooLarge). Its dimensionsSpec lists every served
// column, the time column too, with the dimension type of the one type
// mapping (ColumnOf), so the datasource has the columns, and the types, an
// MSQ statement over the same source writes. (A listed timestamp column
// is ingested as a dimension too: DataSchema.computeDimensionsSpec leaves
// it out only when it is not listed.)
func (t Task) Spec(src Source) (map[string]any, error) {
	spec, err := t.spec(src)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode task: %w", err)
	}
	return spec, checkPayload("task", len(b))
}

func (t Task) spec(src Source) (map[string]any, error) {
	if err := CheckDataSource(t.DataSource); err != nil {
		return nil, err
	}
	if t.SubTasks < 1 {
		return nil, fmt.Errorf("%w: maxNumConcurrentSubTasks %d: want a positive integer", ErrInvalid, t.SubTasks)
	}
	if len(src.InputSource.URIs) == 0 && !src.empty() {
		return nil, fmt.Errorf("%w: the plan has no URI to read, and Druid's http inputSource refuses an empty uris list", ErrNothingToRead)
	}
	if src.empty() && t.Interval.All() {
		return nil, fmt.Errorf("%w: a task of nothing without an interval", ErrNothingToRead)
	}
	if err := src.checkConstant(); err != nil {
		return nil, err
	}
	granularitySpec := map[string]any{"type": "uniform", "segmentGranularity": t.SegmentGranularity.Segment(), "queryGranularity": "NONE", "rollup": false}
	ioConfig := map[string]any{
		"type":             "index_parallel",
		"inputSource":      src.inputSource(),
		"inputFormat":      src.InputFormat,
		"appendToExisting": false,
	}
	if !t.Interval.All() {
		granularitySpec["intervals"] = []string{t.Interval.String()}
		ioConfig["dropExisting"] = true
	}
	outputs, err := src.outputs()
	if err != nil {
		return nil, err
	}
	if err := t.Partitioning.check(src); err != nil {
		return nil, err
	}
	var dims []map[string]any
	for _, c := range outputs {
		dim := map[string]any{"type": c.Dimension, "name": c.Name}
		if c.Cast != "" {
			dim["castToType"] = c.Cast
		}
		dims = append(dims, dim)
	}
	partitionsSpec, perfect := t.Partitioning.partitionsSpec()
	tuningConfig := map[string]any{
		"type":                     "index_parallel",
		"maxNumConcurrentSubTasks": t.SubTasks,
		"partitionsSpec":           partitionsSpec,
	}
	if perfect {
		tuningConfig["forceGuaranteedRollup"] = true
	}
	return map[string]any{
		"type": "index_parallel",
		"spec": map[string]any{
			"dataSchema": map[string]any{
				"dataSource":      t.DataSource,
				"timestampSpec":   src.timestampSpec(),
				"dimensionsSpec":  map[string]any{"dimensions": dims},
				"granularitySpec": granularitySpec,
			},
			"ioConfig":     ioConfig,
			"tuningConfig": tuningConfig,
		},
	}, nil
}
