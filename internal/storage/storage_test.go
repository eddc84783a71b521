package storage

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestRewrite(t *testing.T) {
	fsys := New(nil, []Mapping{
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
	fsys := New(nil, []Mapping{{From: "hdfs://nn:8020/warehouse/t", To: dir}})
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
