package druid_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/druidiceberg/sidecar/druid"
)

// sqlSkeleton walks a Druid SQL statement and returns it with every quoted
// identifier replaced by I and every string literal by S, and the decoded
// contents of both. A name that broke out of its quotes would change the
// skeleton.
func sqlSkeleton(t *testing.T, sql string) (skeleton string, idents, strs []string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		if c != '"' && c != '\'' {
			b.WriteByte(c)
			continue
		}
		var val strings.Builder
		closed := false
		for i++; i < len(sql); i++ {
			if sql[i] == c {
				if i+1 < len(sql) && sql[i+1] == c {
					val.WriteByte(c)
					i++
					continue
				}
				closed = true
				break
			}
			val.WriteByte(sql[i])
		}
		if !closed {
			t.Fatalf("unterminated quote in %q", sql)
		}
		if c == '"' {
			b.WriteString("I")
			idents = append(idents, val.String())
		} else {
			b.WriteString("S")
			strs = append(strs, val.String())
		}
	}
	return b.String(), idents, strs
}

var hostile = []string{
	`a"b`, `x" FROM y --`, `it's`, `back\slash\`, "new\nline", `'; DROP TABLE t; --`, `""`, `''`, "\u2028 sep", `\'`,
}

// hostileSource serves a string column for every hostile name and a time
// column with a hostile name too.
func hostileSource() druid.Source {
	var fields []iceberg.NestedField
	for i, n := range hostile {
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: n, Type: iceberg.PrimitiveTypes.String})
	}
	tf := iceberg.NestedField{ID: 99, Name: `ts"') --`, Type: iceberg.PrimitiveTypes.TimestampTz}
	fields = append(fields, tf)
	return druid.Source{
		InputSource: druid.HTTPInputSource{Type: "http", URIs: []string{"http://sidecar/splits/a'b/rows"}},
		InputFormat: druid.InputFormat{Type: "json"},
		Fields:      fields, TimeField: tf,
	}
}

// TestStatementHostileNames: every name stays a quoted identifier and every
// literal a string, whatever they hold: the statement's shape does not
// move, and names decode to themselves.
func TestStatementHostileNames(t *testing.T) {
	src := hostileSource()
	day := druid.Interval{Start: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC)}
	cols := strings.Repeat("I,\n  ", len(src.Fields)-1) + "I\nFROM TABLE(\n  EXTERN(\n    S,\n    S,\n    S\n  )\n)\n"
	for _, tc := range []struct {
		st       druid.Statement
		skeleton string
	}{
		{druid.Statement{Replace: true, DataSource: `ds"; DELETE FROM x; '`, PartitionedBy: druid.GranularityDay, Overwrite: day},
			"REPLACE INTO I OVERWRITE WHERE I >= TIMESTAMP S AND I < TIMESTAMP S\nSELECT\n  MILLIS_TO_TIMESTAMP(I) AS I,\n  " + cols +
				"WHERE MILLIS_TO_TIMESTAMP(I) >= TIMESTAMP S AND MILLIS_TO_TIMESTAMP(I) < TIMESTAMP S\nPARTITIONED BY DAY"},
		{druid.Statement{Replace: true, DataSource: `ds"; DELETE FROM x; '`, PartitionedBy: druid.GranularityWeek},
			"REPLACE INTO I OVERWRITE ALL\nSELECT\n  MILLIS_TO_TIMESTAMP(I) AS I,\n  " + cols +
				"WHERE I IS NOT NULL\nPARTITIONED BY TIME_FLOOR(I, S)"},
		{druid.Statement{DataSource: `ds"; DELETE FROM x; '`, PartitionedBy: druid.GranularityAll},
			"INSERT INTO I\nSELECT\n  MILLIS_TO_TIMESTAMP(I) AS I,\n  " + cols + "WHERE I IS NOT NULL\nPARTITIONED BY ALL TIME"},
	} {
		sql, err := tc.st.SQL(src)
		if err != nil {
			t.Fatal(err)
		}
		skeleton, idents, strs := sqlSkeleton(t, sql)
		if skeleton != tc.skeleton {
			t.Fatalf("a name changed the statement's shape:\n%s\nwant\n%s", skeleton, tc.skeleton)
		}
		if idents[0] != tc.st.DataSource {
			t.Fatalf("the datasource decodes to %q", idents[0])
		}
		// The columns follow `… AS "__time"`, the last __time before them.
		first := 0
		for i, id := range idents {
			if id == "__time" && i+1 < len(idents) && idents[i+1] == hostile[0] {
				first = i + 1
			}
		}
		for i, n := range hostile {
			if got := idents[first+i]; got != n {
				t.Fatalf("column %d decodes to %q, want %q", i, got, n)
			}
		}
		if !strings.Contains(strings.Join(strs, "\x00"), "a'b") || !strings.Contains(strings.Join(strs, "\x00"), `x\" FROM y --`) {
			t.Fatalf("EXTERN arguments decode to %q", strs)
		}
	}
}

// TestStatementCheck: what Druid's SQL layer refuses is refused before
// anything is planned, with a message that says why.
func TestStatementCheck(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	day := druid.Interval{Start: at("2024-03-01T00:00:00Z"), End: at("2024-03-02T00:00:00Z")}
	for _, tc := range []struct {
		name string
		st   druid.Statement
		want string
	}{
		{"no datasource", druid.Statement{Replace: true, PartitionedBy: druid.GranularityDay}, "dataSource is required"},
		{"bounded with ALL TIME", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityAll, Overwrite: day},
			"PARTITIONED BY ALL TIME"},
		{"start not aligned", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityDay,
			Overwrite: druid.Interval{Start: at("2024-03-01T06:00:00Z"), End: at("2024-03-02T00:00:00Z")}}, "not aligned to partitionedBy DAY"},
		{"end not aligned to a month", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityMonth, Overwrite: day},
			"2024-03-01T00:00:00.000Z/2024-04-01T00:00:00.000Z"},
		{"a week starts on Monday", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityWeek,
			Overwrite: druid.Interval{Start: at("2024-03-01T00:00:00Z"), End: at("2024-03-08T00:00:00Z")}}, "not aligned to partitionedBy WEEK"},
		{"backwards", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityDay,
			Overwrite: druid.Interval{Start: day.End, End: day.Start}}, "ends before it starts"},
		{"INSERT with an interval", druid.Statement{DataSource: "d", PartitionedBy: druid.GranularityDay, Overwrite: day}, "statement=replace"},
		{"a 9-digit year", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityDay,
			Overwrite: druid.Interval{Start: day.Start, End: day.Start.AddDate(100_000_000, 0, 0)}}, "four-digit year"},
		{"a year before 0", druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityDay,
			Overwrite: druid.Interval{Start: day.Start.AddDate(-3000, 0, 0), End: day.Start}}, "four-digit year"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.st.Check()
			if !errors.Is(err, druid.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v; want ErrInvalid naming %q", err, tc.want)
			}
			if _, err := tc.st.SQL(hostileSource()); !errors.Is(err, druid.ErrInvalid) {
				t.Fatalf("SQL: %v; want the same refusal", err)
			}
		})
	}
	ok := druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityWeek,
		Overwrite: druid.Interval{Start: at("2024-03-04T00:00:00Z"), End: at("2024-03-18T00:00:00Z")}}
	if err := ok.Check(); err != nil {
		t.Fatalf("two weeks from a Monday: %v", err)
	}
}

// TestNothingToRead: a plan without a URI never becomes an http
// inputSource with an empty uris list; a REPLACE reads the empty stand-in
// and says which Druid it needs, an INSERT and a task without an interval
// are refused.
func TestNothingToRead(t *testing.T) {
	src := hostileSource()
	src.InputSource = druid.HTTPInputSource{Type: "http", URIs: []string{}}
	day := druid.Interval{Start: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 3, 0, 0, 0, 0, time.UTC)}
	replace := druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityDay, Overwrite: day}
	if _, err := replace.SQL(src); !errors.Is(err, druid.ErrNothingToRead) {
		t.Fatalf("a statement over an empty uris list: %v", err)
	}
	if _, err := (druid.Task{DataSource: "d", SegmentGranularity: druid.GranularityDay, SubTasks: 1}).Spec(src); !errors.Is(err, druid.ErrNothingToRead) {
		t.Fatalf("a task over an empty uris list: %v", err)
	}
	empty := src.EmptySource(day.Start)
	sql, err := replace.SQL(empty)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sql, `"type":"inline"}'`) || replace.Context(empty)["failOnEmptyInsert"] != false {
		t.Fatalf("the empty REPLACE reads %s with context %v", sql, replace.Context(empty))
	}
	if w := replace.Warnings(empty); len(w) != 1 || !strings.Contains(w[0], "Druid "+druid.VersionEmptyReplace) {
		t.Fatalf("warnings %q", w)
	}
	if _, err := (druid.Statement{DataSource: "d", PartitionedBy: druid.GranularityDay}).SQL(src.EmptySource(time.Time{})); !errors.Is(err, druid.ErrNothingToRead) {
		t.Fatalf("an INSERT of nothing: %v", err)
	}
	if _, err := (druid.Task{DataSource: "d", SegmentGranularity: druid.GranularityDay, SubTasks: 1}).Spec(src.EmptySource(time.Time{})); !errors.Is(err, druid.ErrNothingToRead) {
		t.Fatalf("a task of nothing without an interval: %v", err)
	}
	if _, err := (druid.Task{DataSource: "d", SegmentGranularity: druid.GranularityDay, SubTasks: 1, Interval: day}).Spec(empty); err != nil {
		t.Fatalf("a task that empties its interval: %v", err)
	}
	if ctx := (druid.Statement{Replace: true, DataSource: "d", PartitionedBy: druid.GranularityDay}).Context(hostileSource()); ctx["sqlTimeZone"] != "UTC" {
		t.Fatalf("context %v", ctx)
	}
}
