package splits_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
)

// fixtureReplica is a replica over the engine-written fixture table name of
// testdata/fixtures (read-only: see its README) as fixtures.t, through the
// static catalog with a location map from every prefix written in its
// metadata onto its folder.
func fixtureReplica(t *testing.T, name string) *servetest.Replica {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var f struct {
		Metadata         string   `json:"metadata"`
		LocationPrefixes []string `json:"location_prefixes"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	cfg := catalog.Config{Type: "static", Tables: map[string]string{"fixtures.t": filepath.Join(dir, f.Metadata)}}
	for _, p := range f.LocationPrefixes {
		cfg.LocationMap = append(cfg.LocationMap, catalog.Mapping{From: p, To: dir})
	}
	return servetest.New(t, catalogtest.Open(t, cfg), nil)
}

// TestProjection: Columns narrows the rows to those keys, in schema order,
// whatever order the request names them in.
func TestProjection(t *testing.T) {
	// A partitioned engine-written table (id, user, action, event_time)
	// with positional deletes.
	r := fixtureReplica(t, "impala__iceberg_v2_partitioned_position_deletes")
	all := r.Rows(t, r.Plan(t, splits.Request{Table: "fixtures.t"}))
	got := r.Rows(t, r.Plan(t, splits.Request{Table: "fixtures.t", Columns: []string{"event_time", "id"}}))
	if len(got) != len(all) || len(got) == 0 {
		t.Fatalf("projection gave %d rows, the full read %d", len(got), len(all))
	}
	for i, line := range got {
		if !strings.HasPrefix(line, `{"id":`) || !strings.Contains(line, `,"event_time":`) || strings.Count(line, `":`) != 2 {
			t.Fatalf("row %q: want exactly id then event_time", line)
		}
		var full, proj map[string]any
		if err := json.Unmarshal([]byte(all[i]), &full); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(line), &proj); err != nil {
			t.Fatal(err)
		}
		if proj["id"] != full["id"] || proj["event_time"] != full["event_time"] {
			t.Fatalf("projected row %s differs from %s", line, all[i])
		}
	}
}
