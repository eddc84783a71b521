package handlers

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
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

func TestMSQHostileNames(t *testing.T) {
	hostile := []string{
		`a"b`, `x" FROM y --`, `it's`, `back\slash\`, "new\nline", `'; DROP TABLE t; --`, `""`, `''`, "\u2028 sep", `\'`,
	}
	var fields []iceberg.NestedField
	for i, n := range hostile {
		fields = append(fields, iceberg.NestedField{ID: i + 1, Name: n, Type: iceberg.PrimitiveTypes.String})
	}
	fields = append(fields, iceberg.NestedField{ID: 99, Name: `ts"'\`, Type: iceberg.PrimitiveTypes.TimestampTz})
	target := specTarget{
		dataSource: `ds"; DELETE FROM x; '`,
		timeField:  fields[len(fields)-1],
		fields:     fields,
		resp: splitsResponse{
			InputSource: inputSource{Type: "http", URIs: []string{"http://sidecar/splits/a'b/rows"}},
			InputFormat: inputFormat{Type: "json"},
		},
	}
	head := "REPLACE INTO " + sqlIdent(target.dataSource) + " OVERWRITE ALL"
	sql, err := msqStatement(head, target, "DAY")
	if err != nil {
		t.Fatal(err)
	}
	skeleton, idents, strs := sqlSkeleton(t, sql)
	want := "REPLACE INTO I OVERWRITE ALL\nSELECT\n  MILLIS_TO_TIMESTAMP(I) AS I,\n  " +
		strings.Repeat("I,\n  ", len(fields)-1) + "I\nFROM TABLE(\n  EXTERN(\n    S,\n    S,\n    S\n  )\n)\nPARTITIONED BY DAY"
	if skeleton != want {
		t.Fatalf("a name changed the statement's shape:\n%s\nwant\n%s", skeleton, want)
	}
	if idents[0] != target.dataSource || idents[1] != `ts"'\` || idents[2] != "__time" {
		t.Fatalf("identifiers decode to %q", idents[:3])
	}
	for i, n := range hostile {
		if idents[3+i] != n {
			t.Fatalf("column %d decodes to %q, want %q", i, idents[3+i], n)
		}
	}
	if !strings.Contains(strs[0], "a'b") || !strings.Contains(strs[2], `x\" FROM y --`) {
		t.Fatalf("EXTERN arguments decode to %q", strs)
	}
}

// FuzzParseRange: any Range header is parsed into a valid byte range or
// refused with 416, never a panic or a range that ends before it starts.
func FuzzParseRange(f *testing.F) {
	for _, seed := range []string{"", "bytes=0-", "bytes=10-20", "bytes=-5", "bytes=1-2,3-4", "bytes=9223372036854775807-", "items=0-1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		br, ok, err := parseRange(h)
		switch {
		case err != nil:
			if ae := toAPIError(err); ae.Status != 416 {
				t.Fatalf("%q: status %d, want 416", h, ae.Status)
			}
		case ok:
			if br.start < 0 || (br.end >= 0 && br.end < br.start) {
				t.Fatalf("%q parsed to %+v", h, br)
			}
		case h != "":
			t.Fatalf("%q: neither a range nor an error", h)
		}
	})
}
