package druid

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Interval is a Druid time interval [Start, End) in UTC; the zero Interval
// is all time.
type Interval struct{ Start, End time.Time }

// All says whether the interval is all time.
func (iv Interval) All() bool { return iv.Start.IsZero() && iv.End.IsZero() }

// String is the interval in Druid's ISO 8601 form, or ALL.
func (iv Interval) String() string {
	if iv.All() {
		return "ALL"
	}
	const layout = "2006-01-02T15:04:05.000Z"
	return iv.Start.UTC().Format(layout) + "/" + iv.End.UTC().Format(layout)
}

// Statement is an MSQ INSERT or REPLACE that reads a Source through EXTERN,
// the body of Druid's POST /druid/v2/sql/task.
type Statement struct {
	Replace    bool
	DataSource string
	// Overwrite bounds a REPLACE: OVERWRITE WHERE over the interval, or
	// OVERWRITE ALL for the zero Interval.
	Overwrite     Interval
	PartitionedBy Granularity
	// AllowEmpty lets the statement write no row: a REPLACE that reads
	// nothing then deletes what its interval held (failOnEmptyInsert
	// false). Statements of an EmptySource always allow it.
	AllowEmpty bool
	// ClusteredBy are the statement's CLUSTERED BY columns (Partitioning's;
	// the native fields are not read).
	ClusteredBy []string
}

// Check refuses what Druid's SQL layer refuses before any task runs.
//
// A bounded OVERWRITE must start and end on PARTITIONED BY chunk
// boundaries, in UTC (DruidSqlParserUtils.validateQueryAndConvertToIntervals:
// "OVERWRITE WHERE clause identified interval … which is not aligned with
// PARTITIONED BY granularity"); with ALL TIME no bound is aligned
// (AllGranularity.bucketStart is DateTimes.MIN), so a bounded OVERWRITE
// needs a finer granularity.
func (st Statement) Check() error {
	if err := CheckDataSource(st.DataSource); err != nil {
		return err
	}
	if !st.Replace {
		if !st.Overwrite.All() {
			return fmt.Errorf("%w: overwrite goes with statement=replace", ErrInvalid)
		}
		return nil
	}
	iv := st.Overwrite
	if iv.All() {
		return nil
	}
	if !iv.End.After(iv.Start) {
		return fmt.Errorf("%w: overwrite %s ends before it starts", ErrInvalid, iv)
	}
	if st.PartitionedBy == GranularityAll {
		return fmt.Errorf("%w: overwrite %s with partitionedBy ALL: Druid refuses a bounded OVERWRITE with PARTITIONED BY ALL TIME "+
			"(no interval is aligned to it); partition by DAY or another granularity, or overwrite ALL", ErrInvalid, iv)
	}
	for _, end := range []time.Time{iv.Start, iv.End} {
		// A TIMESTAMP literal has a four-digit year: Calcite's
		// TimestampString (core/src/main/java/org/apache/calcite/util/
		// TimestampString.java, PATTERN) refuses any other, so Druid
		// cannot parse the statement.
		if y := end.UTC().Year(); y < 0 || y > 9999 {
			return fmt.Errorf("%w: overwrite %s: %s is not in a four-digit year, and Druid SQL's TIMESTAMP literals "+
				"have four-digit years (0000 to 9999)", ErrInvalid, iv, end.UTC().Format(time.RFC3339))
		}
		if !st.PartitionedBy.Aligned(end) {
			floor := st.PartitionedBy.Floor(end)
			return fmt.Errorf("%w: overwrite %s is not aligned to partitionedBy %s (in UTC): Druid refuses it; %s falls in the chunk %s",
				ErrInvalid, iv, st.PartitionedBy, end.UTC().Format(time.RFC3339Nano),
				Interval{floor, st.PartitionedBy.Next(floor)})
		}
	}
	return nil
}

// SQL renders the statement over src. Every name is a quoted identifier
// and every JSON argument a string literal, each escaped, so no name can
// end the statement. A statement larger than MaxPayloadBytes is refused
// (ErrTooLarge).
//
// Beside OVERWRITE, the statement's own WHERE keeps only rows inside the
// interval (MSQ fails a whole REPLACE with InsertTimeOutOfBounds when a row
// falls outside it: ControllerImpl), or, unbounded, only rows with a time
// (MSQ fails on a null __time with InsertTimeNull: MSQTasks).
func (st Statement) SQL(src Source) (string, error) {
	if err := st.Check(); err != nil {
		return "", err
	}
	var intervals []Interval
	if !st.Overwrite.All() {
		intervals = []Interval{st.Overwrite}
	}
	query, err := st.render(intervals, src)
	if err != nil {
		return "", err
	}
	return query, checkPayload("statement", len(query))
}

// render writes the statement over src, a REPLACE overwriting the
// intervals (all time when there are none): checked, sorted, disjoint.
func (st Statement) render(intervals []Interval, src Source) (string, error) {
	if len(src.InputSource.URIs) == 0 && !src.empty() {
		return "", fmt.Errorf("%w: the plan has no URI to read, and Druid's http inputSource refuses an empty uris list", ErrNothingToRead)
	}
	if src.empty() && !st.Replace {
		return "", fmt.Errorf("%w: an INSERT of nothing", ErrNothingToRead)
	}
	if err := src.checkConstant(); err != nil {
		return "", err
	}
	if src.constant() {
		// Every row has the one time: the statement keeps all or none.
		for _, iv := range intervals {
			if src.ConstantTime.Before(iv.Start) || !src.ConstantTime.Before(iv.End) {
				return "", fmt.Errorf("%w: constantTime %s lies outside overwrite %s: Druid would refuse every row "+
					"(InsertTimeOutOfBounds)", ErrInvalid, src.ConstantTime.UTC().Format(isoMillis), iv)
			}
		}
	}
	srcJSON, err := json.Marshal(src.inputSource())
	if err != nil {
		return "", fmt.Errorf("encode inputSource: %w", err)
	}
	formatJSON, err := json.Marshal(src.externFormat())
	if err != nil {
		return "", fmt.Errorf("encode inputFormat: %w", err)
	}
	type sigColumn struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	var sig []sigColumn
	for _, c := range src.Columns() {
		name := c.Name
		if !src.constant() && name == src.TimeField.Name {
			name = src.externTime()
		}
		sig = append(sig, sigColumn{Name: name, Type: c.Extern})
	}
	outputs, err := src.outputs()
	if err != nil {
		return "", err
	}
	clustering := Partitioning{ClusteredBy: st.ClusteredBy}
	if err := clustering.check(src); err != nil {
		return "", err
	}
	selects := []string{src.timeExpr() + ` AS "__time"`}
	for _, c := range outputs {
		selects = append(selects, c.Select())
	}
	signature, err := json.Marshal(sig)
	if err != nil {
		return "", fmt.Errorf("encode signature: %w", err)
	}
	var b strings.Builder
	if st.Replace {
		b.WriteString("REPLACE INTO " + Ident(st.DataSource) + " OVERWRITE ")
		if len(intervals) == 0 {
			b.WriteString("ALL")
		} else {
			b.WriteString("WHERE " + within(`"__time"`, intervals))
		}
	} else {
		b.WriteString("INSERT INTO " + Ident(st.DataSource))
	}
	b.WriteString("\nSELECT\n  ")
	b.WriteString(strings.Join(selects, ",\n  "))
	b.WriteString("\nFROM TABLE(\n  EXTERN(\n    ")
	b.WriteString(String(string(srcJSON)) + ",\n    ")
	b.WriteString(String(string(formatJSON)) + ",\n    ")
	b.WriteString(String(string(signature)) + "\n  )\n)\n")
	switch {
	case src.constant():
		// Every row has a time, within the intervals.
	case len(intervals) == 0:
		b.WriteString("WHERE " + Ident(src.externTime()) + " IS NOT NULL\n")
	default:
		b.WriteString("WHERE " + within(src.timeExpr(), intervals) + "\n")
	}
	b.WriteString("PARTITIONED BY " + st.PartitionedBy.PartitionedBy())
	b.WriteString(clustering.clusteredBy())
	return b.String(), nil
}

// within is the condition that expr (a TIMESTAMP) lies in one of the
// intervals: OVERWRITE WHERE takes an OR of ANDs of comparisons with
// TIMESTAMP literals (DruidSqlParserUtils.convertQueryToDimFilter).
func within(expr string, intervals []Interval) string {
	if len(intervals) == 1 {
		iv := intervals[0]
		return expr + " >= " + Timestamp(iv.Start) + " AND " + expr + " < " + Timestamp(iv.End)
	}
	parts := make([]string, len(intervals))
	for i := range intervals {
		parts[i] = "(" + within(expr, intervals[i:i+1]) + ")"
	}
	return strings.Join(parts, " OR ")
}

// Context is the statement's MSQ query context. sqlTimeZone is UTC, so
// that Druid reads the TIMESTAMP literals as the sidecar writes them
// (without it the cluster's druid.sql.planner.sqlTimeZone applies).
// failOnEmptyInsert false lets a REPLACE that reads no row delete its
// interval (MultiStageQueryContext, Druid 29 and later); earlier versions
// ignore the key and fail such a statement with InsertCannotBeEmpty.
//
// arrayIngestMode array makes an ARRAY column of a list of scalars
// declared ARRAY<…> in EXTERN, pinned to that type in every segment
// (DimensionSchemaUtils.createDimensionSchema: an AutoTypeColumnSchema
// with castToType); under mvd, the default before Druid 31, Druid refuses
// numeric arrays and makes string arrays multi-value STRING columns.
func (st Statement) Context(src Source) map[string]any {
	ctx := map[string]any{"maxNumTasks": 2, "sqlTimeZone": "UTC"}
	for _, c := range src.Columns() {
		if IsArray(c.Extern) {
			ctx["arrayIngestMode"] = "array"
			break
		}
	}
	if st.AllowEmpty || src.empty() {
		ctx["failOnEmptyInsert"] = false
	}
	return ctx
}

// Warnings are what an operator should know before submitting the
// statement over src.
func (st Statement) Warnings(src Source) []string {
	if !src.empty() {
		return nil
	}
	return []string{fmt.Sprintf("nothing to read: this REPLACE deletes what %s holds in %s; it needs Druid %s or later "+
		"(failOnEmptyInsert), earlier versions fail it with InsertCannotBeEmpty", Ident(st.DataSource), st.Overwrite, VersionEmptyReplace)}
}
