// Package sharedtables holds the tables that several tests of a package
// only read: each is written once per test binary, in a local warehouse of
// its own, and shared, since writing tables with iceberg-go under -race is
// most of what those tests cost. A test that changes a table (commits,
// removes or edits a file) writes its own. Only tests import it; it stays
// light (iceberg-go's hadoop catalog and internal/testenv, nothing of the
// sidecar's own packages), so that any package's tests can.
package sharedtables

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// shared is the test binary's registry: each binary that imports the
// package has its own.
var shared struct {
	mu     sync.Mutex
	builds map[string]*build
	dirs   []string
}

type build struct {
	once sync.Once
	dir  string
	val  any
	err  error
}

// Warehouse returns the directory of the local warehouse named key, and
// what build returned when it wrote it through iceberg-go's hadoop catalog
// of the directory: the first caller builds it, the others wait for and
// share the same one. Tests must only read it; an error of build fails
// every test that asks for it. The package's TestMain calls RemoveAll
// after its tests (Main).
func Warehouse[T any](t testing.TB, key string, write func(context.Context, *hadoop.Catalog) (T, error)) (string, T) {
	t.Helper()
	shared.mu.Lock()
	if shared.builds == nil {
		shared.builds = map[string]*build{}
	}
	b := shared.builds[key]
	if b == nil {
		b = &build{}
		shared.builds[key] = b
	}
	shared.mu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "shared-warehouse-")
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
		b.val, b.err = write(context.Background(), cat)
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

// RemoveAll removes every warehouse Warehouse wrote: a package whose tests
// share warehouses calls it in its TestMain once m.Run returns.
func RemoveAll() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, dir := range shared.dirs {
		_ = os.RemoveAll(dir)
	}
	shared.dirs = nil
}

// Main runs the tests of m with testenv.CollectLess, removes the shared
// warehouses after them (RemoveAll), and returns the exit code: a package
// whose tests share warehouses has
//
//	func TestMain(m *testing.M) { os.Exit(sharedtables.Main(m)) }
func Main(m *testing.M) int {
	testenv.CollectLess()
	code := m.Run()
	RemoveAll()
	return code
}
