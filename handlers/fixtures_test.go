package handlers_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/sidecartest"
)

// fixture is a sidecartest.Fixture under the names of this package's
// tests.
type fixture struct{ sidecartest.Fixture }

// loadFixtures is sidecartest.LoadFixtures.
func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	var out []fixture
	for _, f := range sidecartest.LoadFixtures(t) {
		out = append(out, fixture{f})
	}
	return out
}

// namedFixture is sidecartest.NamedFixture.
func namedFixture(t testing.TB, name string) fixture {
	t.Helper()
	return fixture{sidecartest.NamedFixture(t, name)}
}

// server is sidecartest.Fixture.Server.
func (f fixture) server(t testing.TB) *testServer {
	t.Helper()
	return wrap(f.Server(t))
}

// mappings is sidecartest.Fixture.Mappings.
func (f fixture) mappings() []sidecatalog.Mapping { return f.Mappings() }

// TestFixtures serves every engine-written table through the HTTP API and
// holds its rows against expected.json, and its time-travel counts.
func TestFixtures(t *testing.T) {
	t.Parallel()
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			srv := f.server(t)
			p := srv.plan(t, q("table", "fixtures.t", "mode", "rows"))
			got := srv.rows(t, p)
			if len(got) != f.Expected.RowCount {
				t.Fatalf("got %d rows, want %d", len(got), f.Expected.RowCount)
			}
			// dremio's fixture publishes its row count only (see its
			// expected.source); for it the count above is the row check.
			if f.Expected.Rows != nil {
				want := make([]string, 0, len(f.Expected.Rows))
				for _, r := range f.Expected.Rows {
					want = append(want, sidecartest.MustJSON(r))
				}
				gotRows := make([]string, 0, len(got))
				for _, line := range got {
					gotRows = append(gotRows, fixtureRow(t, line, f.Expected.Columns, f.Expected.Rows))
				}
				slices.Sort(want)
				slices.Sort(gotRows)
				if !slices.Equal(gotRows, want) {
					t.Fatalf("rows differ\n got: %v\nwant: %v", gotRows, want)
				}
			}

			// auto mode takes the row path whenever a delete file applies,
			// and only then: these engines' files read raw as Iceberg reads
			// them (no rename, sanitized name or name mapping).
			checkAuto := func(query url.Values) {
				t.Helper()
				auto := srv.plan(t, query)
				deletes := 0
				for _, s := range auto.Splits {
					deletes += s.PositionDeleteFiles + s.EqualityDeleteFiles + s.DeletionVectorFiles
				}
				if wantMode := map[bool]string{true: "v2", false: "v1"}[deletes > 0]; auto.Mode != wantMode {
					t.Fatalf("auto mode (%s) is %s with %d delete files; warnings %q", query.Encode(), auto.Mode, deletes, auto.Warnings)
				}
			}
			checkAuto(q("table", "fixtures.t"))
			for _, c := range f.ExtraChecks {
				checkAuto(q("table", "fixtures.t", "snapshotId", strconv.FormatInt(c.SnapshotID, 10)))
			}

			for _, c := range f.ExtraChecks {
				p := srv.plan(t, q("table", "fixtures.t", "mode", "rows", "snapshotId", strconv.FormatInt(c.SnapshotID, 10)))
				if p.SnapshotID == nil || *p.SnapshotID != c.SnapshotID {
					t.Fatalf("planned snapshot %v, want %d", p.SnapshotID, c.SnapshotID)
				}
				if n := len(srv.rows(t, p)); n != c.RowCount {
					t.Fatalf("snapshot %d: got %d rows, want %d", c.SnapshotID, n, c.RowCount)
				}
			}
		})
	}
}

// fixtureRow renders an NDJSON row in the fixture's notation: values in the
// expected column order, with epoch-millisecond dates and timestamps shown as
// the fixture writes them (decided by the shape of the expected value in the
// same column).
func fixtureRow(t *testing.T, line string, columns []string, expected [][]any) string {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(line), &obj); err != nil {
		t.Fatal(err)
	}
	if len(obj) != len(columns) {
		t.Fatalf("row %s has %d keys, want columns %v", line, len(obj), columns)
	}
	out := make([]any, len(columns))
	for i, c := range columns {
		v, ok := obj[c]
		if !ok {
			t.Fatalf("row %s lacks column %s", line, c)
		}
		if ms, isNum := v.(float64); isNum {
			switch sampleString(expected, i) {
			case 10:
				v = time.UnixMilli(int64(ms)).UTC().Format("2006-01-02")
			case 19:
				v = time.UnixMilli(int64(ms)).UTC().Format("2006-01-02 15:04:05")
			}
		}
		out[i] = v
	}
	return sidecartest.MustJSON(out)
}

// sampleString returns the length of the first string value in column i of
// the expected rows that looks like a date or timestamp, or 0.
func sampleString(rows [][]any, i int) int {
	for _, r := range rows {
		if s, ok := r[i].(string); ok && len(s) >= 10 && strings.Count(s[:10], "-") == 2 {
			return len(s)
		}
	}
	return 0
}
