package druidsim

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A datasource's columns are typed segment by segment, as Druid types
// them: each ingestion builds one incremental index per time chunk of its
// segment granularity (Sink, and MSQ's segment generator per PARTITIONED
// BY chunk), every dimension typed by its DimensionSchema and, for auto
// and json dimensions, by the values of that chunk alone; the Broker then
// merges the types of a datasource's segments into the one type SQL sees.

// Segment is the column types of one segment: the rows one ingestion
// (or one subtask of it) wrote into one time chunk.
type Segment struct {
	// Interval is the segment's time chunk, in Druid's ISO 8601 form.
	Interval string
	// Partition is the segment's number in its time chunk, from 0: an
	// index_parallel task whose subtasks read one URI each writes a
	// segment per subtask and chunk.
	Partition int
	// Types are its columns' types, as the segment was persisted.
	Types map[string]string
	// Rows counts its rows.
	Rows int
}

// segment is a Segment in the model's own form.
type segment struct {
	lo, hi int64
	part   int
	types  map[string]string
	rows   int
}

// colSchema is how one written column is indexed: its dimension schema's
// type ("long", "float", "double", "string", "auto", "json") and, for
// auto, its castToType when the Druid version honours it.
type colSchema struct {
	typ, cast string
}

// columnTypeOf is the type of one column in one segment, from its
// schema and the values the segment's rows hold (as indexed).
//
// Classic typed dimensions keep their type. An auto dimension with
// castToType keeps the cast (AutoTypeColumnIndexer.processCast,
// AutoTypeColumnMerger: explicitType). Without one, and for json
// dimensions from Druid 28 (NestedDataColumnSchema format v5 is the auto
// indexer), the type is what the segment's values make it
// (AutoTypeColumnIndexer.getLogicalType, then AutoTypeColumnMerger at
// persist): all null is STRING ("we didn't see anything, so we can be
// anything, so why not a string?"), any object or list of non-scalars is
// COMPLEX<json>, one scalar or array type is that type, only empty or
// all-null lists are ARRAY<LONG> (FieldTypeInfo.MutableTypeSet
// .getSingleType), and mixed root types are their least restrictive type
// (a variant column). Before Druid 28 a json dimension is the v4 nested
// column, COMPLEX<json> whatever it holds (NestedDataColumnIndexerV4).
func (d *Druid) columnTypeOf(s colSchema, vals []any) string {
	switch s.typ {
	case "long", "float", "double", "string":
		return druidType(s.typ)
	case "json":
		if d.version() < 28 {
			return "COMPLEX<json>"
		}
	}
	if s.cast != "" {
		return s.cast
	}
	allNull, nested, untyped, hasArrays := true, false, false, false
	types := map[string]bool{}
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			continue
		case map[string]any:
			nested = true
		case []any:
			hasArrays = true
			elem, ok := arrayElementType(x)
			switch {
			case !ok:
				nested = true
			case elem == "":
				untyped = true
			default:
				types["ARRAY<"+elem+">"] = true
			}
		default:
			types[bestEffortType(v)] = true
		}
		allNull = false
	}
	switch {
	case allNull:
		return "STRING"
	case nested:
		return "COMPLEX<json>"
	case len(types) == 0:
		// Only empty and all-null lists: "ARRAY<LONG> is the most
		// restrictive type we can pick".
		return "ARRAY<LONG>"
	}
	out := ""
	for _, t := range slices.Sorted(maps.Keys(types)) {
		out, _ = leastRestrictiveType(out, t)
	}
	if (untyped || hasArrays) && !strings.HasPrefix(out, "ARRAY<") {
		// Empty lists have no type of their own: the column is an array
		// of its scalars' type.
		out = "ARRAY<" + out + ">"
	}
	return out
}

// arrayElementType is ExprEval.bestEffortArray's element type for a list
// of bestEffort values: the least restrictive of its scalars' types, ""
// for an empty or all-null list; ok is false for a list that holds an
// object or a list (nested data, not a primitive array).
func arrayElementType(list []any) (elem string, ok bool) {
	for _, e := range list {
		switch e.(type) {
		case nil:
		case map[string]any, []any:
			return "", false
		default:
			elem = leastRestrictive(elem, bestEffortType(e))
		}
	}
	return elem, true
}

// leastRestrictiveType is ColumnType.leastRestrictiveType
// (processing/src/main/java/org/apache/druid/segment/column/ColumnType.java):
// COMPLEX<json> wins over every other type, arrays take the least
// restrictive element type, STRING wins over numbers, LONG with LONG is
// LONG, FLOAT with FLOAT is FLOAT, any other mix of numbers DOUBLE.
func leastRestrictiveType(a, b string) (string, error) {
	complexA, complexB := strings.HasPrefix(a, "COMPLEX<"), strings.HasPrefix(b, "COMPLEX<")
	elemA, arrA := strings.CutPrefix(a, "ARRAY<")
	elemB, arrB := strings.CutPrefix(b, "ARRAY<")
	elemA, elemB = strings.TrimSuffix(elemA, ">"), strings.TrimSuffix(elemB, ">")
	switch {
	case a == "":
		return b, nil
	case b == "" || a == b:
		return a, nil
	case complexA && complexB:
		return "", fmt.Errorf("Cannot implicitly cast %s to %s", a, b)
	case a == "COMPLEX<json>" || b == "COMPLEX<json>":
		return "COMPLEX<json>", nil
	case complexA || complexB:
		return "", fmt.Errorf("Cannot implicitly cast %s to %s", a, b)
	case arrA && arrB:
		e, err := leastRestrictiveType(elemA, elemB)
		return "ARRAY<" + e + ">", err
	case arrA:
		e, err := leastRestrictiveType(elemA, b)
		return "ARRAY<" + e + ">", err
	case arrB:
		e, err := leastRestrictiveType(a, elemB)
		return "ARRAY<" + e + ">", err
	case a == "STRING" || b == "STRING":
		return "STRING", nil
	}
	return "DOUBLE", nil
}

// segmentTypes types the columns of the rows one ingestion wrote into one
// time chunk. Rows hold the columns they were given a value for (nil
// included); a column a row lacks is null in it.
func (d *Druid) segmentTypes(rows []Row, schemas map[string]colSchema) map[string]string {
	out := make(map[string]string, len(schemas))
	for name, s := range schemas {
		vals := make([]any, len(rows))
		for i, r := range rows {
			vals[i] = r.Columns[name]
		}
		out[name] = d.columnTypeOf(s, vals)
	}
	return out
}

// typedValues makes the booleans that nestedValue kept 1 and 0 in the
// auto and json columns (without a castToType, which typed them already)
// that a segment does not type COMPLEX<json>: there the auto indexer
// holds the values it typed (ExprEval.bestEffortOf), not the JSON it
// read. The rows' Columns are changed in place.
func typedValues(rows []Row, schemas map[string]colSchema, types map[string]string) {
	for col, typ := range types {
		if s := schemas[col]; typ == "COMPLEX<json>" || s.cast != "" || s.typ != "auto" && s.typ != "json" {
			continue
		}
		for _, r := range rows {
			if v, ok := r.Columns[col]; ok && v != nil {
				r.Columns[col] = bestEffort(v)
			}
		}
	}
}

// writeSegments records the segments of one ingestion: the segments for
// which drop holds are replaced (dropped), and one segment per time chunk
// of gran that rows fall into and per subtask (tasks[i] is the subtask of
// rows[i]; nil is one task) is added; d.mu is held.
func (d *Druid) writeSegments(dataSource string, gran granularity, rows []Row, tasks []int, schemas map[string]colSchema, drop func(lo, hi int64) bool) {
	kept := slices.DeleteFunc(slices.Clone(d.segments[dataSource]), func(s segment) bool { return drop(s.lo, s.hi) })
	type key struct {
		lo   int64
		task int
	}
	chunks := map[key][]Row{}
	for i, r := range rows {
		lo := int64(math.MinInt64)
		if !gran.all {
			start, _ := gran.bucketStart(msTime(r.Time))
			lo = start.UnixMilli()
		}
		k := key{lo: lo}
		if tasks != nil {
			k.task = tasks[i]
		}
		chunks[k] = append(chunks[k], r)
	}
	keys := slices.SortedFunc(maps.Keys(chunks), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.task, b.task))
	})
	part := 0
	for i, k := range keys {
		if i > 0 && keys[i-1].lo == k.lo {
			part++
		} else {
			part = 0
		}
		lo, rs := k.lo, chunks[k]
		hi := int64(math.MaxInt64)
		if !gran.all {
			hi = gran.next(msTime(lo)).UnixMilli()
		}
		types := d.segmentTypes(rs, schemas)
		typedValues(rs, schemas, types)
		kept = append(kept, segment{lo: lo, hi: hi, part: part, types: types, rows: len(rs)})
	}
	slices.SortStableFunc(kept, func(a, b segment) int { return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.part, b.part)) })
	d.segments[dataSource] = kept
}

// markUnused drops the segments of a datasource that lie in [lo, hi)
// and their rows (SqlSegmentsMetadataManager.markAsUnusedSegmentsInInterval
// marks the used segments the interval contains), and answers how many.
func (d *Druid) markUnused(dataSource string, lo, hi int64) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	d.segments[dataSource] = slices.DeleteFunc(d.segments[dataSource], func(s segment) bool {
		in := lo <= s.lo && s.hi <= hi
		if in {
			n++
		}
		return in
	})
	d.datasources[dataSource] = slices.DeleteFunc(d.datasources[dataSource], func(r Row) bool {
		return r.Time >= lo && r.Time < hi && !slices.ContainsFunc(d.segments[dataSource], func(s segment) bool {
			return s.lo <= r.Time && r.Time < s.hi
		})
	})
	return n
}

// Segments returns the column types of a datasource's segments, in time
// order.
func (d *Druid) Segments(dataSource string) []Segment {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Segment
	for _, s := range d.segments[dataSource] {
		out = append(out, Segment{Interval: span{s.lo, s.hi}.String(), Partition: s.part, Types: maps.Clone(s.types), Rows: s.rows})
	}
	return out
}

// Types returns the Druid column types of a datasource's columns as the
// Broker gives them to SQL: each column's types in the datasource's
// segments merged (AbstractSegmentMetadataCache.buildDataSourceRowSignature
// with druid.sql.planner.metadataColumnTypeMergePolicy), from Druid 28 by
// ColumnType.leastRestrictiveType (leastRestrictive, the default), before
// by the type in the segment of the latest interval (latestInterval). A
// column whose segments' types no merge takes is "INCOMPATIBLE: …".
func (d *Druid) Types(dataSource string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]string{}
	for _, s := range d.segments[dataSource] {
		for name, t := range s.types {
			if d.version() < 28 {
				out[name] = t
				continue
			}
			if strings.HasPrefix(out[name], "INCOMPATIBLE") {
				continue
			}
			merged, err := leastRestrictiveType(out[name], t)
			if err != nil {
				merged = "INCOMPATIBLE: " + err.Error()
			}
			out[name] = merged
		}
	}
	return out
}

// castValue is an auto column's castToType of a value read
// (AutoTypeColumnIndexer.processCast: ExprEval.bestEffortOf, then
// ExprEval.castTo): a number to LONG truncated, text to a number parsed
// (NULL when it is none), a number to STRING as Java writes it, a scalar
// to an ARRAY as a one-element array, a list to an ARRAY element by
// element. ok is false for a value lost: one the cast refuses (an object
// or a list to a scalar: a ParseException, so the cell is NULL) or text
// that is no number.
func castValue(v any, cast string) (out any, ok bool) {
	v = bestEffort(v)
	if v == nil {
		return nil, true
	}
	if elem, isArr := strings.CutPrefix(cast, "ARRAY<"); isArr {
		elem = strings.TrimSuffix(elem, ">")
		list, isList := v.([]any)
		if !isList {
			if _, isMap := v.(map[string]any); isMap {
				return nil, false
			}
			list = []any{v}
		}
		arr := make([]any, len(list))
		ok = true
		for i, e := range list {
			var eok bool
			if arr[i], eok = castValue(e, elem); !eok {
				ok = false
			}
		}
		return arr, ok
	}
	switch v.(type) {
	case []any, map[string]any:
		if l, isList := v.([]any); isList && len(l) == 1 {
			// A one-element array casts as its element.
			return castValue(l[0], cast)
		}
		return nil, false
	}
	switch cast {
	case "LONG":
		if s, isStr := v.(string); isStr {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, true
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false
			}
			return javaDoubleToLong(f), true
		}
		return longValue(v), true
	case "DOUBLE", "FLOAT":
		if s, isStr := v.(string); isStr {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false
			}
			return f, true
		}
		return doubleValue(v), true
	case "STRING":
		return javaString(v), true
	}
	return nil, false
}

// castType reads a castToType as ColumnType.fromString does
// (Types.fromString): STRING, LONG, FLOAT, DOUBLE, their _ARRAY forms and
// COMPLEX in any case, ARRAY<…> and COMPLEX<…> as written; any other
// string is no type at all (null), which Jackson accepts. FLOAT is DOUBLE
// (AutoTypeColumnSchema: "auto doesn't currently do FLOAT"), and a type
// that is neither primitive nor a primitive array is no cast: the
// indexer and the merger ignore it (AutoTypeColumnIndexer,
// AutoTypeColumnMerger: explicitType). So castToType "COMPLEX<json>" and
// "json" (no type) both leave the column to its values.
func castType(s string) (string, error) {
	t, err := columnType(s)
	switch {
	case err != nil:
		return "", err
	case t == "FLOAT":
		return "DOUBLE", nil
	case t == "ARRAY<FLOAT>":
		return "ARRAY<DOUBLE>", nil
	case t == "LONG", t == "DOUBLE", t == "STRING", t == "ARRAY<LONG>", t == "ARRAY<DOUBLE>", t == "ARRAY<STRING>":
		return t, nil
	}
	return "", nil
}

// columnType is Types.fromString: the type s names, "" for none (null).
func columnType(s string) (string, error) {
	switch u := strings.ToUpper(s); u {
	case "STRING", "LONG", "FLOAT", "DOUBLE":
		return u, nil
	case "STRING_ARRAY", "LONG_ARRAY", "DOUBLE_ARRAY":
		return "ARRAY<" + strings.TrimSuffix(u, "_ARRAY") + ">", nil
	case "COMPLEX":
		return "COMPLEX", nil
	}
	if elem, ok := strings.CutPrefix(s, "ARRAY<"); ok {
		e, err := columnType(elem[:max(len(elem)-1, 0)])
		if err == nil && e == "" {
			err = fmt.Errorf("castToType %q: Array element type must not be null", s)
		}
		return "ARRAY<" + e + ">", err
	}
	if strings.HasPrefix(s, "COMPLEX<") {
		return s, nil
	}
	return "", nil
}
