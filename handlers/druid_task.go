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
}

func (s *server) specTarget(r *http.Request, extra map[string]bool) (specTarget, url.Values, error) {
	q := r.URL.Query()
	req, err := parseSplitsQuery(q, extra)
	if err != nil {
		return specTarget{}, nil, err
	}
	t := specTarget{dataSource: q.Get("dataSource"), isoTimes: req.Encoding.ISOTimestamps}
	if t.dataSource == "" {
		return t, nil, fmt.Errorf("%w: dataSource is required", splits.ErrBadRequest)
	}
	col := q.Get("timestampColumn")
	if col == "" {
		return t, nil, fmt.Errorf("%w: timestampColumn is required", splits.ErrBadRequest)
	}
	plan, resp, err := s.planResponse(r, req, nil)
	if err != nil {
		return t, nil, err
	}
	i := slices.IndexFunc(plan.Fields, func(f iceberg.NestedField) bool { return f.Name == col })
	if i < 0 {
		return t, nil, fmt.Errorf("%w: timestampColumn %q is not a column the plan serves", splits.ErrBadRequest, col)
	}
	switch plan.Fields[i].Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
		iceberg.DateType, iceberg.Int64Type:
	default:
		return t, nil, fmt.Errorf("%w: timestampColumn %q is %s; want a timestamp, date or long (epoch millis) column",
			splits.ErrBadRequest, col, plan.Fields[i].Type)
	}
	t.resp, t.timeField, t.fields = resp, plan.Fields[i], plan.Fields
	return t, q, nil
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
	subTasks := 2
	if v := q.Get("maxNumConcurrentSubTasks"); v != "" {
		if subTasks, err = strconv.Atoi(v); err != nil || subTasks < 1 {
			return fmt.Errorf("%w: maxNumConcurrentSubTasks %q: want a positive integer", splits.ErrBadRequest, v)
		}
	}
	task := map[string]any{
		"type": "index_parallel",
		"spec": map[string]any{
			"dataSchema": map[string]any{
				"dataSource":      t.dataSource,
				"timestampSpec":   map[string]any{"column": t.timeField.Name, "format": t.timestampFormat()},
				"dimensionsSpec":  map[string]any{"useSchemaDiscovery": true, "dimensionExclusions": []string{}},
				"granularitySpec": map[string]any{"type": "uniform", "segmentGranularity": gran, "queryGranularity": "NONE", "rollup": false},
			},
			"ioConfig": map[string]any{
				"type":             "index_parallel",
				"inputSource":      t.resp.InputSource,
				"inputFormat":      t.resp.InputFormat,
				"appendToExisting": false,
			},
			"tuningConfig": map[string]any{
				"type":                     "index_parallel",
				"maxNumConcurrentSubTasks": subTasks,
				"partitionsSpec":           map[string]any{"type": "dynamic"},
			},
		},
	}
	return writeJSON(w, task)
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
	src, err := json.Marshal(t.resp.InputSource)
	if err != nil {
		return "", fmt.Errorf("encode inputSource: %w", err)
	}
	format, err := json.Marshal(t.resp.InputFormat)
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
	timeExpr := "MILLIS_TO_TIMESTAMP(" + sqlIdent(t.timeField.Name) + ")"
	if t.timestampFormat() == "iso" {
		timeExpr = "TIME_PARSE(" + sqlIdent(t.timeField.Name) + ")"
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("\nSELECT\n  " + timeExpr + ` AS "__time",` + "\n  ")
	b.WriteString(strings.Join(cols, ",\n  "))
	b.WriteString("\nFROM TABLE(\n  EXTERN(\n    ")
	b.WriteString(sqlString(string(src)) + ",\n    ")
	b.WriteString(sqlString(string(format)) + ",\n    ")
	b.WriteString(sqlString(string(signature)) + "\n  )\n)\n")
	b.WriteString("PARTITIONED BY " + partitionedBy(gran))
	return b.String(), nil
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
