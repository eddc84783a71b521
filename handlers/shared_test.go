package handlers_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
)

// Tables that several tests only read are written once per run of the
// package, each in a local warehouse of its own, and shared: writing them
// with iceberg-go under -race is most of what those tests cost. A test that
// changes a table (commits, removes or edits a file) writes its own.
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

func TestMain(m *testing.M) {
	testenv.CollectLess()
	code := m.Run()
	shared.mu.Lock()
	for _, dir := range shared.dirs {
		_ = os.RemoveAll(dir)
	}
	shared.mu.Unlock()
	os.Exit(code)
}

// sharedWarehouse returns the directory of the local warehouse named key,
// and what build returned when it wrote it: the first caller builds it, the
// others wait for and share the same one. Tests must only read it; build
// fails every test that asks for it.
func sharedWarehouse[T any](t testing.TB, key string, build func(context.Context, *hadoop.Catalog) (T, error)) (string, T) {
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
		dir, err := os.MkdirTemp("", "handlers-shared-")
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

// sharedScenarios is every tablegen scenario, as scenarios.<name>, in one
// shared warehouse, by name.
func sharedScenarios(t testing.TB) (string, map[string]*table.Table) {
	t.Helper()
	return sharedWarehouse(t, "scenarios", func(ctx context.Context, cat *hadoop.Catalog) (map[string]*table.Table, error) {
		out := map[string]*table.Table{}
		for _, sc := range tablegen.Scenarios() {
			tbl, err := sc.Build(ctx, cat, table.Identifier{"scenarios", sc.Name})
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			out[sc.Name] = tbl
		}
		return out, nil
	})
}
