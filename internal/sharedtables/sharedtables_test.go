package sharedtables

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
)

// TestWarehouseBuildsOnce: callers of one key, at once, share one build
// and its directory; another key gets a warehouse of its own; RemoveAll
// removes them.
func TestWarehouseBuildsOnce(t *testing.T) {
	var builds atomic.Int32
	write := func(context.Context, *hadoop.Catalog) (int, error) { return int(builds.Add(1)), nil }
	dirs := make([]string, 8)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			dir, n := Warehouse(t, "once", write)
			if n != 1 {
				t.Errorf("build %d shared", n)
			}
			dirs[i] = dir
		})
	}
	wg.Wait()
	for _, d := range dirs {
		if d != dirs[0] {
			t.Fatalf("directories %q and %q for one key", d, dirs[0])
		}
	}
	other, _ := Warehouse(t, "other", write)
	if other == dirs[0] || builds.Load() != 2 {
		t.Fatalf("another key: %s (of %s), %d builds", other, dirs[0], builds.Load())
	}
	RemoveAll()
	for _, d := range []string{dirs[0], other} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s after RemoveAll: %v", d, err)
		}
	}
}
