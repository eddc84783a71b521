package main

import (
	"go/build"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// module is the sidecar's module path.
const module = "github.com/druidiceberg/sidecar"

// binaryInternal are the packages under internal/ that the binary links:
// small libraries (docs/design.md's packages table). Every other package
// under internal/ is for tests only.
var binaryInternal = []string{"internal/connlimit", "internal/demo", "internal/fault", "internal/icewrite", "internal/jsonstr", "internal/memory", "internal/promreg", "internal/rungroup"}

// TestBinaryLinksNoTestOnlyPackage: the sidecar binary (with every
// optional catalog and store) links no package of internal/ but the small
// libraries that are there for it, and no test helper kept beside the
// package it serves (a name ending in "test", such as
// catalog/catalogtest); the table generators, the Druid model and
// the test helpers stay out of the binary.
func TestBinaryLinksNoTestOnlyPackage(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx := build.Default
	ctx.BuildTags = append(ctx.BuildTags, "glue", "hive", "sql", "gcs", "azure")
	linked := map[string]bool{}
	var walk func(rel string)
	walk = func(rel string) {
		pkg, err := ctx.ImportDir(filepath.Join(root, rel), 0)
		if err != nil {
			t.Fatalf("read package %s: %v", rel, err)
		}
		for _, imp := range pkg.Imports {
			sub, ok := strings.CutPrefix(imp, module+"/")
			if !ok || linked[sub] {
				continue
			}
			linked[sub] = true
			walk(sub)
		}
	}
	walk("cmd/sidecar")
	var internal []string
	for p := range linked {
		if strings.HasPrefix(p, "internal/") {
			internal = append(internal, p)
		}
	}
	sort.Strings(internal)
	for _, p := range internal {
		if !slices.Contains(binaryInternal, p) {
			t.Errorf("the binary links %s, a package for tests: %v", p, internal)
		}
	}
	for p := range linked {
		if strings.HasSuffix(filepath.Base(p), "test") {
			t.Errorf("the binary links %s, a test helper", p)
		}
	}
	for _, want := range []string{"catalog", "reader", "handlers", "internal/jsonstr"} {
		if !linked[want] {
			t.Fatalf("the walk of the binary's imports missed %s: %v", want, linked)
		}
	}
}
