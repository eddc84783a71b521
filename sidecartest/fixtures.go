package sidecartest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
)

// Fixture is a table of testdata/fixtures with the rows a correct reader
// returns (see that folder's README).
type Fixture struct {
	Name             string
	Dir              string
	Metadata         string   `json:"metadata"`
	LocationPrefixes []string `json:"location_prefixes"`
	Expected         struct {
		RowCount int      `json:"row_count"`
		Columns  []string `json:"columns"`
		Rows     [][]any  `json:"rows"`
	} `json:"expected"`
	ExtraChecks []struct {
		SnapshotID int64 `json:"snapshot_id"`
		RowCount   int   `json:"row_count"`
	} `json:"extra_checks"`
}

// FixturesDir is the folder of the engine-written fixture tables
// (testdata/fixtures at the top of the module, read-only: see its README).
func FixturesDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no source path for the fixtures folder")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "fixtures")
}

// LoadFixtures is every fixture of testdata/fixtures.
func LoadFixtures(t testing.TB) []Fixture {
	t.Helper()
	root := FixturesDir(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("read fixtures: %v", err)
	}
	var out []Fixture
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, e.Name(), "expected.json"))
		if err != nil {
			t.Fatalf("fixture %s: %v", e.Name(), err)
		}
		f := Fixture{Name: e.Name(), Dir: filepath.Join(root, e.Name())}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("fixture %s: %v", e.Name(), err)
		}
		out = append(out, f)
	}
	if len(out) < 9 {
		t.Fatalf("found %d fixtures, want all 9 of testdata/fixtures", len(out))
	}
	return out
}

// NamedFixture is one fixture by folder name.
func NamedFixture(t testing.TB, name string) Fixture {
	t.Helper()
	for _, f := range LoadFixtures(t) {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("fixture %s missing from testdata/fixtures", name)
	return Fixture{}
}

// Server serves the fixture as the table fixtures.t through the static
// catalog and a location map from every prefix written in its metadata
// onto its folder.
func (f Fixture) Server(t testing.TB) *Server {
	t.Helper()
	return NewServer(t, sidecatalog.Config{
		Type:   "static",
		Tables: map[string]string{"fixtures.t": filepath.Join(f.Dir, f.Metadata)},
	}, f.Mappings())
}

// Mappings map every location prefix written in the fixture onto its
// folder.
func (f Fixture) Mappings() []sidecatalog.Mapping {
	var maps []sidecatalog.Mapping
	for _, p := range f.LocationPrefixes {
		maps = append(maps, sidecatalog.Mapping{From: p, To: f.Dir})
	}
	return maps
}
