package splits

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
)

// shared holds the tables the tests build once per run of the package and
// then only read (planners read metadata and manifests, never write): each
// is written into a directory of its own under root the first time a test
// asks for it.
var shared struct {
	mu     sync.Mutex
	root   string
	tables map[string]*sharedTable
}

// sharedTable is one table of shared, built once.
type sharedTable struct {
	once sync.Once
	tbl  *table.Table
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.root != "" {
		_ = os.RemoveAll(shared.root)
	}
	os.Exit(code)
}

// readOnlyTable returns the table build writes, as the local catalog of its
// directory, the first time name is asked for, and the same table and
// directory every time after: the tests that share it must not change it.
// The catalog writes Snappy files (catalogtest.SnappyWrites): planning
// does not depend on the codec, and the tests that size splits take the
// files' sizes from the table.
func readOnlyTable(t *testing.T, name string, build func(context.Context, icecatalog.Catalog) (*table.Table, error)) (*table.Table, string) {
	t.Helper()
	shared.mu.Lock()
	if shared.tables == nil {
		root, err := os.MkdirTemp("", "splits-test-")
		if err != nil {
			shared.mu.Unlock()
			t.Fatal(err)
		}
		shared.root, shared.tables = root, map[string]*sharedTable{}
	}
	st := shared.tables[name]
	if st == nil {
		st = &sharedTable{dir: filepath.Join(shared.root, name)}
		shared.tables[name] = st
	}
	shared.mu.Unlock()
	st.once.Do(func() {
		cat, err := hadoop.NewCatalog("test", st.dir, nil)
		if err != nil {
			st.err = err
			return
		}
		defer cat.Close()
		st.tbl, st.err = build(context.Background(), catalogtest.SnappyWrites(cat))
	})
	if st.err != nil {
		t.Fatal(fmt.Errorf("write the shared table %s: %w", name, st.err))
	}
	return st.tbl, st.dir
}
