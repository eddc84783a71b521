// Package druidsim is a stand-in for the parts of Apache Druid that the
// sidecar's generated specs and `sidecar sync` talk to, for tests.
//
// It models a datasource as rows bucketed by time: an MSQ REPLACE swaps the
// interval it names (OVERWRITE WHERE, or ALL) for the rows it reads, an
// INSERT adds rows, an index_parallel task with appendToExisting=false
// replaces its granularitySpec intervals (dropExisting) or the time chunks
// its rows fall into. It executes statements of the shape the sidecar
// writes, reading the EXTERN input source for real (http URIs through an
// HTTP client, inline data), and refuses what Druid refuses: rows with a
// null __time, rows outside a REPLACE's OVERWRITE range, an OVERWRITE range
// not aligned to PARTITIONED BY, an http inputSource without URIs.
//
// Its HTTP handler serves POST /druid/v2/sql/task ({"query","context"},
// answered {"taskId","state"}), POST /druid/indexer/v1/task and GET
// /druid/indexer/v1/task/{id}/status, with Basic auth when configured, and
// lets a test decide per task whether it succeeds, fails or is lost.
//
// It does not model dimensions, rollup, segment versions or locking: rows
// are kept as the JSON objects they were read as.
package druidsim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

// Row is one row of a datasource: its __time in epoch milliseconds and its
// columns as read (numbers as json.Number).
type Row struct {
	Time    int64
	Columns map[string]any
}

// String is the row as canonical JSON with its __time, for comparisons.
func (r Row) String() string {
	b, _ := json.Marshal(r.Columns)
	return fmt.Sprintf("%d %s", r.Time, b)
}

// Druid is the model: datasources and tasks.
type Druid struct {
	// Client fetches http input sources; nil is http.DefaultClient.
	Client *http.Client
	// Getenv resolves an environment password provider.
	Getenv func(string) string
	// Concurrency is how many URIs of an http input source are read at
	// once (index_parallel's maxNumConcurrentSubTasks); 0 is one.
	Concurrency int

	mu          sync.Mutex
	datasources map[string][]Row
	tasks       map[string]*task
	n           int
	errs        []error
	dropped     int
	fetches     []Fetch
}

// Dropped counts the rows read from http input sources that a statement's
// WHERE or a task's intervals dropped. The sidecar filters the rows of a
// changed interval itself, so for its specs this stays 0: Druid's own
// guards never have to catch a row it served outside the interval.
func (d *Druid) Dropped() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

// New returns an empty Druid.
func New() *Druid {
	return &Druid{datasources: map[string][]Row{}, tasks: map[string]*task{}}
}

// Rows returns a datasource's rows, sorted by time and content.
func (d *Druid) Rows(dataSource string) []Row {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows := slices.Clone(d.datasources[dataSource])
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), strings.Compare(a.String(), b.String()))
	})
	return rows
}

// Errors are the statements and tasks Druid refused: each is a bug in
// what was submitted.
func (d *Druid) Errors() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.errs)
}

// ExecSQL runs an MSQ statement the way Druid's SQL task would, all or
// nothing.
func (d *Druid) ExecSQL(ctx context.Context, query string, queryContext map[string]any) error {
	st, err := parseStatement(query)
	if err != nil {
		return fmt.Errorf("parse statement: %w", err)
	}
	if st.replace && !st.overwriteAll && st.partitioned != druid.GranularityAll {
		g := st.partitioned
		if !g.Floor(st.start).Equal(st.start) || !g.Floor(st.end).Equal(st.end) {
			return fmt.Errorf("OVERWRITE WHERE %s/%s is not aligned to PARTITIONED BY %s", st.start, st.end, g)
		}
	}
	if v, ok := queryContext["failOnEmptyInsert"]; ok && v != false {
		return errors.New("failOnEmptyInsert must be false for an empty REPLACE to delete its interval")
	}
	for _, c := range append([]string{st.timeColumn}, st.columns...) {
		if !slices.ContainsFunc(st.signature, func(s struct{ Name, Type string }) bool { return s.Name == c }) {
			return fmt.Errorf("column %q is not in the EXTERN signature", c)
		}
	}
	raw, fromHTTP, err := d.read(ctx, st.inputSource, st.inputFormat)
	if err != nil {
		return err
	}
	var rows []Row
	dropped := 0
	for _, obj := range raw {
		tv := obj[st.timeColumn]
		var t *int64
		if tv != nil {
			ms, err := timeOf(tv, st.timeFunc == "TIME_PARSE")
			if err != nil {
				return fmt.Errorf("__time of %v: %w", obj, err)
			}
			t = &ms
		}
		if w := st.where; w != nil {
			if w.notNull != "" && obj[w.notNull] == nil {
				continue
			}
			if w.notNull == "" && (t == nil || *t < w.start.UnixMilli() || *t >= w.end.UnixMilli()) {
				dropped++
				continue
			}
		}
		if t == nil {
			return fmt.Errorf("InsertTimeNull: a row has a null __time: %v", obj)
		}
		if st.replace && !st.overwriteAll && (*t < st.start.UnixMilli() || *t >= st.end.UnixMilli()) {
			return fmt.Errorf("InsertTimeOutOfBounds: __time %s is outside OVERWRITE %s/%s",
				time.UnixMilli(*t).UTC(), st.start, st.end)
		}
		cols := map[string]any{}
		for _, c := range append([]string{st.timeColumn}, st.columns...) {
			cols[c] = obj[c]
		}
		rows = append(rows, Row{Time: *t, Columns: cols})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if fromHTTP {
		d.dropped += dropped
	}
	switch {
	case !st.replace:
		d.datasources[st.dataSource] = append(d.datasources[st.dataSource], rows...)
	case st.overwriteAll:
		d.datasources[st.dataSource] = rows
	default:
		kept := slices.DeleteFunc(slices.Clone(d.datasources[st.dataSource]), func(r Row) bool {
			return r.Time >= st.start.UnixMilli() && r.Time < st.end.UnixMilli()
		})
		d.datasources[st.dataSource] = append(kept, rows...)
	}
	return nil
}

// indexTask is the part of an index_parallel task the model reads.
type indexTask struct {
	Type string `json:"type"`
	Spec struct {
		DataSchema struct {
			DataSource    string `json:"dataSource"`
			TimestampSpec struct {
				Column string `json:"column"`
				Format string `json:"format"`
			} `json:"timestampSpec"`
			GranularitySpec struct {
				SegmentGranularity string   `json:"segmentGranularity"`
				Intervals          []string `json:"intervals"`
			} `json:"granularitySpec"`
		} `json:"dataSchema"`
		IOConfig struct {
			Type             string          `json:"type"`
			InputSource      json.RawMessage `json:"inputSource"`
			InputFormat      json.RawMessage `json:"inputFormat"`
			AppendToExisting bool            `json:"appendToExisting"`
			DropExisting     bool            `json:"dropExisting"`
		} `json:"ioConfig"`
	} `json:"spec"`
}

// ExecTask runs an index_parallel task: rows without a parseable time are
// unparseable (skipped), rows outside granularitySpec.intervals are thrown
// away; with appendToExisting=false, the intervals (with dropExisting) or
// else the time chunks the rows fall into are replaced.
func (d *Druid) ExecTask(ctx context.Context, spec []byte) error {
	var t indexTask
	if err := json.Unmarshal(spec, &t); err != nil {
		return fmt.Errorf("task: %w", err)
	}
	if t.Type != "index_parallel" || t.Spec.IOConfig.Type != "index_parallel" {
		return fmt.Errorf("task type %q, ioConfig type %q: want index_parallel", t.Type, t.Spec.IOConfig.Type)
	}
	ds := t.Spec.DataSchema
	gran, err := druid.ParseGranularity(ds.GranularitySpec.SegmentGranularity)
	if err != nil {
		return err
	}
	type iv struct{ start, end int64 }
	var intervals []iv
	for _, s := range ds.GranularitySpec.Intervals {
		a, b, err := splits.ParseInterval(s)
		if err != nil {
			return err
		}
		if gran != druid.GranularityAll && (!gran.Floor(a).Equal(a) || !gran.Floor(b).Equal(b)) {
			return fmt.Errorf("interval %s is not aligned to segmentGranularity %s", s, gran)
		}
		intervals = append(intervals, iv{a.UnixMilli(), b.UnixMilli()})
	}
	raw, fromHTTP, err := d.read(ctx, t.Spec.IOConfig.InputSource, t.Spec.IOConfig.InputFormat)
	if err != nil {
		return err
	}
	var rows []Row
	dropped := 0
	chunks := map[int64]bool{}
	for _, obj := range raw {
		v := obj[ds.TimestampSpec.Column]
		if v == nil {
			continue // unparseable
		}
		ms, err := timeOf(v, ds.TimestampSpec.Format == "iso")
		if err != nil {
			continue
		}
		if len(intervals) > 0 && !slices.ContainsFunc(intervals, func(i iv) bool { return ms >= i.start && ms < i.end }) {
			dropped++
			continue // thrown away
		}
		rows = append(rows, Row{Time: ms, Columns: obj})
		chunks[gran.Floor(time.UnixMilli(ms)).UnixMilli()] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if fromHTTP {
		d.dropped += dropped
	}
	cur := d.datasources[ds.DataSource]
	switch {
	case t.Spec.IOConfig.AppendToExisting:
	case len(intervals) > 0 && t.Spec.IOConfig.DropExisting:
		cur = slices.DeleteFunc(slices.Clone(cur), func(r Row) bool {
			return slices.ContainsFunc(intervals, func(i iv) bool { return r.Time >= i.start && r.Time < i.end })
		})
	case gran == druid.GranularityAll:
		if len(rows) > 0 {
			cur = nil
		}
	default:
		// Overwrite by time chunk: only the chunks that get rows.
		cur = slices.DeleteFunc(slices.Clone(cur), func(r Row) bool { return chunks[gran.Floor(time.UnixMilli(r.Time)).UnixMilli()] })
	}
	d.datasources[ds.DataSource] = append(cur, rows...)
	return nil
}

// timeOf reads a __time: epoch milliseconds, or an ISO 8601 string.
func timeOf(v any, iso bool) (int64, error) {
	if iso {
		s, ok := v.(string)
		if !ok {
			return 0, fmt.Errorf("time %v is not a string", v)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, err
		}
		return t.UnixMilli(), nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("time %v is not a number", v)
	}
	return n.Int64()
}

// inputSource is the part of a Druid inputSource the model reads.
type inputSource struct {
	Type     string   `json:"type"`
	URIs     []string `json:"uris"`
	Data     string   `json:"data"`
	Username string   `json:"httpAuthenticationUsername"`
	Password *struct {
		Type     string `json:"type"`
		Variable string `json:"variable"`
	} `json:"httpAuthenticationPassword"`
}

// read reads every row an input source serves, as JSON objects, and says
// whether they came over http.
func (d *Druid) read(ctx context.Context, src, format json.RawMessage) (_ []map[string]any, fromHTTP bool, _ error) {
	var s struct{ Type string }
	_ = json.Unmarshal(src, &s)
	rows, err := d.readRows(ctx, src, format)
	return rows, s.Type == "http", err
}

func (d *Druid) readRows(ctx context.Context, src, format json.RawMessage) ([]map[string]any, error) {
	var s inputSource
	if err := json.Unmarshal(src, &s); err != nil {
		return nil, fmt.Errorf("inputSource: %w", err)
	}
	var f struct{ Type string }
	if err := json.Unmarshal(format, &f); err != nil {
		return nil, fmt.Errorf("inputFormat: %w", err)
	}
	var bodies [][]byte
	switch s.Type {
	case "inline":
		if s.Data == "" {
			return nil, errors.New("inline inputSource: empty data")
		}
		bodies = append(bodies, []byte(s.Data))
	case "http":
		if len(s.URIs) == 0 {
			return nil, errors.New("http inputSource: uris is empty")
		}
		var err error
		if bodies, err = d.fetchAll(ctx, s); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("inputSource type %q", s.Type)
	}
	var out []map[string]any
	for _, b := range bodies {
		var lines []string
		switch f.Type {
		case "json":
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" {
					lines = append(lines, l)
				}
			}
		case "parquet":
			var err error
			if lines, err = tablegen.ParquetRows(ctx, b); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("inputFormat type %q", f.Type)
		}
		for _, l := range lines {
			dec := json.NewDecoder(strings.NewReader(l))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				return nil, fmt.Errorf("row %q: %w", l, err)
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// DatasourceRows are the rows that a datasource holds after ingesting the
// NDJSON lines with __time from timeColumn (epoch milliseconds), as
// Row.String spells them, sorted: a line without a time is left out, as
// Druid never ingests one. Compare them with Rows of the model.
func DatasourceRows(lines []string, timeColumn string) ([]string, error) {
	var out []string
	for _, line := range lines {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("row %q: %w", line, err)
		}
		v, ok := obj[timeColumn].(json.Number)
		if !ok {
			continue
		}
		ms, err := v.Int64()
		if err != nil {
			return nil, fmt.Errorf("row %q: %s: %w", line, timeColumn, err)
		}
		out = append(out, Row{Time: ms, Columns: obj}.String())
	}
	slices.Sort(out)
	return out, nil
}

// RowStrings are the datasource's rows as Row.String spells them, sorted.
func (d *Druid) RowStrings(dataSource string) []string {
	var out []string
	for _, r := range d.Rows(dataSource) {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}
