package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/splits"
)

// granularities are the segment and PARTITIONED BY granularities Druid names.
var granularities = []string{"HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "ALL"}

// specParams are what the spec generators take besides the /splits ones.
var (
	taskParams = map[string]bool{"dataSource": true, "timestampColumn": true, "segmentGranularity": true, "maxNumConcurrentSubTasks": true}
	sqlParams  = map[string]bool{"dataSource": true, "timestampColumn": true, "statement": true, "partitionedBy": true, "overwrite": true}
)

// specTarget is what every generated spec needs: the planned answer, the
// datasource and the timestamp column.
type specTarget struct {
	resp       splitsResponse
	dataSource string
	timeField  iceberg.NestedField
	isoTimes   bool
	fields     []iceberg.NestedField
	// source and format, when set, replace the planned inputSource and
	// inputFormat (an inline source when the plan has no URI).
	source, format any
}

func (s *server) specTarget(r *http.Request, extra map[string]bool) (specTarget, url.Values, error) {
	q := r.URL.Query()
	req, err := parseSplitsQuery(q, extra)
	if err != nil {
		return specTarget{}, nil, err
	}
	if extra["maxNumConcurrentSubTasks"] && q.Get("minSplits") == "" {
		// As many splits as the task runs subtasks at once.
		if req.MinSplits, err = maxSubTasks(q); err != nil {
			return specTarget{}, nil, err
		}
	}
	t, err := s.planTarget(r, req, q.Get("dataSource"), q.Get("timestampColumn"), "timestampColumn")
	return t, q, err
}

// planTarget plans req and checks the time column (named by the query
// parameter param) against what the plan serves.
func (s *server) planTarget(r *http.Request, req splits.Request, dataSource, col, param string) (specTarget, error) {
	return s.targetOf(req, dataSource, col, param, func() (splits.Plan, splitsResponse, error) { return s.planResponse(r, req, nil) })
}

// targetOf is planTarget with the plan and its answer made by plan.
func (s *server) targetOf(req splits.Request, dataSource, col, param string, planned func() (splits.Plan, splitsResponse, error)) (specTarget, error) {
	t := specTarget{dataSource: dataSource, isoTimes: req.Encoding.ISOTimestamps}
	if t.dataSource == "" {
		return t, fmt.Errorf("%w: dataSource is required", splits.ErrBadRequest)
	}
	if col == "" {
		return t, fmt.Errorf("%w: %s is required", splits.ErrBadRequest, param)
	}
	plan, resp, err := planned()
	if err != nil {
		return t, err
	}
	i := slices.IndexFunc(plan.Fields, func(f iceberg.NestedField) bool { return f.Name == col })
	if i < 0 {
		return t, fmt.Errorf("%w: %s %q is not a column the plan serves", splits.ErrBadRequest, param, col)
	}
	switch plan.Fields[i].Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
		iceberg.DateType, iceberg.Int64Type:
	default:
		return t, fmt.Errorf("%w: %s %q is %s; want a timestamp, date or long (epoch millis) column",
			splits.ErrBadRequest, param, col, plan.Fields[i].Type)
	}
	t.resp, t.timeField, t.fields = resp, plan.Fields[i], plan.Fields
	return t, nil
}

// inputSource and inputFormat are what the spec reads.
func (t specTarget) inputSource() any {
	if t.source != nil {
		return t.source
	}
	return t.resp.InputSource
}

func (t specTarget) inputFormat() any {
	if t.format != nil {
		return t.format
	}
	return t.resp.InputFormat
}

// timestampFormat is the Druid timestampSpec format of what the plan serves
// in the time column.
func (t specTarget) timestampFormat() string {
	if t.isoTimes {
		if _, isDate := t.timeField.Type.(iceberg.DateType); !isDate {
			return "iso"
		}
	}
	return "millis"
}

// granularity reads a Druid granularity parameter, DAY when absent.
func granularity(q url.Values, name string) (string, error) {
	gran := strings.ToUpper(q.Get(name))
	if gran == "" {
		return "DAY", nil
	}
	if !slices.Contains(granularities, gran) {
		return "", fmt.Errorf("%w: %s %q: want one of %s", splits.ErrBadRequest, name, gran, strings.Join(granularities, ", "))
	}
	return gran, nil
}

// getDruidTask answers a complete index_parallel task for the table, ready
// for POST /druid/indexer/v1/task.
func (s *server) getDruidTask(w http.ResponseWriter, r *http.Request) error {
	t, q, err := s.specTarget(r, taskParams)
	if err != nil {
		return err
	}
	gran, err := granularity(q, "segmentGranularity")
	if err != nil {
		return err
	}
	subTasks, err := maxSubTasks(q)
	if err != nil {
		return err
	}
	return writeJSON(w, indexParallelTask(t, gran, subTasks, ""))
}

// maxSubTasks reads maxNumConcurrentSubTasks, 2 when absent.
func maxSubTasks(q url.Values) (int, error) {
	v := q.Get("maxNumConcurrentSubTasks")
	if v == "" {
		return 2, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: maxNumConcurrentSubTasks %q: want a positive integer", splits.ErrBadRequest, v)
	}
	return n, nil
}

// indexParallelTask is an index_parallel task that reads the target. With
// an interval (ISO 8601 START/END), it replaces exactly that interval:
// granularitySpec.intervals names it and dropExisting drops what it held,
// also when no row is read (Druid then writes tombstones).
func indexParallelTask(t specTarget, gran string, subTasks int, interval string) map[string]any {
	granularitySpec := map[string]any{"type": "uniform", "segmentGranularity": gran, "queryGranularity": "NONE", "rollup": false}
	ioConfig := map[string]any{
		"type":             "index_parallel",
		"inputSource":      t.inputSource(),
		"inputFormat":      t.inputFormat(),
		"appendToExisting": false,
	}
	if interval != "" {
		granularitySpec["intervals"] = []string{interval}
		ioConfig["dropExisting"] = true
	}
	return map[string]any{
		"type": "index_parallel",
		"spec": map[string]any{
			"dataSchema": map[string]any{
				"dataSource":      t.dataSource,
				"timestampSpec":   map[string]any{"column": t.timeField.Name, "format": t.timestampFormat()},
				"dimensionsSpec":  map[string]any{"useSchemaDiscovery": true, "dimensionExclusions": []string{}},
				"granularitySpec": granularitySpec,
			},
			"ioConfig": ioConfig,
			"tuningConfig": map[string]any{
				"type":                     "index_parallel",
				"maxNumConcurrentSubTasks": subTasks,
				"partitionsSpec":           map[string]any{"type": "dynamic"},
			},
		},
	}
}

// sqlTask is the body of Druid's POST /druid/v2/sql/task.
type sqlTask struct {
	Query    string         `json:"query"`
	Context  map[string]any `json:"context"`
	Warnings []string       `json:"warnings,omitempty"`
}

// getDruidSQL answers an MSQ INSERT or REPLACE statement that reads the
// table through EXTERN, ready for POST /druid/v2/sql/task.
func (s *server) getDruidSQL(w http.ResponseWriter, r *http.Request) error {
	t, q, err := s.specTarget(r, sqlParams)
	if err != nil {
		return err
	}
	stmt := strings.ToLower(q.Get("statement"))
	if stmt == "" {
		stmt = "insert"
	}
	if stmt != "insert" && stmt != "replace" {
		return fmt.Errorf("%w: statement %q: want insert or replace", splits.ErrBadRequest, stmt)
	}
	gran, err := granularity(q, "partitionedBy")
	if err != nil {
		return err
	}
	head := "INSERT INTO " + sqlIdent(t.dataSource)
	if stmt == "replace" {
		over, err := overwriteClause(q.Get("overwrite"))
		if err != nil {
			return err
		}
		head = "REPLACE INTO " + sqlIdent(t.dataSource) + " " + over
	} else if q.Get("overwrite") != "" {
		return fmt.Errorf("%w: overwrite goes with statement=replace", splits.ErrBadRequest)
	}
	query, err := msqStatement(head, t, gran)
	if err != nil {
		return err
	}
	return writeJSON(w, sqlTask{Query: query, Context: map[string]any{"maxNumTasks": 2}, Warnings: t.resp.Warnings})
}

// overwriteClause renders OVERWRITE ALL or OVERWRITE WHERE for an ISO 8601
// interval START/END.
func overwriteClause(v string) (string, error) {
	if v == "" || strings.EqualFold(v, "all") {
		return "OVERWRITE ALL", nil
	}
	start, end, err := splits.ParseInterval(v)
	if err != nil {
		return "", fmt.Errorf("%w: overwrite: %w", splits.ErrBadRequest, err)
	}
	const layout = "2006-01-02 15:04:05.000"
	return fmt.Sprintf(`OVERWRITE WHERE "__time" >= TIMESTAMP %s AND "__time" < TIMESTAMP %s`,
		sqlString(start.UTC().Format(layout)), sqlString(end.UTC().Format(layout))), nil
}

// msqStatement renders head SELECT … FROM TABLE(EXTERN(…)) PARTITIONED BY.
// Every name is a quoted identifier and every JSON argument a string
// literal, each escaped, so no name can end the statement.
func msqStatement(head string, t specTarget, gran string) (string, error) {
	return msqStatementWhere(head, t, gran, "")
}

// msqStatementWhere is msqStatement with a WHERE clause (where, when not
// empty, is its condition, built from quoted identifiers and literals).
func msqStatementWhere(head string, t specTarget, gran, where string) (string, error) {
	src, err := json.Marshal(t.inputSource())
	if err != nil {
		return "", fmt.Errorf("encode inputSource: %w", err)
	}
	format, err := json.Marshal(t.inputFormat())
	if err != nil {
		return "", fmt.Errorf("encode inputFormat: %w", err)
	}
	type column struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	var sig []column
	var cols []string
	for _, f := range t.fields {
		sig = append(sig, column{Name: f.Name, Type: druidType(f.Type)})
		cols = append(cols, sqlIdent(f.Name))
	}
	signature, err := json.Marshal(sig)
	if err != nil {
		return "", fmt.Errorf("encode signature: %w", err)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("\nSELECT\n  " + t.timeExpr() + ` AS "__time",` + "\n  ")
	b.WriteString(strings.Join(cols, ",\n  "))
	b.WriteString("\nFROM TABLE(\n  EXTERN(\n    ")
	b.WriteString(sqlString(string(src)) + ",\n    ")
	b.WriteString(sqlString(string(format)) + ",\n    ")
	b.WriteString(sqlString(string(signature)) + "\n  )\n)\n")
	if where != "" {
		b.WriteString("WHERE " + where + "\n")
	}
	b.WriteString("PARTITIONED BY " + partitionedBy(gran))
	return b.String(), nil
}

// timeExpr is the Druid SQL expression of __time over the time column.
func (t specTarget) timeExpr() string {
	if t.timestampFormat() == "iso" {
		return "TIME_PARSE(" + sqlIdent(t.timeField.Name) + ")"
	}
	return "MILLIS_TO_TIMESTAMP(" + sqlIdent(t.timeField.Name) + ")"
}

func partitionedBy(gran string) string {
	if gran == "ALL" {
		return "ALL TIME"
	}
	return gran
}

// sqlIdent quotes a Druid SQL identifier; a double quote inside is doubled.
func sqlIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sqlString quotes a Druid SQL string literal; a single quote inside is
// doubled (Druid SQL has no backslash escapes in plain literals).
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// druidType is the EXTERN signature type of what the sidecar serves for an
// Iceberg type: times are epoch millis (longs), decimals are read as
// doubles, nested values as JSON.
func druidType(t iceberg.Type) string {
	switch t.(type) {
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType,
		iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return "long"
	case iceberg.Float32Type:
		return "float"
	case iceberg.Float64Type, iceberg.DecimalType:
		return "double"
	case iceberg.StringType, iceberg.UUIDType, iceberg.BinaryType, iceberg.FixedType:
		return "string"
	}
	return "COMPLEX<json>"
}
