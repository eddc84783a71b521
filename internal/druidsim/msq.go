package druidsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// span is a time interval [lo, hi) in epoch milliseconds; math.MinInt64
// and math.MaxInt64 stand for unbounded ends.
type span struct{ lo, hi int64 }

// maxPartitionBuckets is MSQ's Limits.MAX_PARTITION_BUCKETS: the most
// time chunks one INSERT or REPLACE writes.
const maxPartitionBuckets = 5000

// ExecSQL runs an MSQ INSERT or REPLACE as Druid's SQL task would, all or
// nothing. Each refusal names the Druid class that makes it.
func (d *Druid) ExecSQL(ctx context.Context, query string, queryContext map[string]any) error {
	st, err := parseStatement(query)
	if err != nil {
		return fmt.Errorf("parse statement: %w", err)
	}
	tz, err := d.sqlTimeZone(queryContext)
	if err != nil {
		return err
	}
	if err := checkContext(queryContext); err != nil {
		return err
	}
	gran, err := d.partitionGranularity(st.partition)
	if err != nil {
		return err
	}
	var replaced []span
	if st.replace && !st.overwriteAll {
		if replaced, err = overwriteIntervals(st.overwrite, tz); err != nil {
			return err
		}
		// DruidSqlParserUtils.validateQueryAndConvertToIntervals: each
		// interval's ends must start PARTITIONED BY chunks, in UTC.
		// AllGranularity.bucketStart is DateTimes.MIN, so with ALL TIME no
		// bounded interval is aligned.
		for _, s := range replaced {
			if !gran.aligned(msTime(s.lo)) || !gran.aligned(msTime(s.hi)) {
				return fmt.Errorf("OVERWRITE WHERE clause identified interval [%s] which is not aligned with PARTITIONED BY granularity [%s]",
					s, gran)
			}
		}
	}
	types := map[string]string{}
	for _, c := range st.signature {
		// ColumnType.fromString: the model knows the scalar types and
		// COMPLEX<json>.
		switch c.Type {
		case "string", "long", "float", "double", "COMPLEX<json>", "ARRAY<LONG>", "ARRAY<DOUBLE>", "ARRAY<STRING>":
		default:
			return fmt.Errorf("EXTERN signature: column %q has type %q, which the model does not know", c.Name, c.Type)
		}
		if _, dup := types[c.Name]; dup {
			return fmt.Errorf("EXTERN signature: column %q twice", c.Name)
		}
		types[c.Name] = c.Type
	}
	// MSQTaskSqlEngine.validateNoDuplicateAliases: every output name once,
	// __time too (a column named __time beside the time expression).
	aliases := map[string]bool{}
	for _, it := range st.items {
		if aliases[it.name] {
			return fmt.Errorf("Duplicate field in SELECT: [%s]", it.name)
		}
		aliases[it.name] = true
	}
	outTypes := map[string]string{}
	timeItem := -1
	for i, it := range st.items {
		typ, err := exprType(it.e, types)
		if err != nil {
			return fmt.Errorf("SELECT %s: %w", it.e, err)
		}
		if it.name == "__time" {
			if typ != "TIMESTAMP" {
				return fmt.Errorf("SELECT: __time is %s, want a TIMESTAMP", typ)
			}
			timeItem = i
			continue
		}
		if typ == "TIMESTAMP" {
			typ = "LONG"
		}
		if _, dup := outTypes[it.name]; dup {
			return fmt.Errorf("SELECT: column %q twice", it.name)
		}
		outTypes[it.name] = typ
	}
	if err := checkClusteredBy(st, outTypes); err != nil {
		return err
	}
	schemas, err := d.msqSchemas(outTypes, queryContext)
	if err != nil {
		return err
	}
	if timeItem < 0 && !gran.all {
		return fmt.Errorf("SELECT: no __time column, and PARTITIONED BY %s needs one", gran)
	}
	if st.where != nil {
		if err := checkCond(st.where, types); err != nil {
			return fmt.Errorf("WHERE: %w", err)
		}
	}
	src, raw, _, err := d.read(ctx, st.inputSource, st.inputFormat)
	if err != nil {
		return err
	}
	var rows []Row
	var nulled []string
	for _, obj := range raw {
		vals := map[string]any{}
		for name, typ := range types {
			v, ok := externValue(obj[name], typ)
			if !ok {
				nulled = append(nulled, fmt.Sprintf("%s %s %s read as NULL", name, typ, canonical(obj[name])))
			}
			vals[name] = v
		}
		ev := evaluator{vals: vals, tz: tz}
		if st.where != nil && ev.cond(st.where) != yes {
			// A row without a time has no place in Druid; one with a
			// time was served outside what the statement keeps.
			if src.in.Type == "http" && timeItem >= 0 && ev.value(st.items[timeItem].e) != nil {
				d.mu.Lock()
				d.dropped++
				d.mu.Unlock()
			}
			continue
		}
		r := Row{Time: 0, Columns: map[string]any{}}
		for i, it := range st.items {
			v := ev.value(it.e)
			if i == timeItem {
				ms, ok := v.(int64)
				if !ok {
					// MSQTasks.primaryTimestampFromObjectForInsert.
					return fmt.Errorf("InsertTimeNull: a row has a null __time: %s", canonical(obj))
				}
				r.Time = ms
				continue
			}
			if it.e.kind == "case" && v == nil && ev.value(it.e.args[0]) != nil {
				nulled = append(nulled, fmt.Sprintf("%s: CASE matched no WHEN for %s", it.name, canonical(ev.value(it.e.args[0]))))
			}
			if outTypes[it.name] == "COMPLEX<json>" {
				// DimensionSchemaUtils: a COMPLEX<json> column is written by
				// the nested (auto) indexer, which types every leaf as
				// ExprEval.bestEffortOf does, but keeps the JSON it read
				// where the segment's column is COMPLEX<json> (nestedValue,
				// typedValues).
				v = nestedValue(v)
			}
			r.Columns[it.name] = v
		}
		if len(replaced) > 0 {
			// ControllerImpl: every PARTITIONED BY chunk the rows fall
			// into must lie within an OVERWRITE interval.
			start, _ := gran.bucketStart(msTime(r.Time))
			chunk := span{start.UnixMilli(), gran.next(start).UnixMilli()}
			if !slices.ContainsFunc(replaced, func(s span) bool { return s.lo <= chunk.lo && chunk.hi <= s.hi }) {
				return fmt.Errorf("InsertTimeOutOfBounds: Inserted data contains time chunk[%s] outside of bounds specified by OVERWRITE WHERE[%s]",
					chunk, spans(replaced))
			}
		}
		rows = append(rows, r)
	}
	if !gran.all {
		// Limits.MAX_PARTITION_BUCKETS: one statement writes at most 5,000
		// time chunks (TooManyBucketsFault).
		buckets := map[int64]bool{}
		for _, r := range rows {
			start, _ := gran.bucketStart(msTime(r.Time))
			buckets[start.UnixMilli()] = true
		}
		if len(buckets) > maxPartitionBuckets {
			return fmt.Errorf("TooManyBuckets: Too many partition buckets (max = %d); try breaking your query up into smaller "+
				"queries or using a wider PARTITIONED BY", maxPartitionBuckets)
		}
	}
	if len(rows) == 0 {
		// MultiStageQueryContext.failOnEmptyInsert (Druid 29 and later,
		// default false); before 29 an empty insert always fails.
		fail, _ := queryContext["failOnEmptyInsert"].(bool)
		if fail || d.version() < 29 {
			return fmt.Errorf("InsertCannotBeEmpty: No rows to insert for dataSource [%s]", st.dataSource)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nulled = append(d.nulled, nulled...)
	switch {
	case !st.replace:
		d.datasources[st.dataSource] = append(d.datasources[st.dataSource], rows...)
	case st.overwriteAll:
		d.datasources[st.dataSource] = rows
	default:
		kept := slices.DeleteFunc(slices.Clone(d.datasources[st.dataSource]), func(r Row) bool {
			return slices.ContainsFunc(replaced, func(s span) bool { return r.Time >= s.lo && r.Time < s.hi })
		})
		d.datasources[st.dataSource] = append(kept, rows...)
	}
	d.writeSegments(st.dataSource, gran, rows, nil, schemas, func(lo, hi int64) bool {
		return st.replace && (st.overwriteAll || slices.ContainsFunc(replaced, func(s span) bool { return s.lo <= lo && hi <= s.hi }))
	})
	return nil
}

// checkClusteredBy checks CLUSTERED BY against the statement's output
// columns: each item is an output name or a 1-based ordinal of the SELECT
// list (DruidSqlParserUtils.resolveClusteredByColumnsToOutputColumns); a
// name that is no column fails validation as Calcite does. MSQ sorts the
// rows by the clustering key, and a COMPLEX<json> column has no sortable
// form: the query fails with ColumnTypeNotSupported
// (FrameWriterUtils.verifySortColumns, MSQErrorReport).
func checkClusteredBy(st *statement, outTypes map[string]string) error {
	for _, e := range st.clusteredBy {
		name := e.text
		switch e.kind {
		case "ident":
		case "number":
			n, err := strconv.Atoi(e.text)
			if err != nil || n < 1 || n > len(st.items) {
				return fmt.Errorf("CLUSTERED BY: Ordinal out of range: %s", e.text)
			}
			name = st.items[n-1].name
		default:
			return fmt.Errorf("CLUSTERED BY %s: the model reads output names and ordinals only", e)
		}
		if name == "__time" {
			continue
		}
		typ, ok := outTypes[name]
		if !ok {
			return fmt.Errorf("CLUSTERED BY: Column '%s' not found in any table", name)
		}
		if strings.HasPrefix(typ, "COMPLEX<") {
			return fmt.Errorf("ColumnTypeNotSupported: Cannot sort by column [%s] of type [%s]", name, typ)
		}
	}
	return nil
}

// msqSchemas are the dimension schemas MSQ writes a statement's columns
// with (DimensionSchemaUtils.createDimensionSchema, useAutoColumnSchemas
// false): a classic typed dimension for LONG, FLOAT, DOUBLE and STRING;
// for ARRAY types by arrayIngestMode (Druid 28; the default is mvd before
// Druid 31, array from it), under array an auto dimension cast to the
// type, under mvd a multi-value STRING dimension for ARRAY<STRING> and a
// refusal for numeric arrays, under none a refusal; before Druid 28 a
// string array is multi-value and a numeric one refused; COMPLEX<json>
// through its handler, the auto indexer without a cast (a json dimension).
func (d *Druid) msqSchemas(outTypes map[string]string, qctx map[string]any) (map[string]colSchema, error) {
	mode := "mvd"
	if d.version() >= 31 {
		mode = "array"
	}
	if v, ok := qctx["arrayIngestMode"].(string); ok && d.version() >= 28 {
		mode = strings.ToLower(v)
	}
	out := map[string]colSchema{}
	for name, t := range outTypes {
		elem, isArray := strings.CutPrefix(t, "ARRAY<")
		switch {
		case !isArray:
			out[name] = colSchema{typ: map[string]string{"LONG": "long", "FLOAT": "float", "DOUBLE": "double", "STRING": "string"}[t]}
			if t == "COMPLEX<json>" {
				out[name] = colSchema{typ: "json"}
			}
		case d.version() < 28:
			if elem != "STRING>" {
				return nil, fmt.Errorf("Cannot create dimension for type [%s]", t)
			}
			out[name] = colSchema{typ: "string"}
		case mode == "array":
			cast := t
			if d.version() < 29 {
				cast = ""
			}
			out[name] = colSchema{typ: "auto", cast: cast}
		case mode == "mvd" && elem == "STRING>":
			out[name] = colSchema{typ: "string"}
		case mode == "mvd":
			return nil, fmt.Errorf("Numeric arrays can only be ingested when 'arrayIngestMode' is set to 'array' in the MSQ query's "+
				"context. Current value of the parameter [%s]", mode)
		default:
			return nil, fmt.Errorf("String arrays can not be ingested when 'arrayIngestMode' is set to '%s'", mode)
		}
	}
	return out, nil
}

// sqlTimeZone is the zone TIMESTAMP literals are read in: the query
// context's sqlTimeZone, else the cluster's druid.sql.planner.sqlTimeZone
// (PlannerContext.create). DateTimes.inferTzFromString falls back to GMT
// for an id it does not know, without an error.
func (d *Druid) sqlTimeZone(qctx map[string]any) (*time.Location, error) {
	name := d.SQLTimeZone
	if v, ok := qctx["sqlTimeZone"]; ok {
		s, isStr := v.(string)
		if !isStr {
			return nil, fmt.Errorf("sqlTimeZone %v is not a string", v)
		}
		name = s
	}
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC, nil
	}
	return loc, nil
}

// checkContext checks the types of the context parameters the model reads
// (MultiStageQueryContext): maxNumTasks is an integer of at least 2,
// failOnEmptyInsert a boolean.
func checkContext(qctx map[string]any) error {
	if v, ok := qctx["maxNumTasks"]; ok {
		n, isNum := v.(float64)
		if i, isInt := v.(int); isInt {
			n, isNum = float64(i), true
		}
		if !isNum || n != math.Trunc(n) || n < 2 {
			return fmt.Errorf("maxNumTasks %v: want an integer of at least 2", v)
		}
	}
	if v, ok := qctx["arrayIngestMode"]; ok {
		// ArrayIngestMode: none, mvd or array.
		if s, isStr := v.(string); !isStr || !slices.Contains([]string{"none", "mvd", "array"}, strings.ToLower(s)) {
			return fmt.Errorf("arrayIngestMode %v: want none, mvd or array", v)
		}
	}
	if v, ok := qctx["failOnEmptyInsert"]; ok {
		if _, isBool := v.(bool); !isBool {
			return fmt.Errorf("failOnEmptyInsert %v: want true or false", v)
		}
	}
	return nil
}

// partitionGranularity reads PARTITIONED BY as DruidSqlParserUtils does:
// the grammar's keywords; FLOOR(__time TO unit) and TIME_FLOOR(__time,
// 'period'); a string literal (or name) of a standard granularity, from
// Druid 30 on (apache/druid#15836). Any other word is refused ("Encountered
// … after PARTITIONED BY"), as are non-standard periods.
func (d *Druid) partitionGranularity(p partitionClause) (granularity, error) {
	switch {
	case p.keyword == "ALL":
		return allGranularity, nil
	case p.keyword != "":
		return granularityType(p.keyword)
	case p.literal != "":
		if d.version() < 30 {
			return granularity{}, fmt.Errorf("Encountered '%s' after PARTITIONED BY. Expected HOUR, DAY, MONTH, YEAR, ALL TIME, FLOOR function or TIME_FLOOR function (a literal needs Druid 30)", p.literal)
		}
		g, err := granularityType(p.literal)
		if err != nil {
			if g, err = periodGranularity(p.literal); err != nil {
				return granularity{}, err
			}
		}
		if !g.standard() {
			return granularity{}, fmt.Errorf("Invalid granularity[%s] specified after PARTITIONED BY clause", p.literal)
		}
		return g, nil
	case p.floor != nil:
		f := p.floor
		if len(f.args) != 2 || f.args[0].kind != "ident" || f.args[0].text != "__time" {
			return granularity{}, fmt.Errorf("PARTITIONED BY %s: the first argument must be __time", f)
		}
		var g granularity
		var err error
		if f.text == "FLOOR" {
			g, err = granularityType(f.args[1].text)
		} else if f.args[1].kind == "string" {
			g, err = periodGranularity(f.args[1].text)
		} else {
			err = fmt.Errorf("TIME_FLOOR wants a period literal")
		}
		if err != nil {
			return granularity{}, fmt.Errorf("PARTITIONED BY %s: %w", f, err)
		}
		if !g.standard() {
			return granularity{}, fmt.Errorf("Invalid granularity[%s] specified after PARTITIONED BY clause", f)
		}
		return g, nil
	}
	return granularity{}, fmt.Errorf("Encountered %q after PARTITIONED BY. Expected HOUR, DAY, MONTH, YEAR, ALL TIME, FLOOR function or TIME_FLOOR function", p.word)
}

// overwriteIntervals turns OVERWRITE WHERE into intervals as
// DruidSqlParserUtils.convertQueryToDimFilter does: AND, OR, NOT, >=, <=,
// >, < and BETWEEN over "__time" and TIMESTAMP literals (read in the
// query's time zone); anything else is refused.
func overwriteIntervals(c *cond, tz *time.Location) ([]span, error) {
	var walk func(c *cond) ([]span, error)
	walk = func(c *cond) ([]span, error) {
		switch c.op {
		case "and", "or":
			l, err := walk(c.l)
			if err != nil {
				return nil, err
			}
			r, err := walk(c.r)
			if err != nil {
				return nil, err
			}
			if c.op == "and" {
				return intersect(l, r), nil
			}
			return union(l, r), nil
		case "not":
			l, err := walk(c.l)
			if err != nil {
				return nil, err
			}
			return complement(l), nil
		case "cmp", "between":
			if c.a.kind != "ident" {
				return nil, fmt.Errorf("Invalid OVERWRITE WHERE clause [%s]: expected clause including AND, OR, NOT, >, <, >=, <= OR BETWEEN operators", c.a)
			}
			if c.a.text != "__time" {
				return nil, fmt.Errorf("OVERWRITE WHERE clause only supports filtering on the __time column, got [%s]", c.a.text)
			}
			lit := func(e *expr) (int64, error) {
				if e.kind != "timestamp" {
					return 0, fmt.Errorf("Cannot get a timestamp from sql expression [%s]", e)
				}
				t, err := sqlTimestamp(e.text, tz)
				if err != nil {
					return 0, err
				}
				return t.UnixMilli(), nil
			}
			if c.op == "between" {
				lo, err := lit(c.b)
				if err != nil {
					return nil, err
				}
				hi, err := lit(c.c)
				if err != nil {
					return nil, err
				}
				return []span{{lo, hi + 1}}, nil
			}
			v, err := lit(c.b)
			if err != nil {
				return nil, err
			}
			switch c.cmp {
			case ">=":
				return []span{{v, math.MaxInt64}}, nil
			case ">":
				return []span{{v + 1, math.MaxInt64}}, nil
			case "<":
				return []span{{math.MinInt64, v}}, nil
			case "<=":
				return []span{{math.MinInt64, v + 1}}, nil
			}
			return nil, fmt.Errorf("Unsupported operation [%s] in OVERWRITE WHERE clause.", c.cmp)
		}
		return nil, fmt.Errorf("Unsupported operation [%s] in OVERWRITE WHERE clause.", c.op)
	}
	out, err := walk(c)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("The OVERWRITE WHERE clause produced no time intervals, are the bounds overly restrictive?")
	}
	return out, nil
}

func intersect(a, b []span) []span {
	var out []span
	for _, x := range a {
		for _, y := range b {
			if lo, hi := max(x.lo, y.lo), min(x.hi, y.hi); lo < hi {
				out = append(out, span{lo, hi})
			}
		}
	}
	return normalize(out)
}

func union(a, b []span) []span { return normalize(append(slices.Clone(a), b...)) }

func complement(a []span) []span {
	var out []span
	at := int64(math.MinInt64)
	for _, s := range normalize(a) {
		if at < s.lo {
			out = append(out, span{at, s.lo})
		}
		at = s.hi
	}
	if at < math.MaxInt64 {
		out = append(out, span{at, math.MaxInt64})
	}
	return out
}

func normalize(a []span) []span {
	slices.SortFunc(a, func(x, y span) int {
		if x.lo != y.lo {
			if x.lo < y.lo {
				return -1
			}
			return 1
		}
		return 0
	})
	var out []span
	for _, s := range a {
		if n := len(out); n > 0 && s.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

func msTime(ms int64) time.Time {
	switch ms {
	case math.MinInt64:
		return time.Date(-292275055, 5, 16, 16, 47, 4, 192e6, time.UTC)
	case math.MaxInt64:
		return time.Date(292278994, 8, 17, 7, 12, 55, 807e6, time.UTC)
	}
	return time.UnixMilli(ms).UTC()
}

func (s span) String() string {
	const layout = "2006-01-02T15:04:05.000Z"
	return msTime(s.lo).Format(layout) + "/" + msTime(s.hi).Format(layout)
}

func spans(ss []span) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, s.String())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// sqlTimestamp reads a TIMESTAMP literal's text in the zone: what
// Timestamp.valueOf takes (yyyy-[m]m-[d]d hh:mm:ss[.f…]), as
// DruidSqlParserUtils.parseTimeStampWithTimeZone does.
func sqlTimestamp(s string, tz *time.Location) (time.Time, error) {
	m := sqlTimestampRE.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("TIMESTAMP '%s' is not yyyy-mm-dd hh:mm:ss[.fffffffff]", s)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	nanos := 0
	if m[7] != "" {
		nanos, _ = strconv.Atoi((m[7] + "000000000")[:9])
	}
	t := time.Date(n(1), time.Month(n(2)), n(3), n(4), n(5), n(6), nanos, tz)
	if int(t.Month()) != n(2) || t.Day() != n(3) {
		return time.Time{}, fmt.Errorf("TIMESTAMP '%s' is not a calendar date", s)
	}
	return t, nil
}

var sqlTimestampRE = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$`)

// exprType type-checks an expression over the EXTERN columns, as Calcite
// validates the query: MILLIS_TO_TIMESTAMP takes a number, TIME_PARSE a
// character string (TimeParseOperatorConversion: SqlTypeFamily.CHARACTER).
func exprType(e *expr, cols map[string]string) (string, error) {
	switch e.kind {
	case "ident":
		t, ok := cols[e.text]
		if !ok {
			return "", fmt.Errorf("Column '%s' not found in any table", e.text)
		}
		return druidType(t), nil
	case "string":
		return "STRING", nil
	case "number":
		return "LONG", nil
	case "timestamp":
		return "TIMESTAMP", nil
	case "case":
		if _, err := exprType(e.args[0], cols); err != nil {
			return "", err
		}
		out := ""
		for _, w := range e.whens {
			t, err := exprType(w[1], cols)
			if err != nil {
				return "", err
			}
			out = leastRestrictive(out, t)
		}
		return out, nil
	case "call":
		if len(e.args) == 0 {
			return "", fmt.Errorf("%s without arguments", e.text)
		}
		arg, err := exprType(e.args[0], cols)
		if err != nil {
			return "", err
		}
		switch e.text {
		case "MILLIS_TO_TIMESTAMP":
			// MillisToTimestampOperatorConversion: SqlTypeFamily.EXACT_NUMERIC.
			if arg != "LONG" {
				return "", fmt.Errorf("Cannot apply 'MILLIS_TO_TIMESTAMP' to arguments of type 'MILLIS_TO_TIMESTAMP(<%s>)'", arg)
			}
			return "TIMESTAMP", nil
		case "TIME_PARSE":
			if arg != "STRING" {
				return "", fmt.Errorf("Cannot apply 'TIME_PARSE' to arguments of type 'TIME_PARSE(<%s>)'", arg)
			}
			return "TIMESTAMP", nil
		}
		return "", fmt.Errorf("function %s is not modelled", e.text)
	}
	return "", fmt.Errorf("expression %s is not modelled", e)
}

// druidType is the Druid type of an EXTERN column type.
func druidType(extern string) string {
	switch extern {
	case "long":
		return "LONG"
	case "float":
		return "FLOAT"
	case "double":
		return "DOUBLE"
	case "string":
		return "STRING"
	}
	return extern
}

func checkCond(c *cond, cols map[string]string) error {
	switch c.op {
	case "and", "or":
		if err := checkCond(c.l, cols); err != nil {
			return err
		}
		return checkCond(c.r, cols)
	case "not":
		return checkCond(c.l, cols)
	}
	for _, e := range []*expr{c.a, c.b, c.c} {
		if e != nil {
			if _, err := exprType(e, cols); err != nil {
				return err
			}
		}
	}
	return nil
}

// truth is SQL's three-valued logic.
type truth int

const (
	unknown truth = iota
	yes
	no
)

// evaluator evaluates expressions over one row's EXTERN values.
type evaluator struct {
	vals map[string]any
	tz   *time.Location
}

func (ev evaluator) value(e *expr) any {
	switch e.kind {
	case "ident":
		return ev.vals[e.text]
	case "string":
		return e.text
	case "number":
		n, _ := strconv.ParseInt(e.text, 10, 64)
		return n
	case "timestamp":
		t, err := sqlTimestamp(e.text, ev.tz)
		if err != nil {
			return nil
		}
		return t.UnixMilli()
	case "case":
		x := ev.value(e.args[0])
		if x == nil {
			return nil
		}
		for _, w := range e.whens {
			if javaString(x) == javaString(ev.value(w[0])) {
				return ev.value(w[1])
			}
		}
		if e.els != nil {
			return ev.value(e.els)
		}
		return nil
	case "call":
		x := ev.value(e.args[0])
		if x == nil {
			return nil
		}
		switch e.text {
		case "MILLIS_TO_TIMESTAMP":
			return longValue(x)
		case "TIME_PARSE":
			t, err := timeParse(javaString(x), ev.tz)
			if err != nil {
				return nil
			}
			return t.UnixMilli()
		}
	}
	return nil
}

// timeParse is TIME_PARSE with its default format
// (TimestampParseExprMacro: ISO 8601 with a T or a space, an optional
// offset; without one, the query's time zone); unparseable text is NULL.
func timeParse(s string, tz *time.Location) (time.Time, error) {
	s = strings.Replace(s, " ", "T", 1)
	m := jodaRE.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("%q is not ISO 8601", s)
	}
	t, err := jodaInstant(s)
	if err != nil {
		return t, err
	}
	if m[8] == "" && tz != time.UTC {
		// No offset: the text is a wall time in the zone.
		y, mo, d := t.Date()
		t = time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), tz)
	}
	return t, nil
}

func (ev evaluator) cond(c *cond) truth {
	switch c.op {
	case "and":
		l, r := ev.cond(c.l), ev.cond(c.r)
		switch {
		case l == no || r == no:
			return no
		case l == yes && r == yes:
			return yes
		}
		return unknown
	case "or":
		l, r := ev.cond(c.l), ev.cond(c.r)
		switch {
		case l == yes || r == yes:
			return yes
		case l == no && r == no:
			return no
		}
		return unknown
	case "not":
		switch ev.cond(c.l) {
		case yes:
			return no
		case no:
			return yes
		}
		return unknown
	case "isnull", "notnull":
		isNull := ev.value(c.a) == nil
		if isNull == (c.op == "isnull") {
			return yes
		}
		return no
	case "between":
		lo := &cond{op: "cmp", cmp: ">=", a: c.a, b: c.b}
		hi := &cond{op: "cmp", cmp: "<=", a: c.a, b: c.c}
		return ev.cond(&cond{op: "and", l: lo, r: hi})
	}
	a, b := ev.value(c.a), ev.value(c.b)
	if a == nil || b == nil {
		return unknown
	}
	var k int
	if as, ok := a.(string); ok {
		k = strings.Compare(as, javaString(b))
	} else {
		x, y := doubleValue(a), doubleValue(b)
		switch {
		case x < y:
			k = -1
		case x > y:
			k = 1
		}
	}
	var r bool
	switch c.cmp {
	case ">=":
		r = k >= 0
	case ">":
		r = k > 0
	case "<=":
		r = k <= 0
	case "<":
		r = k < 0
	case "=":
		r = k == 0
	case "<>":
		r = k != 0
	}
	if r {
		return yes
	}
	return no
}
