package druid

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MaxPartitionBuckets is the most time chunks one MSQ INSERT or REPLACE
// writes (Limits.MAX_PARTITION_BUCKETS in the multi-stage-query extension;
// more fail the statement with TooManyBuckets).
const MaxPartitionBuckets = 5000

// Part is one interval a REPLACE overwrites, and the rows that replace it:
// a Source that serves only rows within the interval.
type Part struct {
	Interval Interval
	Source   Source
}

// Batch is one REPLACE that overwrites several intervals, the body of
// POST /druid/v2/sql/task.
type Batch struct {
	Intervals []Interval
	Query     string
	Context   map[string]any
}

// Batches merges the REPLACEs of parts, sorted and disjoint intervals of
// one table and datasource, into as few statements as Druid takes, in
// order. Parts read alike (one format, one set of columns) share a
// statement; one statement overwrites an OR of aligned intervals (OVERWRITE
// WHERE: DruidSqlParserUtils.convertQueryToDimFilter reads AND, OR and
// NOT of comparisons with TIMESTAMP literals, and
// validateQueryAndConvertToIntervals checks each interval's alignment),
// and reads the URIs of all of them at once; each statement covers at most
// MaxPartitionBuckets time chunks and is at most MaxPayloadBytes. An ALL
// part is a statement of its own. st gives the datasource, PARTITIONED BY
// and AllowEmpty; its Overwrite is not read.
func (st Statement) Batches(parts []Part) ([]Batch, error) {
	if !st.Replace {
		return nil, fmt.Errorf("%w: only a REPLACE overwrites intervals", ErrInvalid)
	}
	buckets := make([]int, len(parts))
	for i, p := range parts {
		one := st
		one.Overwrite = p.Interval
		if err := one.Check(); err != nil {
			return nil, err
		}
		if i > 0 && !p.Interval.All() && !parts[i-1].Interval.All() && p.Interval.Start.Before(parts[i-1].Interval.End) {
			return nil, fmt.Errorf("%w: intervals %s and %s are not sorted and disjoint", ErrInvalid, parts[i-1].Interval, p.Interval)
		}
		buckets[i] = st.PartitionedBy.chunks(p.Interval)
	}
	rs := reads(parts)
	var out []Batch
	for i := 0; i < len(parts); {
		// The most parts from i one statement takes: a statement only
		// grows with each part, so the first that does not fit ends it.
		var last Batch
		fits := func(n int) (bool, error) {
			total := 0
			for j := i; j < i+n; j++ {
				if n > 1 && parts[j].Interval.All() {
					return false, nil
				}
				total += buckets[j]
			}
			if n > 1 && total > MaxPartitionBuckets {
				return false, nil
			}
			b, err := st.batch(parts[i:i+n], rs[i:i+n])
			if n > 1 && errors.Is(err, errApart) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if n > 1 && len(b.Query) > MaxPayloadBytes {
				return false, nil
			}
			last = b
			return true, nil
		}
		lo, hi := 1, 1 // parts[i:i+lo] fit; parts[i:i+hi+1] is the next to try
		if _, err := fits(1); err != nil {
			return nil, err
		}
		good := last
		for step := 1; ; step *= 2 {
			n := min(lo+step, len(parts)-i)
			if n == lo {
				break
			}
			ok, err := fits(n)
			if err != nil {
				return nil, err
			}
			if !ok {
				hi = n
				break
			}
			lo, good = n, last
		}
		for hi > lo+1 {
			mid := (lo + hi) / 2
			ok, err := fits(mid)
			if err != nil {
				return nil, err
			}
			if ok {
				lo, good = mid, last
			} else {
				hi = mid
			}
		}
		if err := checkPayload("statement", len(good.Query)); err != nil {
			return nil, err
		}
		out = append(out, good)
		i += lo
	}
	return out, nil
}

// batch renders one REPLACE of the parts.
func (st Statement) batch(parts []Part, reads []read) (Batch, error) {
	src, err := union(parts, reads)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{}
	for _, p := range parts {
		if !p.Interval.All() {
			b.Intervals = append(b.Intervals, p.Interval)
		}
	}
	if b.Query, err = st.render(b.Intervals, src); err != nil {
		return Batch{}, err
	}
	if len(b.Intervals) == 0 {
		b.Intervals = []Interval{{}}
	}
	b.Context = st.Context(src)
	return b, nil
}

// errApart: parts that one statement cannot read together (mode=auto
// serves one interval as raw Parquet files, another on the row path).
var errApart = errors.New("the parts are read differently")

// read is how a part's rows are read, worked out once for all the
// statements it may join: what must be the same for two parts to share a
// statement (the inputSource's properties but its URIs, the format, the
// columns).
type read struct {
	empty bool
	alike string
}

// reads works out every part's read.
func reads(parts []Part) []read {
	out := make([]read, len(parts))
	for i, p := range parts {
		s := p.Source
		if s.empty() {
			out[i].empty = true
			continue
		}
		props := s.InputSource
		props.URIs = nil
		var cols []string
		for _, c := range s.Columns() {
			cols = append(cols, c.Name+" "+c.Extern)
		}
		// Plain values always encode.
		alike, _ := json.Marshal([]any{props, s.InputFormat, cols, s.TimeField.Name, s.Encoding})
		out[i].alike = string(alike)
	}
	return out
}

// union is the source that reads every part's rows: their http
// inputSources' URIs in one list. Parts read otherwise (other columns,
// format or inputSource properties than the URIs) are errApart. A part
// without rows adds none; when no part has any, the first part's empty
// stand-in is the source.
func union(parts []Part, rs []read) (Source, error) {
	first := -1
	n := 0
	for i, r := range rs {
		switch {
		case r.empty:
			continue
		case first >= 0 && r.alike != rs[first].alike:
			return Source{}, fmt.Errorf("%w: %s and %s", errApart, parts[first].Interval, parts[i].Interval)
		}
		if first < 0 {
			first = i
		}
		n++
	}
	switch {
	case first < 0:
		return parts[0].Source, nil
	case n == 1:
		return parts[first].Source, nil
	}
	var uris []string
	for _, p := range parts {
		if !p.Source.empty() {
			uris = append(uris, p.Source.InputSource.URIs...)
		}
	}
	out := parts[first].Source
	out.InputSource.URIs = uris
	return out, nil
}

// chunks counts the granularity's time chunks in iv, up to one more than
// MaxPartitionBuckets; ALL is one.
func (g Granularity) chunks(iv Interval) int {
	if iv.All() || g == GranularityAll {
		return 1
	}
	n := 0
	for at := g.Floor(iv.Start); at.Before(iv.End) && n <= MaxPartitionBuckets; at = g.Next(at) {
		n++
	}
	return n
}
