// Package druidsim is a model of the parts of Apache Druid that the
// sidecar's generated specs and `sidecar sync` meet, for tests. Druid
// cannot run on the machines the project is built on, so the model is
// made from Druid's source, rule by rule, and each rule names the Druid
// class it follows. Where the model and Druid disagree, Druid is right
// and the model is the bug.
//
// It models a datasource as rows bucketed by time, in segments (one per
// time chunk an ingestion writes) that each type their columns as Druid's
// indexers do, and the type the Broker merges from them (Segments,
// Types):
//
//   - MSQ INSERT and REPLACE (ExecSQL): the statement is parsed as Druid
//     SQL, OVERWRITE WHERE turned into intervals in the query's
//     sqlTimeZone and checked against PARTITIONED BY, the EXTERN input
//     source read for real and each value converted to its declared
//     EXTERN type (a value that type cannot take is NULL, as in Druid, and
//     recorded in Nulled), rows outside the OVERWRITE range or with a null
//     __time refused, an empty result refused unless failOnEmptyInsert is
//     false;
//   - native index_parallel tasks (ExecTask): typed dimensions and schema
//     discovery as Druid types them (a value a typed dimension cannot
//     take is NULL and recorded in Nulled), intervals and dropExisting,
//     segments by subtask or, under perfect rollup, by partition;
//   - the http input source read as Druid's HttpEntity does (Range on
//     every request, retries, resumption by byte offset, decompression by
//     extension), and Parquet files read as Druid's Parquet reader does.
//
// Its Server answers as Druid's processes do, with Basic auth when
// configured: the Broker (POST /druid/v2/sql/task and its /enabled probe,
// SqlTaskResource, which names a task after the context's sqlQueryId),
// the Overlord leader (the task API: submission, status, leader, worker
// capacity; and, as a Coordinator that runs the Overlord, marking a
// datasource's segments unused), GET /status with the version modelled, a
// standby Overlord (307 to the leader), and a
// Router with or without the management proxy (ServeHTTP is one with it).
// Tasks run in the cluster's task slots on a clock a test controls: an MSQ
// statement takes a controller's slot and its workers', and controllers
// that take every slot fail with TaskStartTimeout; the task runner refuses
// payloads it cannot hand a worker (Kubernetes' TASK_JSON, ZooKeeper's
// znodes). A test decides per task whether it succeeds, fails or is lost,
// and reads how many Druid tasks were in flight at most.
//
// It does not model rollup, segment versions, locking or query-time
// behaviour.
package druidsim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Row is one row of a datasource: its __time in epoch milliseconds and
// its columns as Druid stores them (int64 for LONG, float32 for FLOAT,
// float64 for DOUBLE, string, lists and maps for nested data).
type Row struct {
	Time    int64
	Columns map[string]any
}

// String is the row as canonical JSON with its __time, for comparisons.
func (r Row) String() string {
	b := strconv.AppendInt(make([]byte, 0, 256), r.Time, 10)
	b = append(b, ' ')
	if c, ok := appendCanonical(b, r.Columns); ok {
		return string(c)
	}
	return string(b) + canonicalJSON(r.Columns)
}

// Druid is the model: datasources and tasks.
type Druid struct {
	// Client fetches http input sources; nil is http.DefaultClient.
	Client *http.Client
	// Getenv resolves an environment password provider.
	Getenv func(string) string
	// Version is the Druid release modelled, as its major number; 0 is
	// 29. Druid 26 brought the auto dimension type; Druid 28 nested
	// columns of format v5 for json dimensions (lists as ARRAY columns),
	// MSQ's arrayIngestMode and the Broker's leastRestrictive type merge;
	// Druid 29 failOnEmptyInsert, castToType and scaled INT32/INT64
	// decimals in the Parquet reader; Druid 30 PARTITIONED BY literals;
	// Druid 31 arrayIngestMode array by default.
	Version int
	// SQLTimeZone is the cluster's druid.sql.planner.sqlTimeZone, which a
	// statement without the sqlTimeZone context parameter is read in;
	// empty is UTC.
	SQLTimeZone string
	// Concurrency is how many URIs of an http input source are read at
	// once (index_parallel's maxNumConcurrentSubTasks); 0 is one.
	Concurrency int

	mu          sync.Mutex
	datasources map[string][]Row
	segments    map[string][]segment
	tasks       map[string]*task
	n           int
	errs        []error
	dropped     int
	unparseable int
	retries     int
	nulled      []string
	fetches     []Fetch
}

// New returns an empty Druid.
func New() *Druid {
	return &Druid{datasources: map[string][]Row{}, segments: map[string][]segment{}, tasks: map[string]*task{}}
}

func (d *Druid) version() int {
	if d.Version == 0 {
		return 29
	}
	return d.Version
}

// Rows returns a datasource's rows, sorted by time and content.
func (d *Druid) Rows(dataSource string) []Row {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows := slices.Clone(d.datasources[dataSource])
	sortRows(rows)
	return rows
}

// sortRows sorts rows by time, then by their String, each row's computed
// once (a JSON encoding of its columns: computing it per comparison made
// the sort of a few thousand rows take seconds).
func sortRows(rows []Row) {
	type keyed struct {
		s string
		r Row
	}
	ks := make([]keyed, len(rows))
	for i, r := range rows {
		ks[i] = keyed{r.String(), r}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.r.Time, b.r.Time), strings.Compare(a.s, b.s))
	})
	for i := range ks {
		rows[i] = ks[i].r
	}
}

// Errors are the statements and tasks Druid refused: each is a bug in
// what was submitted.
func (d *Druid) Errors() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.errs)
}

// Dropped counts the rows read from http input sources that a statement's
// WHERE or a task's intervals dropped. The sidecar filters the rows of an
// interval itself, so for its specs this stays 0: Druid's own guards
// never have to catch a row it served outside the interval.
func (d *Druid) Dropped() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

// Nulled lists the values Druid turned into NULL because their column's
// type could not take them: an EXTERN type (MSQ, silently) or a typed
// dimension (native, as processedWithError). Each is data lost between the
// sidecar and Druid.
func (d *Druid) Nulled() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.nulled)
}

// Unparseable counts the rows native tasks skipped for want of a
// parseable timestamp.
func (d *Druid) Unparseable() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.unparseable
}

// Retries counts the requests of http input sources that failed and were
// tried again.
func (d *Druid) Retries() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.retries
}

// Expect is what a datasource holds after ingesting NDJSON lines (the
// sidecar's row stream) whose columns have the given Druid column types
// (LONG, FLOAT, DOUBLE, STRING, ARRAY<…>, COMPLEX<json>; a column without
// a type is kept as read): each value converted as a typed dimension of that type
// converts it, the time column as __time, rows without a time left out.
// It is the expectation a test holds Rows against, sorted as Rows is.
func Expect(lines []string, timeColumn string, types map[string]string) ([]Row, error) {
	out, err := expectRows(lines, timeColumn, types)
	if err != nil {
		return nil, err
	}
	sortRows(out)
	return out, nil
}

// ExpectStrings are Expect's rows spelled as Row.String spells them and
// sorted, as RowStrings lists a datasource's.
func ExpectStrings(lines []string, timeColumn string, types map[string]string) ([]string, error) {
	rows, err := expectRows(lines, timeColumn, types)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out, nil
}

// expectRows are Expect's rows in the order of lines.
func expectRows(lines []string, timeColumn string, types map[string]string) ([]Row, error) {
	var out []Row
	for _, line := range lines {
		obj, err := jacksonLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		ms, ok := obj[timeColumn].(int64)
		if !ok {
			continue
		}
		for col, v := range obj {
			if strings.HasPrefix(types[col], "ARRAY<") {
				if obj[col], ok = castValue(v, types[col]); !ok {
					return nil, fmt.Errorf("column %s: %s cannot be %s", col, canonical(v), types[col])
				}
				continue
			}
			dim := map[string]string{"LONG": "long", "FLOAT": "float", "DOUBLE": "double", "STRING": "string"}[types[col]]
			if dim == "" {
				obj[col] = storedValue(v)
				continue
			}
			if obj[col], ok = dimensionValue(v, dim); !ok {
				return nil, fmt.Errorf("column %s: %s cannot be %s", col, canonical(v), types[col])
			}
		}
		out = append(out, Row{Time: ms, Columns: obj})
	}
	return out, nil
}

// DatasourceRows are the rows of the sidecar's NDJSON lines as a datasource
// holds them without a type for any column (Expect), spelled as Row.String
// spells them and sorted, as RowStrings lists a datasource's.
func DatasourceRows(lines []string, timeColumn string) ([]string, error) {
	return ExpectStrings(lines, timeColumn, nil)
}

// RowStrings are the datasource's rows as Row.String spells them, sorted.
func (d *Druid) RowStrings(dataSource string) []string {
	d.mu.Lock()
	rows := slices.Clone(d.datasources[dataSource])
	d.mu.Unlock()
	var out []string
	for _, r := range rows {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}
