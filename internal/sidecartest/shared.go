package sidecartest

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// Tables that several tests only read are written once per test binary,
// each in a local warehouse of its own, and shared: writing them with
// iceberg-go under -race is most of what those tests cost. A test that
// changes a table (commits, removes or edits a file) writes its own. The
// registry is the test binary's: each binary that imports the package has
// its own.
var shared struct {
	mu     sync.Mutex
	builds map[string]*sharedBuild
	dirs   []string
}

type sharedBuild struct {
	once sync.Once
	dir  string
	val  any
	err  error
}

// Main runs the tests of m with testenv.CollectLess, removes the shared
// warehouses, and returns the exit code: a package whose tests share
// warehouses has
//
//	func TestMain(m *testing.M) { os.Exit(sidecartest.Main(m)) }
func Main(m *testing.M) int {
	testenv.CollectLess()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, dir := range shared.dirs {
		_ = os.RemoveAll(dir)
	}
	return code
}

// SharedWarehouse returns the directory of the local warehouse named key,
// and what build returned when it wrote it: the first caller builds it, the
// others wait for and share the same one. Tests must only read it; an
// error of build fails every test that asks for it. The package's TestMain
// calls Main, which removes the warehouses.
func SharedWarehouse[T any](t testing.TB, key string, build func(context.Context, *hadoop.Catalog) (T, error)) (string, T) {
	t.Helper()
	shared.mu.Lock()
	if shared.builds == nil {
		shared.builds = map[string]*sharedBuild{}
	}
	b := shared.builds[key]
	if b == nil {
		b = &sharedBuild{}
		shared.builds[key] = b
	}
	shared.mu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "sidecartest-shared-")
		if err != nil {
			b.err = err
			return
		}
		shared.mu.Lock()
		shared.dirs = append(shared.dirs, dir)
		shared.mu.Unlock()
		b.dir = dir
		cat, err := hadoop.NewCatalog("shared", dir, nil)
		if err != nil {
			b.err = err
			return
		}
		defer cat.Close()
		b.val, b.err = build(context.Background(), cat)
	})
	if b.err != nil {
		t.Fatalf("shared warehouse %s: %v", key, b.err)
	}
	v, ok := b.val.(T)
	if !ok {
		t.Fatalf("shared warehouse %s holds a %T", key, b.val)
	}
	return b.dir, v
}
