package reader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

const fixturesDir = "../testdata/fixtures"

// fixture is a fixture's expected.json.
type fixture struct {
	Metadata         string   `json:"metadata"`
	LocationPrefixes []string `json:"location_prefixes"`
	Expected         struct {
		RowCount int               `json:"row_count"`
		Columns  []string          `json:"columns"`
		Rows     []json.RawMessage `json:"rows"`
	} `json:"expected"`
	ExtraChecks []struct {
		SnapshotID int64 `json:"snapshot_id"`
		RowCount   int   `json:"row_count"`
	} `json:"extra_checks"`
}

// TestFixtures reads every engine-written fixture table through planning,
// splits and the reader, and holds the live rows against the fixture's
// expected multiset and its time-travel row counts.
func TestFixtures(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(fixturesDir, "*", "expected.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures under %s: %v", fixturesDir, err)
	}
	for _, exp := range dirs {
		dir, err := filepath.Abs(filepath.Dir(exp))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			var fx fixture
			raw, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			tbl, fs := loadFixture(t, ctx, dir, fx)

			snap := tbl.CurrentSnapshot()
			got, stats := readSnapshot(t, ctx, tbl, fs, snap.SnapshotID, newReader(fs))
			if len(got) != fx.Expected.RowCount {
				t.Errorf("current snapshot: got %d rows, want %d", len(got), fx.Expected.RowCount)
			}
			if stats.RowsEmitted != int64(len(got)) {
				t.Errorf("stats say %d rows emitted, stream had %d", stats.RowsEmitted, len(got))
			}
			deleted := int64(0)
			for _, n := range stats.RowsDeleted {
				deleted += n
			}
			if stats.RowsRead != stats.RowsEmitted+deleted {
				t.Errorf("stats: read %d != emitted %d + deleted %d", stats.RowsRead, stats.RowsEmitted, deleted)
			}
			if fx.Expected.Rows != nil {
				schema := snapshotSchema(t, tbl, snap.SnapshotID)
				want := make([]string, 0, len(fx.Expected.Rows))
				for _, r := range fx.Expected.Rows {
					want = append(want, canonicalJSON(t, r))
				}
				have := make([]string, 0, len(got))
				for _, row := range got {
					have = append(have, fixtureRow(t, row, schema, fx.Expected.Columns))
				}
				slices.Sort(want)
				slices.Sort(have)
				if !slices.Equal(have, want) {
					t.Errorf("rows differ:\n got  %s\n want %s", strings.Join(have, " "), strings.Join(want, " "))
				}
			}
			for _, ec := range fx.ExtraChecks {
				rows, _ := readSnapshot(t, ctx, tbl, fs, ec.SnapshotID, newReader(fs))
				if len(rows) != ec.RowCount {
					t.Errorf("snapshot %d: got %d rows, want %d", ec.SnapshotID, len(rows), ec.RowCount)
				}
			}
			if strings.HasPrefix(filepath.Base(dir), "dremio-oss__") {
				checkDremio(t, got)
			}
		})
	}
}

// loadFixture loads a fixture table read-only, with every location prefix
// it was written under mapped onto its folder.
func loadFixture(t *testing.T, ctx context.Context, dir string, fx fixture) (*table.Table, *catalog.FS) {
	t.Helper()
	var maps []catalog.Mapping
	for _, p := range fx.LocationPrefixes {
		maps = append(maps, catalog.Mapping{From: p, To: dir})
	}
	fs := catalog.NewFS(nil, maps)
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"fixtures", filepath.Base(dir)},
		filepath.Join(dir, fx.Metadata),
		func(context.Context) (icebergio.IO, error) { return fs, nil }, nil)
	if err != nil {
		t.Fatalf("load table: %v", err)
	}
	return tbl, fs
}

func snapshotSchema(t *testing.T, tbl *table.Table, snapshotID int64) *iceberg.Schema {
	t.Helper()
	snap := tbl.SnapshotByID(snapshotID)
	if snap == nil {
		t.Fatalf("no snapshot %d", snapshotID)
	}
	if snap.SchemaID != nil {
		if s, ok := tbl.Schemas()[*snap.SchemaID]; ok {
			return s
		}
	}
	return tbl.Schema()
}

// readSnapshot plans a snapshot, turns every task into a split and reads
// it; it returns the decoded rows and the summed stats.
func readSnapshot(t *testing.T, ctx context.Context, tbl *table.Table, fs icebergio.IO, snapshotID int64, r fsReader) ([]map[string]any, reader.Stats) {
	t.Helper()
	schema := snapshotSchema(t, tbl, snapshotID)
	tasks, err := tbl.Scan(table.WithSnapshotID(snapshotID)).PlanFiles(ctx)
	if err != nil {
		t.Fatalf("plan snapshot %d: %v", snapshotID, err)
	}
	var rows []map[string]any
	total := reader.Stats{RowsDeleted: map[token.DeleteKind]int64{}}
	for _, task := range tasks {
		s, err := splits.FromTask(tbl.Metadata(), tbl.MetadataLocation(), snapshotID, schema.ID, task)
		if err != nil {
			t.Fatal(err)
		}
		out, st := runSplit(t, ctx, r, s, token.TableSchema{Schema: schema, NameMapping: tbl.Metadata().NameMapping()})
		rows = append(rows, decodeLines(t, out)...)
		total.RowsRead += st.RowsRead
		total.RowsEmitted += st.RowsEmitted
		for k, v := range st.RowsDeleted {
			total.RowsDeleted[k] += v
		}
	}
	return rows, total
}

// runSplit opens and runs one split, checking the NDJSON framing.
func runSplit(t *testing.T, ctx context.Context, r fsReader, s token.Split, ts token.TableSchema) ([]byte, reader.Stats) {
	t.Helper()
	st, err := r.Open(ctx, s, ts)
	if err != nil {
		t.Fatalf("open split %s: %v", s.Data.Path, err)
	}
	var buf bytes.Buffer
	flushes := 0
	if err := st.Run(ctx, &buf, func() error { flushes++; return nil }); err != nil {
		t.Fatalf("run split %s: %v", s.Data.Path, err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close split %s: %v", s.Data.Path, err)
	}
	if buf.Len() > 0 && flushes == 0 {
		t.Errorf("split %s: rows written without a flush", s.Data.Path)
	}
	out := buf.Bytes()
	if len(out) > 0 && out[len(out)-1] != '\n' {
		t.Errorf("split %s: output does not end with a newline", s.Data.Path)
	}
	if bytes.Contains(out, []byte("\n\n")) || bytes.HasPrefix(out, []byte("\n")) {
		t.Errorf("split %s: blank line in output", s.Data.Path)
	}
	return out, st.Stats()
}

// decodeLines parses NDJSON, keeping numbers exact.
func decodeLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for line := range bytes.Lines(out) {
		if !json.Valid(line) {
			t.Fatalf("invalid JSON line %q", line)
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("decode %q: %v", line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// fixtureRow converts one emitted row to the fixture's row form: an array
// in the expected column order, with dates and timestamps as UTC strings.
func fixtureRow(t *testing.T, row map[string]any, schema *iceberg.Schema, columns []string) string {
	t.Helper()
	out := make([]any, len(columns))
	for i, name := range columns {
		v, ok := row[name]
		if !ok {
			t.Fatalf("row %v has no column %s", row, name)
		}
		f, ok := schema.FindFieldByName(name)
		if !ok {
			t.Fatalf("schema has no column %s", name)
		}
		if n, isNum := v.(json.Number); isNum {
			switch f.Type.(type) {
			case iceberg.DateType:
				ms, _ := n.Int64()
				v = time.UnixMilli(ms).UTC().Format("2006-01-02")
			case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
				ms, _ := n.Int64()
				v = time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
			}
		}
		out[i] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return canonicalJSON(t, b)
}

// canonicalJSON re-encodes a JSON value so equal values compare equal as
// strings.
func canonicalJSON(t *testing.T, raw []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkDremio holds the Dremio table's rows against the generator's delete
// predicates, since its fixture lists only a row count.
func checkDremio(t *testing.T, rows []map[string]any) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rows {
		id, _ := r["order_id"].(json.Number).Int64()
		year, _ := r["order_year"].(json.Number).Int64()
		key := fmt.Sprint(year, "/", id)
		if seen[key] {
			t.Errorf("order %s emitted twice", key)
		}
		seen[key] = true
		if year == 2021 && (id%10 < 3 || id%100 == 5) {
			t.Errorf("order %d of 2021 should be deleted", id)
		}
		if (year == 2020 || year == 2021) && id%3000 >= 700 && id%3000 < 1200 {
			t.Errorf("order %d of %d should be deleted", id, year)
		}
	}
}
