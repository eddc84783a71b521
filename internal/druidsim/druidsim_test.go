package druidsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// stmt writes a statement over inline rows with the columns t (long) and
// v (string).
func stmt(head, where, gran string, rows ...string) string {
	return stmtOver(inline(rows...), `[{"name":"t","type":"long"},{"name":"v","type":"string"}]`, head,
		`MILLIS_TO_TIMESTAMP("t") AS "__time", "v"`, where, gran)
}

func inline(rows ...string) string {
	src, _ := json.Marshal(map[string]any{"type": "inline", "data": strings.Join(rows, "\n")})
	return string(src)
}

func stmtOver(src, signature, head, selects, where, gran string) string {
	q := head + "\nSELECT " + selects + "\nFROM TABLE(EXTERN('" + strings.ReplaceAll(src, "'", "''") + "', '{\"type\":\"json\"}', '" +
		strings.ReplaceAll(signature, "'", "''") + "'))\n"
	if where != "" {
		q += "WHERE " + where + "\n"
	}
	return q + "PARTITIONED BY " + gran
}

const (
	day1 = 1709251200000 // 2024-03-01
	day2 = day1 + 86_400_000
	day3 = day2 + 86_400_000
)

const replaceDay2 = `REPLACE INTO "ds" OVERWRITE WHERE "__time" >= TIMESTAMP '2024-03-02 00:00:00.000' AND "__time" < TIMESTAMP '2024-03-03 00:00:00.000'`

var utc = map[string]any{"sqlTimeZone": "UTC"}

func row(t int64, v string) string { return fmt.Sprintf(`{"t":%d,"v":%q}`, t, v) }

func values(d *Druid, ds string) string {
	var out []string
	for _, r := range d.Rows(ds) {
		out = append(out, fmt.Sprint(r.Columns["v"]))
	}
	return strings.Join(out, ",")
}

// TestModel: the semantics the sidecar's specs are held against.
func TestModel(t *testing.T) {
	ctx := context.Background()
	d := New()
	steps := []struct {
		sql, want, err string
	}{
		{stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a"), row(day2, "b"), row(day3, "c")), "a,b,c", ""},
		{stmt(`INSERT INTO "ds"`, "", "DAY", row(day2+1, "b2")), "a,b,b2,c", ""},
		// REPLACE swaps the interval it names, and nothing else.
		{stmt(replaceDay2, "", "DAY", row(day2+5, "B")), "a,B,c", ""},
		// Rows outside the OVERWRITE range are refused, the datasource kept.
		{stmt(replaceDay2, "", "DAY", row(day3, "x")), "a,B,c", "InsertTimeOutOfBounds"},
		// unless the statement's WHERE drops them first; nothing left
		// empties the interval.
		{stmt(replaceDay2, `MILLIS_TO_TIMESTAMP("t") >= TIMESTAMP '2024-03-02 00:00:00.000' AND MILLIS_TO_TIMESTAMP("t") < TIMESTAMP '2024-03-03 00:00:00.000'`,
			"DAY", row(day3, "x")), "a,c", ""},
		{stmt(`INSERT INTO "ds"`, "", "DAY", `{"v":"no time"}`), "a,c", "InsertTimeNull"},
		{stmt(`REPLACE INTO "ds" OVERWRITE ALL`, `"t" IS NOT NULL`, "ALL TIME", `{"v":"no time"}`, row(day1, "z")), "z", ""},
		{`REPLACE INTO "ds" OVERWRITE ALL SELECT "v" FROM "other" PARTITIONED BY DAY`, "z", "want \"TABLE\""},
	}
	for i, s := range steps {
		err := d.ExecSQL(ctx, s.sql, map[string]any{"failOnEmptyInsert": false, "sqlTimeZone": "UTC"})
		if (err == nil) != (s.err == "") || (err != nil && !strings.Contains(err.Error(), s.err)) {
			t.Fatalf("step %d: error %v, want %q", i, err, s.err)
		}
		if got := values(d, "ds"); got != s.want {
			t.Fatalf("step %d: %s, want %s", i, got, s.want)
		}
	}

	// index_parallel: dropExisting replaces its intervals; without
	// intervals, the time chunks its rows fall into.
	if err := d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, nil, row(day2, "y"))); err != nil || values(d, "ds") != "z,y" {
		t.Fatalf("by time chunk: %v %s", err, values(d, "ds"))
	}
	if err := d.ExecTask(ctx, taskSpec([]string{"2024-03-01/2024-03-02"}, true, `"DAY"`, nil, row(day1-1, "thrown away"))); err != nil || values(d, "ds") != "y" {
		t.Fatalf("an interval emptied: %v %s", err, values(d, "ds"))
	}
	if len(d.Nulled()) != 0 || d.Unparseable() != 0 {
		t.Fatalf("nulled %q, unparseable %d", d.Nulled(), d.Unparseable())
	}
}

// taskSpec writes an index_parallel task over inline rows with the time
// column t.
func taskSpec(intervals []string, drop bool, gran string, dims []any, rows ...string) []byte {
	gs := map[string]any{"segmentGranularity": json.RawMessage(gran)}
	if intervals != nil {
		gs["intervals"] = intervals
	}
	dimsSpec := map[string]any{"useSchemaDiscovery": dims == nil}
	if dims != nil {
		dimsSpec["dimensions"] = dims
	}
	b, _ := json.Marshal(map[string]any{"type": "index_parallel", "spec": map[string]any{
		"dataSchema": map[string]any{"dataSource": "ds", "timestampSpec": map[string]any{"column": "t", "format": "millis"},
			"dimensionsSpec": dimsSpec, "granularitySpec": gs},
		"ioConfig": map[string]any{"type": "index_parallel", "inputSource": map[string]any{"type": "inline", "data": strings.Join(rows, "\n")},
			"inputFormat": map[string]any{"type": "json"}, "appendToExisting": false, "dropExisting": drop},
	}})
	return b
}

// withTuning sets a task's tuningConfig: forceGuaranteedRollup and the
// partitionsSpec (JSON).
func withTuning(task []byte, perfect bool, partitionsSpec string) []byte {
	var spec map[string]any
	_ = json.Unmarshal(task, &spec) // taskSpec's own JSON
	spec["spec"].(map[string]any)["tuningConfig"] = map[string]any{"type": "index_parallel", "forceGuaranteedRollup": perfect,
		"partitionsSpec": json.RawMessage(partitionsSpec)}
	b, _ := json.Marshal(spec)
	return b
}

// TestRules: each rule of the model refuses (or types) what the Druid
// class it names refuses, fed the input Druid would reject.
func TestRules(t *testing.T) {
	ctx := context.Background()
	sig := `[{"name":"t","type":"long"},{"name":"v","type":"string"}]`
	for _, tc := range []struct {
		rule    string // the Druid source the rule follows
		version int
		zone    string
		run     func(d *Druid) error
		err     string // the refusal, or "" for a check on the result
		check   func(t *testing.T, d *Druid)
	}{
		{rule: "DruidSqlParserUtils.validateQueryAndConvertToIntervals: OVERWRITE not aligned to PARTITIONED BY",
			run: func(d *Druid) error { return d.ExecSQL(ctx, stmt(replaceDay2, "", "MONTH", row(day2, "x")), utc) },
			err: "not aligned with PARTITIONED BY granularity [MONTH]"},
		{rule: "AllGranularity.bucketStart is DateTimes.MIN: a bounded OVERWRITE with ALL TIME",
			run: func(d *Druid) error { return d.ExecSQL(ctx, stmt(replaceDay2, "", "ALL TIME", row(day2, "x")), utc) },
			err: "not aligned with PARTITIONED BY granularity [AllGranularity]"},
		{rule: "DruidSqlParserUtils.convertQueryToDimFilter: = is not an OVERWRITE operator",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`REPLACE INTO "ds" OVERWRITE WHERE "__time" = TIMESTAMP '2024-03-02 00:00:00'`, "", "DAY", row(day2, "x")), utc)
			},
			err: "Unsupported operation [=] in OVERWRITE WHERE clause."},
		{rule: "DruidSqlParserUtils.convertQueryToDimFilter: OVERWRITE filters __time only",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`REPLACE INTO "ds" OVERWRITE WHERE "t" >= TIMESTAMP '2024-03-02 00:00:00'`, "", "DAY", row(day2, "x")), utc)
			},
			err: "only supports filtering on the __time column"},
		{rule: "DruidSqlParserUtils.convertQueryToDimFilter: BETWEEN includes both ends, so its end is not aligned",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`REPLACE INTO "ds" OVERWRITE WHERE "__time" BETWEEN TIMESTAMP '2024-03-02 00:00:00' AND TIMESTAMP '2024-03-03 00:00:00'`, "", "DAY", row(day2, "x")), utc)
			},
			err: "not aligned"},
		{rule: "PlannerContext: OVERWRITE literals are read in the cluster's sqlTimeZone without the context parameter",
			zone: "America/Los_Angeles",
			run:  func(d *Druid) error { return d.ExecSQL(ctx, stmt(replaceDay2, "", "DAY", row(day2, "x")), nil) },
			err:  "not aligned"},
		{rule: "PlannerContext: sqlTimeZone UTC reads them in UTC on any cluster", zone: "America/Los_Angeles",
			run: func(d *Druid) error { return d.ExecSQL(ctx, stmt(replaceDay2, "", "DAY", row(day2, "x")), utc) },
			check: func(t *testing.T, d *Druid) {
				if values(d, "ds") != "x" {
					t.Fatalf("rows %s", values(d, "ds"))
				}
			}},
		{rule: "common.ftl PartitionGranularity: WEEK is no keyword",
			run: func(d *Druid) error { return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", "WEEK", row(day2, "x")), utc) },
			err: `Encountered "WEEK" after PARTITIONED BY`},
		{rule: "DruidSqlParserUtils.convertSqlNodeToGranularity: a period literal needs Druid 30 (apache/druid#15836)",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", "'P1W'", row(day2, "x")), utc)
			},
			err: "needs Druid 30"},
		{rule: "DruidSqlParserUtils.validateSupportedGranularityForPartitionedBy: only standard granularities", version: 30,
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", "'P2D'", row(day2, "x")), utc)
			},
			err: "Invalid granularity[P2D]"},
		{rule: "DruidSqlParserUtils.convertSqlNodeToGranularity: TIME_FLOOR(__time, 'P1W') on every version",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`REPLACE INTO "ds" OVERWRITE WHERE "__time" >= TIMESTAMP '2024-03-04 00:00:00' AND "__time" < TIMESTAMP '2024-03-11 00:00:00'`,
					"", `TIME_FLOOR("__time", 'P1W')`, row(day3+86_400_000, "monday")), utc)
			},
			check: func(t *testing.T, d *Druid) {
				if values(d, "ds") != "monday" {
					t.Fatalf("rows %s", values(d, "ds"))
				}
			}},
		{rule: "DruidSqlInsert: PARTITIONED BY is required",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, strings.TrimSuffix(stmt(`INSERT INTO "ds"`, "", "DAY", row(day2, "x")), "PARTITIONED BY DAY"), utc)
			},
			err: "must specify a PARTITIONED BY clause"},
		{rule: "ReplaceHandler: REPLACE needs OVERWRITE",
			run: func(d *Druid) error { return d.ExecSQL(ctx, stmt(`REPLACE INTO "ds"`, "", "DAY", row(day2, "x")), utc) },
			err: "Missing time chunk information in OVERWRITE clause"},
		{rule: "HttpInputSource: Empty URIs",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmtOver(`{"type":"http","uris":[]}`, sig, `INSERT INTO "ds"`, `MILLIS_TO_TIMESTAMP("t") AS "__time", "v"`, "", "DAY"), utc)
			},
			err: "Empty URIs"},
		{rule: "RowBasedColumnSelectorFactory / Rows.objectToNumber: a boolean in a long column is NULL",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmtOver(inline(`{"t":1,"b":true}`), `[{"name":"t","type":"long"},{"name":"b","type":"long"}]`,
					`INSERT INTO "ds"`, `MILLIS_TO_TIMESTAMP("t") AS "__time", "b"`, "", "DAY"), utc)
			},
			check: func(t *testing.T, d *Druid) {
				if n := d.Nulled(); len(n) != 1 || !strings.Contains(n[0], "b long true") {
					t.Fatalf("nulled %q", n)
				}
			}},
		{rule: "MSQTasks.primaryTimestampFromObjectForInsert: an ISO string in a long __time column is NULL, so InsertTimeNull",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmtOver(inline(`{"t":"2024-03-01T00:00:00.000Z"}`), `[{"name":"t","type":"long"}]`,
					`INSERT INTO "ds"`, `MILLIS_TO_TIMESTAMP("t") AS "__time"`, "", "DAY"), utc)
			},
			err: "InsertTimeNull"},
		{rule: "TimeParseOperatorConversion: TIME_PARSE takes a character string",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmtOver(inline(row(day1, "a")), sig, `INSERT INTO "ds"`, `TIME_PARSE("t") AS "__time"`, "", "DAY"), utc)
			},
			err: "Cannot apply 'TIME_PARSE'"},
		{rule: "ControllerImpl: a row in a chunk outside OVERWRITE is InsertTimeOutOfBounds",
			run: func(d *Druid) error { return d.ExecSQL(ctx, stmt(replaceDay2, "", "DAY", row(day3, "x")), utc) },
			err: "InsertTimeOutOfBounds"},
		{rule: "MultiStageQueryContext: failOnEmptyInsert true fails an empty REPLACE",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(replaceDay2, `"t" IS NULL`, "DAY", row(day2, "x")), map[string]any{"sqlTimeZone": "UTC", "failOnEmptyInsert": true})
			},
			err: "InsertCannotBeEmpty"},
		{rule: "MultiStageQueryContext: before Druid 29 every empty insert fails (no failOnEmptyInsert)", version: 28,
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(replaceDay2, `"t" IS NULL`, "DAY", row(day2, "x")), map[string]any{"sqlTimeZone": "UTC", "failOnEmptyInsert": false})
			},
			err: "InsertCannotBeEmpty"},
		{rule: "MSQMode strict (maxParseExceptions 0): a line that is not JSON is CannotParseExternalData",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a"), `{"t":`), utc)
			},
			err: "CannotParseExternalData"},
		{rule: "JSONFlattenerMaker.convertJsonNode: a decimal is a double, 12.30 is 12.3",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmtOver(inline(`{"t":1,"x":12.30,"big":123456789012345678901}`),
					`[{"name":"t","type":"long"},{"name":"x","type":"COMPLEX<json>"},{"name":"big","type":"string"}]`,
					`INSERT INTO "ds"`, `MILLIS_TO_TIMESTAMP("t") AS "__time", "x", "big"`, "", "DAY"), utc)
			},
			check: func(t *testing.T, d *Druid) {
				if got := d.Rows("ds")[0].String(); got != `1 {"big":"1.2345678901234568E20","x":12.3}` {
					t.Fatalf("row %s", got)
				}
			}},
		{rule: "Granularity.fromString: a period string is not a segmentGranularity",
			run: func(d *Druid) error { return d.ExecTask(ctx, taskSpec(nil, false, `"P1W"`, nil, row(day1, "a"))) },
			err: "no GranularityType named"},
		{rule: "GranularityModule: a period object is",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `{"type":"period","period":"P1W"}`, nil, row(day1, "a")))
			}},
		{rule: "DimensionHandlerUtils.convertObjectToLong: \"12.34\" is no long (processedWithError, NULL)",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, []any{map[string]any{"type": "long", "name": "v"}}, row(day1, "12.34")))
			},
			check: func(t *testing.T, d *Druid) {
				if n := d.Nulled(); len(n) != 1 || d.Rows("ds")[0].Columns["v"] != nil {
					t.Fatalf("nulled %q, rows %v", n, d.Rows("ds"))
				}
			}},
		{rule: "DimensionHandlerUtils.convertObjectToDouble: \"12.34\" is a double",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, []any{map[string]any{"type": "double", "name": "v"}}, row(day1, "12.34")))
			},
			check: func(t *testing.T, d *Druid) {
				if got := d.Rows("ds")[0].Columns["v"]; got != 12.34 || d.Types("ds")["v"] != "DOUBLE" {
					t.Fatalf("v %#v, types %v", got, d.Types("ds"))
				}
			}},
		{rule: "ExprEval.bestEffortOf: discovery makes a decimal string a STRING and a boolean LONG 1/0",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, nil, fmt.Sprintf(`{"t":%d,"v":"12.34","b":true}`, day1)))
			},
			check: func(t *testing.T, d *Druid) {
				if ty := d.Types("ds"); ty["v"] != "STRING" || ty["b"] != "LONG" || d.Rows("ds")[0].Columns["b"] != int64(1) {
					t.Fatalf("types %v rows %v", ty, d.Rows("ds"))
				}
			}},
		{rule: "StructuredData: a nested column keeps the booleans of the JSON it read (real Druid 27 and 33), a list of booleans is ARRAY<LONG> 1/0",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, nil,
					fmt.Sprintf(`{"t":%d,"o":{"b":true,"l":[false]},"l":[true,false],"lo":[{"b":false}]}`, day1)))
			},
			check: func(t *testing.T, d *Druid) {
				ty, rows := d.Types("ds"), d.RowStrings("ds")
				want := fmt.Sprintf(`%d {"l":[1,0],"lo":[{"b":false}],"o":{"b":true,"l":[false]}}`, day1)
				if ty["o"] != "COMPLEX<json>" || ty["lo"] != "COMPLEX<json>" || ty["l"] != "ARRAY<LONG>" || len(rows) != 1 || rows[0] != want {
					t.Fatalf("types %v rows %v, want %s", ty, rows, want)
				}
			}},
		{rule: "ParallelIndexSupervisorTask: with maxNumConcurrentSubTasks above 1 each URI's subtask writes its own segment of a chunk, typed by its rows",
			run: func(d *Druid) error {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/a" {
						fmt.Fprintf(w, `{"t":%d,"o":{"x":1}}`+"\n", day1)
						return
					}
					fmt.Fprintf(w, `{"t":%d,"o":null}`+"\n", day1)
				}))
				t.Cleanup(srv.Close)
				spec := fmt.Sprintf(`{"type":"index_parallel","spec":{"dataSchema":{"dataSource":"ds","timestampSpec":{"column":"t","format":"millis"},
					"dimensionsSpec":{"useSchemaDiscovery":true},"granularitySpec":{"segmentGranularity":"DAY"}},
					"ioConfig":{"type":"index_parallel","inputSource":{"type":"http","uris":["%s/a","%s/b"]},"inputFormat":{"type":"json"}},
					"tuningConfig":{"type":"index_parallel","maxNumConcurrentSubTasks":2}}}`, srv.URL, srv.URL)
				return d.ExecTask(ctx, []byte(spec))
			},
			check: func(t *testing.T, d *Druid) {
				segs := d.Segments("ds")
				if len(segs) != 2 || segs[0].Types["o"] != "COMPLEX<json>" || segs[1].Types["o"] != "STRING" || segs[1].Partition != 1 {
					t.Fatalf("segments %+v: want one of each URI, COMPLEX<json> and STRING", segs)
				}
			}},
		{rule: "MapInputRowParser.findDimensions: discovery leaves out the timestamp column",
			run: func(d *Druid) error { return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, nil, row(day1, "a"))) },
			check: func(t *testing.T, d *Druid) {
				if _, ok := d.Types("ds")["t"]; ok {
					t.Fatalf("types %v", d.Types("ds"))
				}
			}},
		{rule: "DataSchema.computeDimensionsSpec: a listed timestamp column is a dimension",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, []any{map[string]any{"type": "long", "name": "t"}}, row(day1, "a")))
			},
			check: func(t *testing.T, d *Druid) {
				if ty := d.Types("ds"); ty["t"] != "LONG" || len(ty) != 1 {
					t.Fatalf("types %v", ty)
				}
			}},
		{rule: "HttpInputSource in a task: Empty URIs",
			run: func(d *Druid) error {
				b := bytes.Replace(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), []byte(`"inputSource":{"data"`), []byte(`"inputSource":{"uris":[],"type":"http","data"`), 1)
				b = bytes.Replace(b, []byte(`"type":"inline"`), []byte(`"x":"inline"`), 1)
				return d.ExecTask(ctx, b)
			},
			err: "Empty URIs"},
		{rule: "TimestampSpec.parseDateTime: a row without its time is missingValue when set",
			run: func(d *Druid) error {
				b := bytes.Replace(taskSpec(nil, false, `"DAY"`, nil, `{"v":"a"}`, row(day2, "b")), []byte(`"format":"millis"`),
					[]byte(`"format":"millis","missingValue":"2024-03-01T00:00:00.000Z"`), 1)
				return d.ExecTask(ctx, b)
			},
			check: func(t *testing.T, d *Druid) {
				if rows := d.Rows("ds"); len(rows) != 2 || rows[0].Time != day1 || rows[1].Time != day2 || d.Unparseable() != 0 {
					t.Fatalf("rows %v, %d unparseable", rows, d.Unparseable())
				}
			}},
		{rule: "TimestampSpec.parseDateTime: without missingValue a row without its time is unparseable",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, taskSpec(nil, false, `"DAY"`, nil, `{"v":"a"}`, row(day2, "b")))
			},
			check: func(t *testing.T, d *Druid) {
				if rows := d.Rows("ds"); len(rows) != 1 || d.Unparseable() != 1 {
					t.Fatalf("rows %v, %d unparseable", rows, d.Unparseable())
				}
			}},
		{rule: "IndexTask.IndexTuningConfig: range partitioning without forceGuaranteedRollup",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), false,
					`{"type":"range","partitionDimensions":["v"],"targetRowsPerSegment":10}`))
			},
			err: "DynamicPartitionsSpec must be used for best-effort rollup"},
		{rule: "IndexTask.IndexTuningConfig: hashed partitioning without forceGuaranteedRollup",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), false, `{"type":"hashed","numShards":2}`))
			},
			err: "DynamicPartitionsSpec must be used for best-effort rollup"},
		{rule: "IndexTask.IndexTuningConfig: forceGuaranteedRollup with a dynamic partitionsSpec",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true, `{"type":"dynamic"}`))
			},
			err: "DynamicPartitionsSpec cannot be used for perfect rollup"},
		{rule: "DimensionRangePartitionsSpec: partitionDimensions must be specified",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true, `{"type":"range","targetRowsPerSegment":10}`))
			},
			err: "partitionDimensions must be specified"},
		{rule: "ParallelIndexTuningConfig: an empty partitionDimensions list",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true,
					`{"type":"range","partitionDimensions":[],"targetRowsPerSegment":10}`))
			},
			err: "partitionDimensions must be specified"},
		{rule: "DimensionRangePartitionsSpec: exactly one of targetRowsPerSegment and maxRowsPerSegment",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true,
					`{"type":"range","partitionDimensions":["v"]}`))
			},
			err: "Exactly one of targetRowsPerSegment or maxRowsPerSegment must be present"},
		{rule: "HashedPartitionsSpec: numShards and targetRowsPerSegment together",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true,
					`{"type":"hashed","numShards":2,"targetRowsPerSegment":10}`))
			},
			err: "At most one of targetRowsPerSegment or numShards"},
		{rule: "the model does not follow range partitioning into several partitions of a chunk",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a"), row(day1, "b")), true,
					`{"type":"range","partitionDimensions":["v"],"maxRowsPerSegment":1}`))
			},
			err: "range partitioning of 2 rows into segments of 1 is not modelled"},
		{rule: "the model does not follow Rows.toGroupKey, the hash key without partitionDimensions",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true, `{"type":"hashed","numShards":2}`))
			},
			err: "without partitionDimensions is not modelled"},
		{rule: "the model runs no transformSpec",
			run: func(d *Druid) error {
				var spec map[string]any
				if err := json.Unmarshal(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), &spec); err != nil {
					return err
				}
				spec["spec"].(map[string]any)["dataSchema"].(map[string]any)["transformSpec"] = map[string]any{
					"transforms": []any{map[string]any{"type": "expression", "name": "v", "expression": "concat(v, 'x')"}}}
				b, err := json.Marshal(spec)
				if err != nil {
					return err
				}
				return d.ExecTask(ctx, b)
			},
			err: "transformSpec is not modelled"},
		{rule: "HashedPartitionsSpec: numShards should be positive",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true, `{"type":"hashed","numShards":0}`))
			},
			err: "numShards[0] should be positive"},
		{rule: "ParallelIndexSupervisorTask.isGuaranteedRollup: perfect rollup cannot append",
			run: func(d *Druid) error {
				b := withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a")), true, `{"type":"hashed","numShards":2}`)
				return d.ExecTask(ctx, bytes.Replace(b, []byte(`"appendToExisting":false`), []byte(`"appendToExisting":true`), 1))
			},
			err: "Perfect rollup cannot be guaranteed when appending"},
		{rule: "RangePartitionIndexTaskInputRowIteratorBuilder: a row with several values in a range dimension",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, fmt.Sprintf(`{"t":%d,"v":["a","b"]}`, day1)), true,
					`{"type":"range","partitionDimensions":["v"],"targetRowsPerSegment":10}`))
			},
			err: "Cannot partition on multi-value dimension [v]"},
		{rule: "range partitioning with forceGuaranteedRollup ingests the rows",
			run: func(d *Druid) error {
				return d.ExecTask(ctx, withTuning(taskSpec(nil, false, `"DAY"`, nil, row(day1, "a"), row(day2, "b")), true,
					`{"type":"range","partitionDimensions":["v"],"targetRowsPerSegment":10}`))
			},
			check: func(t *testing.T, d *Druid) {
				if values(d, "ds") != "a,b" {
					t.Fatalf("rows %s", values(d, "ds"))
				}
			}},
		{rule: "DruidSqlParserUtils.resolveClusteredByColumnsToOutputColumns: CLUSTERED BY a name the SELECT does not output",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", `DAY CLUSTERED BY "w"`, row(day1, "a")), utc)
			},
			err: "Column 'w' not found in any table"},
		{rule: "DruidSqlParserUtils.resolveClusteredByColumnsToOutputColumns: an ordinal past the SELECT list",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", `DAY CLUSTERED BY 3`, row(day1, "a")), utc)
			},
			err: "Ordinal out of range"},
		{rule: "FrameWriterUtils.verifySortColumns: CLUSTERED BY a COMPLEX<json> column",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmtOver(inline(fmt.Sprintf(`{"t":%d,"j":{"a":1}}`, day1)), `[{"name":"t","type":"long"},{"name":"j","type":"COMPLEX<json>"}]`,
					`INSERT INTO "ds"`, `MILLIS_TO_TIMESTAMP("t") AS "__time", "j"`, "", `DAY CLUSTERED BY "j"`), utc)
			},
			err: "ColumnTypeNotSupported"},
		{rule: "CLUSTERED BY an output column ingests the rows",
			run: func(d *Druid) error {
				return d.ExecSQL(ctx, stmt(`INSERT INTO "ds"`, "", `DAY CLUSTERED BY "v", 1`, row(day1, "a")), utc)
			},
			check: func(t *testing.T, d *Druid) {
				if values(d, "ds") != "a" {
					t.Fatalf("rows %s", values(d, "ds"))
				}
			}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := New()
			d.Version, d.SQLTimeZone = tc.version, tc.zone
			err := tc.run(d)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

// TestHTTPEntityInStatements: a statement's http input source is read as
// Druid's HttpEntity reads it (see TestHTTPEntity), to the datasource.
func TestHTTPEntityInStatements(t *testing.T) {
	body := []byte(strings.Join([]string{row(day1, "a"), row(day2, "b"), row(day3, "c")}, "\n") + "\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body)
	_ = zw.Close()
	var requests atomic.Int32
	var ranges []string
	fail := map[int32]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		ranges = append(ranges, r.Header.Get("Range"))
		data := body
		if strings.HasSuffix(r.URL.Path, ".gz") {
			data = gz.Bytes()
		}
		var from int
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-", &from); err != nil {
			http.Error(w, "no range", 400)
			return
		}
		switch fail[n] {
		case "500":
			http.Error(w, "try again", 500)
			return
		case "cut":
			// Send part of the body and break the connection.
			w.Header().Set("Content-Range", "bytes "+strconv.Itoa(from)+"-*/*")
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write(data[from : from+7])
			_ = http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		case "200":
			_, _ = w.Write(data)
			return
		}
		w.Header().Set("Content-Range", "bytes "+strconv.Itoa(from)+"-*/*")
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write(data[from:])
	}))
	defer srv.Close()
	sql := func(uri string) string {
		src, _ := json.Marshal(map[string]any{"type": "http", "uris": []string{uri}})
		return stmtOver(string(src), `[{"name":"t","type":"long"},{"name":"v","type":"string"}]`, `REPLACE INTO "ds" OVERWRITE ALL`,
			`MILLIS_TO_TIMESTAMP("t") AS "__time", "v"`, "", "DAY")
	}
	for _, tc := range []struct {
		name   string
		path   string
		fail   map[int32]string
		ranges string
		err    string
	}{
		{"Range on the first request", "/rows", nil, "bytes=0-", ""},
		{"a 500 is retried", "/rows", map[int32]string{1: "500", 2: "500"}, "bytes=0- bytes=0- bytes=0-", ""},
		{"a broken connection resumes at the bytes read", "/rows", map[int32]string{1: "cut", 2: "cut"}, "bytes=0- bytes=7- bytes=14-", ""},
		{"a 200 after a break is skipped into", "/rows", map[int32]string{1: "cut", 2: "200"}, "bytes=0- bytes=7-", ""},
		{"ten failures fail the read", "/rows", map[int32]string{1: "500", 2: "500", 3: "500", 4: "500", 5: "500", 6: "500", 7: "500", 8: "500", 9: "500", 10: "500"},
			"", "10 tries"},
		{"gzip by extension, Range on the compressed bytes", "/rows.ndjson.gz", map[int32]string{1: "cut"}, "bytes=0- bytes=7-", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requests.Store(0)
			ranges, fail = nil, tc.fail
			d := New()
			d.Client = srv.Client()
			err := d.ExecSQL(context.Background(), sql(srv.URL+tc.path), utc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(ranges, " "); got != tc.ranges {
				t.Fatalf("ranges %q, want %q", got, tc.ranges)
			}
			if values(d, "ds") != "a,b,c" {
				t.Fatalf("rows %s", values(d, "ds"))
			}
		})
	}
}

// TestServer: the task API validates what Druid documents and reports
// the outcome a test picks.
func TestServer(t *testing.T) {
	s := NewServer()
	s.Username, s.Password = "u", "p"
	s.Decide = func(id string, _ Submission) Outcome {
		if id == "query-0002" {
			return Lose
		}
		return Succeed
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	post := func(body, user string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/druid/v2/sql/task", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(user, "p")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, json.NewDecoder(resp.Body).Decode(new(any)))
		return resp.StatusCode, b.String()
	}
	good, _ := json.Marshal(map[string]any{"query": stmt(`INSERT INTO "ds"`, "", "DAY", row(day1, "a")), "context": utc})
	for _, tc := range []struct {
		body, user string
		status     int
	}{
		{string(good), "nobody", 401},
		{`{"context":{}}`, "u", 400},
		{string(good), "u", 202},
		{string(good), "u", 202},
	} {
		if status, _ := post(tc.body, tc.user); status != tc.status {
			t.Fatalf("%s as %s: %d, want %d", tc.body, tc.user, status, tc.status)
		}
	}
	status := func(id string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/druid/indexer/v1/task/"+id+"/status", nil)
		req.SetBasicAuth("u", "p")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// TaskResourceFilter refuses a task the Overlord does not hold with 400.
	if status("query-0001") != 200 || status("query-0002") != 400 || status("query-9999") != 400 {
		t.Fatal("task status")
	}
	// The lost task did its work: both inserts are in.
	if got := values(s.Druid, "ds"); got != "a,a" {
		t.Fatalf("rows %s", got)
	}
}

// TestAvroNeverReadRaw: an Avro data file is neither read by the parquet
// inputFormat nor through Druid's avro_ocf format, which types Iceberg's
// values otherwise (AvroFlattenerMaker).
func TestAvroNeverReadRaw(t *testing.T) {
	if _, err := New().parquetRows([]byte("Obj\x01\x04\x16avro.schema"), false); err == nil || !strings.Contains(err.Error(), "Avro") {
		t.Errorf("parquet inputFormat over an Avro file: %v", err)
	}
	_, err := parseSource(json.RawMessage(`{"type":"inline","data":"x"}`), json.RawMessage(`{"type":"avro_ocf"}`))
	if err == nil || !strings.Contains(err.Error(), "avro_ocf") {
		t.Errorf("avro_ocf inputFormat: %v", err)
	}
}
