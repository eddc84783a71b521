package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// openCounter counts the files a table's FileIO opens, by path
// (sidecatalog.WithFileIOWrapper).
type openCounter struct {
	mu     sync.Mutex
	opened map[string]int
}

func (c *openCounter) wrap(fsys icebergio.IO) icebergio.IO { return countingIO{IO: fsys, c: c} }

type countingIO struct {
	icebergio.IO
	c *openCounter
}

func (c countingIO) Open(name string) (icebergio.File, error) {
	c.c.mu.Lock()
	c.c.opened[name]++
	c.c.mu.Unlock()
	return c.IO.Open(name)
}

func (c *openCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened[name]
}

// TestChangesPlanOnce: GET /changes plans each snapshot once however many
// intervals changed: the target's manifest list is read once, by the diff,
// and every interval's work is cut from that scan.
func TestChangesPlanOnce(t *testing.T) {
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	h, err := tablegen.NewHistory(ctx, cat, table.Identifier{"once", "t"},
		tablegen.HistoryOptions{Seed: 7, Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutUnpartitioned})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Step(ctx); err != nil {
		t.Fatal(err)
	}
	from := h.Table().CurrentSnapshot().SnapshotID
	for range 6 {
		if _, err := h.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	to := h.Table().CurrentSnapshot()

	cfg := sidecatalog.Config{Type: "local", Warehouse: dir}
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	files := &openCounter{opened: map[string]int{}}
	srv := newServer(t, cfg, nil, func(c *handlers.Config) {
		cat := catalogtest.Open(t, cfg, sidecatalog.WithFileIOWrapper(files.wrap))
		p, err := splits.NewPlanner(cat, signer, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Catalogs = []handlers.Catalog{wireCatalog(cat, p, reader.New(nil))}
	})
	// Intervals asked for besides those the snapshots changed: each is
	// cut from the same scan.
	ch := srv.changes(t, q("table", "once.t", "timeColumn", "ts", "fromSnapshot", fmt.Sprint(from), "granularity", "HOUR",
		"include", "2000-01-01T00:00:00Z/2000-01-01T01:00:00Z,2001-01-01T00:00:00Z/2001-01-01T01:00:00Z,2002-01-01T00:00:00Z/2002-01-01T01:00:00Z"))
	if len(ch.Changes) < 3 {
		t.Fatalf("%d changed intervals; the test wants several: %v", len(ch.Changes), ch.intervals())
	}
	n := files.count(to.ManifestList)
	if list := strings.TrimPrefix(to.ManifestList, "file://"); list != to.ManifestList {
		n += files.count(list)
	}
	if n != 1 {
		t.Fatalf("the target snapshot's manifest list was read %d times for %d intervals, want once", n, len(ch.Changes))
	}
}
