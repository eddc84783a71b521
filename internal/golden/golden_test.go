package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what a check reports.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, strings.TrimSpace(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")))
}

func TestCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	path := filepath.Join("testdata", "out.ndjson")
	*update = true
	Check(t, "out.ndjson", []byte("a\nb\nc\n"))
	*update = false
	if data, err := os.ReadFile(path); err != nil || string(data) != "a\nb\nc\n" {
		t.Fatalf("-update wrote %q, %v", data, err)
	}
	Check(t, "out.ndjson", []byte("a\nb\nc\n"))

	r := &recorder{TB: t}
	Check(r, "out.ndjson", []byte("a\nB\nc\nd\n"))
	want := []string{
		path + " line 2:  got  B  want b",
		path + " line 4:  got  d  want",
	}
	if strings.Join(r.errors, "|") != strings.Join(want, "|") {
		t.Fatalf("a changed and an added line reported as\n%q\nwant\n%q", r.errors, want)
	}
}
