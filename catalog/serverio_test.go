package catalog

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/druidiceberg/sidecar/internal/fault"
)

func TestRewrite(t *testing.T) {
	fsys := NewFS(nil, []Mapping{
		{From: "s3://lake/", To: "/data/lake/"},
		{From: "s3://lake/db/hot/", To: "/fast/hot/"},
	})
	tests := map[string]string{
		"s3://lake/db/t/a.parquet":     "/data/lake/db/t/a.parquet",
		"s3://lake/db/hot/a.parquet":   "/fast/hot/a.parquet", // the longest prefix wins
		"s3://other/db/t/a.parquet":    "s3://other/db/t/a.parquet",
		"/already/local/file.parquet":  "/already/local/file.parquet",
		"s3://lakehouse/x.parquet":     "s3://lakehouse/x.parquet",
		"s3://lake/":                   "/data/lake/",
		"relative/path/data/x.parquet": "relative/path/data/x.parquet",
	}
	for in, want := range tests {
		if got := fsys.Rewrite(in); got != want {
			t.Errorf("Rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenThroughMapping(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.parquet"), []byte("PAR1"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := NewFS(nil, []Mapping{{From: "hdfs://nn:8020/warehouse/t", To: dir}})
	f, err := fsys.Open("hdfs://nn:8020/warehouse/t/f.parquet")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "PAR1" {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open("hdfs://nn:8020/warehouse/t/missing.parquet"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want os.ErrNotExist", err)
	}
	if err := fsys.Remove("hdfs://nn:8020/warehouse/t/f.parquet"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Remove: %v, want ErrReadOnly", err)
	}
	if _, err := ParseMapping("no-equals"); err == nil {
		t.Fatal("ParseMapping accepted a value without =")
	}
}

// TestMappingIsARoot: a location under a mapped prefix cannot climb out of
// the mapping's target, whatever a manifest (and so a signed token) says.
func TestMappingIsARoot(t *testing.T) {
	dir := t.TempDir()
	inside := filepath.Join(dir, "lake")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := NewFS(nil, []Mapping{{From: "s3a://lake/", To: inside + "/"}})
	for _, loc := range []string{
		"s3a://lake/../secret",
		"s3a://lake/db/t/../../../secret",
		"s3a://lake/db/t/..",
	} {
		f, err := fsys.Open(loc)
		if err == nil {
			f.Close()
			t.Fatalf("Open(%q) opened a file outside the mapping", loc)
		}
		if !errors.Is(err, ErrOutsideMapping) {
			t.Fatalf("Open(%q): %v, want ErrOutsideMapping", loc, err)
		}
	}
	// Dots inside a name are no segment.
	if _, err := fsys.Open("s3a://lake/a..b/..c.parquet"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a name with dots: %v, want os.ErrNotExist", err)
	}
}

// TestStorage: a location is refused when no FileIO of this build opens its
// scheme after the location map (this test binary links iceberg-go's S3
// FileIO, which takes s3, s3a, s3n and oss, and not the GCS or Azure ones).
func TestStorage(t *testing.T) {
	fsys := NewFS(nil, []Mapping{{From: "gs://mapped/", To: "/data/mapped/"}})
	for loc, ok := range map[string]bool{
		"/local/x.parquet":               true,
		"file:///local/x.parquet":        true,
		"C:/local/x.parquet":             true,
		"s3://b/x.parquet":               true,
		"s3a://b/x.parquet":              true,
		"s3n://b/x.parquet":              true,
		"oss://b/x.parquet":              true,
		"gs://mapped/x.parquet":          true, // a local file once mapped
		"gs://b/x.parquet":               false,
		"abfss://c@a.dfs/x.parquet":      false,
		"wasbs://c@a.blob/x.parquet":     false,
		"hdfs://namenode:8020/x.parquet": false,
	} {
		err := fsys.Storage(loc)
		switch {
		case ok && err != nil:
			t.Errorf("Storage(%q) = %v, want nil", loc, err)
		case !ok && (!errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), loc)):
			t.Errorf("Storage(%q) = %v, want fault.ErrUnsupported naming it", loc, err)
		}
	}
}
