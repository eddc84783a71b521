package changes

import (
	"strings"
	"sync"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

// openCounter counts the files a table's FileIO opens, by path
// (catalog.WithFileIOWrapper).
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

// TestChangesPlanOnce: a diff, and the plans of all its changed intervals
// (what GET /changes answers), plan each snapshot once however many
// intervals changed: the target's manifest list is read once, by the diff,
// and every interval's work is cut from that scan.
func TestChangesPlanOnce(t *testing.T) {
	e := newChangesEnv(t)
	files := &openCounter{opened: map[string]int{}}
	d := e.differ(t, files.wrap)
	h, name := e.history(t, tablegen.HistoryOptions{Seed: 7, Time: tablegen.TimeTimestamp, Layout: tablegen.LayoutUnpartitioned})
	if _, err := h.Step(e.ctx); err != nil {
		t.Fatal(err)
	}
	from := current(h)
	for range 6 {
		if _, err := h.Step(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	to := h.Table().CurrentSnapshot()

	// Intervals asked for besides those the snapshots changed: each is
	// cut from the same scan.
	var include []Change
	for _, iv := range []string{"2000-01-01T00:00:00Z/2000-01-01T01:00:00Z", "2001-01-01T00:00:00Z/2001-01-01T01:00:00Z",
		"2002-01-01T00:00:00Z/2002-01-01T01:00:00Z"} {
		c, err := ParseChangeInterval(iv)
		if err != nil {
			t.Fatal(err)
		}
		include = append(include, c)
	}
	// The rows' options as GET /changes plans them: as many splits as a
	// task runs subtasks at once by default.
	ch, err := d.Changes(e.ctx, Request{Table: name, FromSnapshot: &from, TimeColumn: "ts", Granularity: druid.GranularityHour,
		Include: include, Rows: splits.Request{Table: name, TimeColumn: "ts", MinSplits: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Changes) < 3 {
		t.Fatalf("%d changed intervals; the test wants several: %v", len(ch.Changes), ch.Changes)
	}
	for _, c := range ch.Changes {
		if _, err := ch.Plan(e.ctx, c, 0); err != nil {
			t.Fatalf("plan %s: %v", c, err)
		}
	}
	n := files.count(to.ManifestList)
	if list := strings.TrimPrefix(to.ManifestList, "file://"); list != to.ManifestList {
		n += files.count(list)
	}
	if n != 1 {
		t.Fatalf("the target snapshot's manifest list was read %d times for %d intervals, want once", n, len(ch.Changes))
	}
}
