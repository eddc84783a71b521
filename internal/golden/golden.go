// Package golden holds a test's output to a golden file in testdata/, and
// rewrites the file instead when the tests run with -update. Only tests
// import it; importing it adds the -update flag to the test binary.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from what the tests produce")

// maxLines is how many differing lines Check shows.
const maxLines = 20

// Check fails t unless got equals the golden file testdata/name of the
// test's package, showing the lines that differ with their numbers. Under
// -update it first writes got to that file.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	shown := 0
	for i := range max(len(gl), len(wl)) {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if bytes.Equal(g, w) {
			continue
		}
		if shown++; shown > maxLines {
			t.Errorf("%s: more lines differ (run the test with -update to accept the output)", path)
			return
		}
		t.Errorf("%s line %d:\n got  %s\n want %s", path, i+1, g, w)
	}
}
