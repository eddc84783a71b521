package druidsim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// indexTask is the part of an index_parallel task the model reads; like
// Druid's mapper it ignores properties it does not know.
type indexTask struct {
	Type string `json:"type"`
	Spec struct {
		DataSchema struct {
			DataSource    string `json:"dataSource"`
			TimestampSpec struct {
				Column       string `json:"column"`
				Format       string `json:"format"`
				MissingValue string `json:"missingValue"`
			} `json:"timestampSpec"`
			DimensionsSpec struct {
				Dimensions          []json.RawMessage `json:"dimensions"`
				DimensionExclusions []string          `json:"dimensionExclusions"`
				UseSchemaDiscovery  bool              `json:"useSchemaDiscovery"`
				IncludeAllDims      bool              `json:"includeAllDimensions"`
			} `json:"dimensionsSpec"`
			GranularitySpec struct {
				SegmentGranularity json.RawMessage `json:"segmentGranularity"`
				Intervals          []string        `json:"intervals"`
			} `json:"granularitySpec"`
			TransformSpec struct {
				Filter     json.RawMessage   `json:"filter"`
				Transforms []json.RawMessage `json:"transforms"`
			} `json:"transformSpec"`
		} `json:"dataSchema"`
		IOConfig struct {
			Type             string          `json:"type"`
			InputSource      json.RawMessage `json:"inputSource"`
			InputFormat      json.RawMessage `json:"inputFormat"`
			AppendToExisting bool            `json:"appendToExisting"`
			DropExisting     bool            `json:"dropExisting"`
		} `json:"ioConfig"`
		TuningConfig struct {
			MaxNumConcurrentSubTasks *int            `json:"maxNumConcurrentSubTasks"`
			ForceGuaranteedRollup    bool            `json:"forceGuaranteedRollup"`
			PartitionsSpec           json.RawMessage `json:"partitionsSpec"`
		} `json:"tuningConfig"`
	} `json:"spec"`
}

// dimension is one entry of dimensionsSpec.dimensions: a name (a string
// dimension) or {"type","name"} (DimensionSchema; no type is "string"),
// with an auto dimension's castToType.
type dimension struct{ name, typ, cast string }

func (d *Druid) parseDimension(raw json.RawMessage) (dimension, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return dimension{name: name, typ: "string"}, nil
	}
	var dim struct {
		Type, Name string
		CastToType string `json:"castToType"`
	}
	if err := json.Unmarshal(raw, &dim); err != nil {
		return dimension{}, fmt.Errorf("dimension %s: %w", raw, err)
	}
	switch dim.Type {
	case "":
		dim.Type = "string"
	case "string", "long", "float", "double", "json":
	case "auto":
		// AutoTypeColumnSchema, registered from Druid 26: before, Jackson
		// knows no such type id.
		if d.version() < 26 {
			return dimension{}, fmt.Errorf("dimension %q: Could not resolve type id 'auto' (Druid %d)", dim.Name, d.version())
		}
	default:
		return dimension{}, fmt.Errorf("dimension %q: type %q is not modelled", dim.Name, dim.Type)
	}
	if dim.Name == "" {
		return dimension{}, fmt.Errorf("dimension %s has no name", raw)
	}
	out := dimension{name: dim.Name, typ: dim.Type}
	if dim.Type == "auto" && dim.CastToType != "" && d.version() >= 29 {
		// castToType came with Druid 29 (apache/druid#15417); Druid's
		// mapper ignores the property before.
		var err error
		if out.cast, err = castType(dim.CastToType); err != nil {
			return dimension{}, fmt.Errorf("dimension %q: %w", dim.Name, err)
		}
	}
	return out, nil
}

// segmentGranularity reads granularitySpec.segmentGranularity: a
// GranularityType name in any case (Granularity.fromString), or an object
// (GranularityModule: "period", "all"). A period string such as "P1W" is
// not a name, and Druid refuses it. Absent is DAY (UniformGranularitySpec).
func segmentGranularity(raw json.RawMessage) (granularity, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return granularityType("DAY")
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		g, err := granularityType(name)
		if err != nil {
			return g, fmt.Errorf("segmentGranularity %q: %w", name, err)
		}
		return g, nil
	}
	var obj struct{ Type, Period, TimeZone string }
	if err := json.Unmarshal(raw, &obj); err != nil {
		return granularity{}, fmt.Errorf("segmentGranularity: %w", err)
	}
	switch obj.Type {
	case "all":
		return allGranularity, nil
	case "period":
		if obj.TimeZone != "" && obj.TimeZone != "UTC" {
			return granularity{}, fmt.Errorf("segmentGranularity time zone %q is not modelled", obj.TimeZone)
		}
		return periodGranularity(obj.Period)
	}
	return granularity{}, fmt.Errorf("segmentGranularity type %q is not modelled", obj.Type)
}

// ExecTask runs an index_parallel task as Druid's native batch ingestion
// would: rows without a parseable time are unparseable (skipped and
// counted; the default maxParseExceptions has no bound), rows outside
// granularitySpec.intervals are thrown away; each dimension is typed by
// its DimensionSchema (or discovered); with appendToExisting false, the
// intervals (with dropExisting) or else the time chunks the rows fall into
// are replaced.
func (d *Druid) ExecTask(ctx context.Context, spec []byte) error {
	var t indexTask
	if err := json.Unmarshal(spec, &t); err != nil {
		return fmt.Errorf("task: %w", err)
	}
	if t.Type != "index_parallel" || t.Spec.IOConfig.Type != "index_parallel" {
		return fmt.Errorf("task type %q, ioConfig type %q: want index_parallel", t.Type, t.Spec.IOConfig.Type)
	}
	if n := t.Spec.TuningConfig.MaxNumConcurrentSubTasks; n != nil && *n < 1 {
		return fmt.Errorf("maxNumConcurrentSubTasks %d: want at least 1", *n)
	}
	partitions, err := parsePartitionsSpec(t.Spec.TuningConfig.PartitionsSpec, t.Spec.TuningConfig.ForceGuaranteedRollup,
		t.Spec.IOConfig.AppendToExisting)
	if err != nil {
		return err
	}
	ds := t.Spec.DataSchema
	if f := ds.TransformSpec.Filter; len(ds.TransformSpec.Transforms) > 0 || len(f) > 0 && string(f) != "null" {
		// Druid's expressions are not modelled: a task that transforms or
		// filters its rows would be held to rows Druid never writes.
		return fmt.Errorf("transformSpec is not modelled")
	}
	if ds.DataSource == "" {
		return fmt.Errorf("dataSchema.dataSource is required")
	}
	if ds.TimestampSpec.Column == "" {
		return fmt.Errorf("timestampSpec.column is required")
	}
	gran, err := segmentGranularity(ds.GranularitySpec.SegmentGranularity)
	if err != nil {
		return err
	}
	// TimestampSpec.parseDateTime: a null or absent time is missingValue
	// (a Joda DateTime, read from an ISO string), when set.
	var missing *int64
	if mv := ds.TimestampSpec.MissingValue; mv != "" {
		t, err := jodaInstant(mv)
		if err != nil {
			return fmt.Errorf("timestampSpec.missingValue %q: %w", mv, err)
		}
		ms := t.UnixMilli()
		missing = &ms
	}
	var intervals []span
	for _, s := range ds.GranularitySpec.Intervals {
		a, b, err := jodaInterval(s)
		if err != nil {
			return fmt.Errorf("granularitySpec.intervals: Invalid interval[%s]: %w", s, err)
		}
		intervals = append(intervals, span{a.UnixMilli(), b.UnixMilli()})
	}
	var dims []dimension
	listed := map[string]bool{}
	for i, raw := range ds.DimensionsSpec.Dimensions {
		dim, err := d.parseDimension(raw)
		if err != nil {
			return err
		}
		if dim.name == "__time" {
			// DataSchema.computeAndValidateOutputFieldNames: __time is the
			// primary timestamp; as a dimension only the first, long-typed
			// (with forceSegmentSortByTime, the default).
			if i > 0 {
				return fmt.Errorf("Encountered dimension[__time] at position[%d]. This is only supported when the dimensionsSpec "+
					"parameter[forceSegmentSortByTime] is set to[false].", i)
			}
			if dim.typ != "long" {
				return fmt.Errorf("Encountered dimension[__time] with incorrect type[%s]. Type must be 'long'.", dim.typ)
			}
		}
		if listed[dim.name] {
			return fmt.Errorf("dimension %q listed twice", dim.name)
		}
		if slices.Contains(ds.DimensionsSpec.DimensionExclusions, dim.name) {
			// DimensionsSpec.verify.
			return fmt.Errorf("dimensions and dimensions exclusions cannot overlap: %q", dim.name)
		}
		listed[dim.name] = true
		dims = append(dims, dim)
	}
	// MapInputRowParser.findDimensions: with discovery the listed
	// dimensions and then every other field but the timestamp column and
	// the exclusions; with a list and no discovery, the list; with
	// neither, every field as a string (schemaless).
	discover := ds.DimensionsSpec.UseSchemaDiscovery || ds.DimensionsSpec.IncludeAllDims || len(dims) == 0
	discoveredType := "string"
	if ds.DimensionsSpec.UseSchemaDiscovery {
		discoveredType = "auto"
	}
	src, raw, uris, err := d.read(ctx, t.Spec.IOConfig.InputSource, t.Spec.IOConfig.InputFormat)
	if err != nil {
		return err
	}
	// ParallelIndexSupervisorTask: with maxNumConcurrentSubTasks above 1
	// each split of the input source (HttpInputSource: each URI) is a
	// single_phase_sub_task of its own, which writes its own segment of
	// every time chunk it has rows in, typed by those rows alone; with 1
	// (the default) one task reads everything, one segment a chunk.
	// With a hashed or range partitionsSpec (perfect rollup) the
	// subtasks only partition the rows: partial_segment_merge tasks then
	// write one segment per time chunk and partition, typed by all of its
	// rows (seen on Druid 33: the v3 table's three URIs make one segment
	// of its day).
	subTasks := src.in.Type == "http" && t.Spec.TuningConfig.MaxNumConcurrentSubTasks != nil &&
		*t.Spec.TuningConfig.MaxNumConcurrentSubTasks > 1 && partitions.Type == "dynamic"
	var rows []Row
	var rowTasks []int
	dropped, unparseable := 0, 0
	var withError []string
	chunks := map[int64]bool{}
	schemas := map[string]colSchema{}
	// Under perfect rollup the rows' fields as read (read[i] of rows[i]),
	// by time chunk (byChunk), for their partitions.
	var read []map[string]any
	byChunk := map[int64][]int{}
	chunkOf := func(ms int64) int64 {
		if start, ok := gran.bucketStart(msTime(ms)); ok {
			return start.UnixMilli()
		}
		return math.MinInt64
	}
	for i, obj := range raw {
		ms, ok := parseTimestamp(obj[ds.TimestampSpec.Column], ds.TimestampSpec.Format)
		if v := obj[ds.TimestampSpec.Column]; v == nil && missing != nil {
			ms, ok = *missing, true
		}
		if !ok {
			unparseable++
			continue
		}
		if len(intervals) > 0 && !slices.ContainsFunc(intervals, func(s span) bool { return ms >= s.lo && ms < s.hi }) {
			dropped++
			continue // thrown away
		}
		cols := map[string]any{}
		rowDims := slices.Clone(dims)
		if discover {
			for name := range obj {
				if !listed[name] && name != ds.TimestampSpec.Column && !slices.Contains(ds.DimensionsSpec.DimensionExclusions, name) {
					rowDims = append(rowDims, dimension{name: name, typ: discoveredType})
				}
			}
		}
		if err := partitions.checkRow(obj); err != nil {
			return err
		}
		for _, dim := range rowDims {
			var v any
			if dim.cast != "" {
				v, ok = castValue(obj[dim.name], dim.cast)
			} else {
				v, ok = dimensionValue(obj[dim.name], dim.typ)
			}
			if !ok {
				withError = append(withError, fmt.Sprintf("%s (%s) %s", dim.name, dim.typ, canonical(obj[dim.name])))
			}
			cols[dim.name] = v
			schemas[dim.name] = colSchema{typ: dim.typ, cast: dim.cast}
		}
		rows = append(rows, Row{Time: ms, Columns: cols})
		if subTasks {
			rowTasks = append(rowTasks, uris[i])
		} else {
			rowTasks = append(rowTasks, 0)
		}
		if start, ok := gran.bucketStart(msTime(ms)); ok {
			chunks[start.UnixMilli()] = true
		}
		if partitions.perfect() {
			byChunk[chunkOf(ms)] = append(byChunk[chunkOf(ms)], len(rows)-1)
			read = append(read, obj)
		}
	}
	for _, idx := range byChunk {
		objs := make([]map[string]any, len(idx))
		for j, i := range idx {
			objs[j] = read[i]
		}
		parts, err := partitions.partitionOf(objs)
		if err != nil {
			return err
		}
		for j, i := range idx {
			rowTasks[i] = parts[j]
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if src.in.Type == "http" {
		d.dropped += dropped
	}
	d.unparseable += unparseable
	d.nulled = append(d.nulled, withError...)
	cur := d.datasources[ds.DataSource]
	// replaced says which time chunk [lo, hi) of the datasource the task
	// replaces.
	replaced := func(lo, hi int64) bool { return false }
	switch {
	case t.Spec.IOConfig.AppendToExisting:
	case len(intervals) > 0 && t.Spec.IOConfig.DropExisting:
		// The intervals' chunks are replaced, also when no row is read
		// (tombstones).
		replaced = func(lo, hi int64) bool {
			return slices.ContainsFunc(intervals, func(s span) bool { return lo < s.hi && hi > s.lo })
		}
	case gran.all:
		replaced = func(lo, hi int64) bool { return len(rows) > 0 }
	default:
		// Overwrite by time chunk: only the chunks that get rows.
		replaced = func(lo, hi int64) bool {
			for c := range chunks {
				if c < hi && gran.next(msTime(c)).UnixMilli() > lo {
					return true
				}
			}
			return false
		}
	}
	cur = slices.DeleteFunc(slices.Clone(cur), func(r Row) bool {
		start, ok := gran.bucketStart(msTime(r.Time))
		if !ok {
			return replaced(math.MinInt64, math.MaxInt64)
		}
		return replaced(start.UnixMilli(), gran.next(start).UnixMilli())
	})
	d.datasources[ds.DataSource] = append(cur, rows...)
	d.writeSegments(ds.DataSource, gran, rows, rowTasks, schemas, replaced)
	return nil
}

// parseTimestamp reads a timestampSpec value as
// TimestampParser.createObjectTimestampParser does
// (processing/src/main/java/org/apache/druid/java/util/common/parsers/
// TimestampParser.java): millis and posix take a number (its longValue) or
// a numeric string; iso an ISO 8601 string (DateTimes.of); auto a number,
// a string of digits (epoch milliseconds) or an ISO 8601 string.
func parseTimestamp(v any, format string) (int64, bool) {
	if v == nil {
		return 0, false
	}
	num := func() (int64, bool) {
		switch x := v.(type) {
		case int64:
			return x, true
		case float64:
			return int64(x), true
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			return n, err == nil
		}
		return 0, false
	}
	switch format {
	case "", "auto":
		if n, ok := num(); ok {
			return n, true
		}
		fallthrough
	case "iso":
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		t, err := jodaInstant(s)
		if err != nil {
			return 0, false
		}
		return t.UnixMilli(), true
	case "millis":
		return num()
	case "posix":
		n, ok := num()
		return n * 1000, ok
	}
	return 0, false
}
