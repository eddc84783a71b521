package splits

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/memory"
)

// readAll reads the file at path whole.
func readAll(t *testing.T, fsys icebergio.IO, path string) []byte {
	t.Helper()
	f, err := fsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countBlocks feeds b to an ocfBlocks in pieces of at most step bytes and
// returns the objects its blocks hold.
func countBlocks(b []byte, step int) (int64, error) {
	var n int64
	o := ocfBlocks{onBlock: func(c int64) error { n += c; return nil }}
	for len(b) > 0 {
		k := min(step, len(b))
		if err := o.feed(b[:k]); err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

// TestOCFBlocks: the objects the framing of a manifest list and of every
// manifest declares are the entries iceberg-go decodes from them, however
// the bytes are cut; bytes that are not an Avro container are refused.
func TestOCFBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _ := benchTable(t, 80)
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := tbl.CurrentSnapshot()
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	list := readAll(t, fsys, snap.ManifestList)
	for _, step := range []int{1, 7, 1 << 20} {
		if n, err := countBlocks(list, step); err != nil || n != int64(len(manifests)) {
			t.Errorf("the manifest list in pieces of %d: %d objects (%v), want its %d manifests", step, n, err, len(manifests))
		}
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, false)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, fsys, m.FilePath())
		for _, step := range []int{1, 13, 1 << 20} {
			if n, err := countBlocks(b, step); err != nil || n != int64(len(entries)) {
				t.Errorf("%s in pieces of %d: %d objects (%v), want its %d entries", m.FilePath(), step, n, err, len(entries))
			}
		}
	}
	for _, bad := range [][]byte{[]byte("PAR1 not avro"), append([]byte("Obj\x01"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)} {
		if _, err := countBlocks(bad, 3); !errors.Is(err, errNotAvro) {
			t.Errorf("%q: %v, want errNotAvro", bad, err)
		}
	}
}

// TestAdmitCountsEntries: an honest snapshot is admitted for what its
// manifest list declares, planning reads no entry more, and the
// reservation is given back; a budget smaller than one block's entries
// refuses the plan while it reads, with a *memory.ExceedsError.
func TestAdmitCountsEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _ := benchTable(t, 80)
	snap := tbl.CurrentSnapshot()
	b := memory.NewBudget(1<<30, "the test's budget", nil)
	p := &Planner{budget: b}
	a, err := p.admitPlan(ctx, tbl, "ns.t", snap)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := a.tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 80 {
		t.Fatalf("%d tasks, want 80", len(tasks))
	}
	if a.c.read == 0 || a.c.read != a.c.paid || b.Stats().Used != a.c.paid*PlanBytesPerFile {
		t.Errorf("read %d entries, paid for %d, %d bytes held: an honest snapshot declares what planning reads",
			a.c.read, a.c.paid, b.Stats().Used)
	}
	a.done(ctx)
	if b.Stats().Used != 0 {
		t.Errorf("%d bytes held after done without a scope", b.Stats().Used)
	}

	// What the snapshot declares is paid for; one entry more is not.
	c := &entryCounter{r: mustReserve(t, memory.NewBudget(3*PlanBytesPerFile, "three entries", nil)), paid: 2}
	if err := c.block(2); err != nil {
		t.Fatal(err)
	}
	if err := c.block(1); err != nil {
		t.Fatal(err)
	}
	err = c.block(1)
	if !errors.Is(err, memory.ErrTooLarge) || c.refused() == nil || !errors.Is(c.block(0), memory.ErrTooLarge) {
		t.Errorf("the fourth entry of a three-entry budget: %v, want ErrTooLarge from then on", err)
	}
}

func mustReserve(t *testing.T, b *memory.Budget) *memory.Reservation {
	t.Helper()
	r, err := b.Reserve(memory.Plan, 0, b.Capacity(), b.Origin())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAdmitSaturates: a summary that declares more data files than an
// int64 of bytes holds wrapped around to a negative reservation, which the
// budget took as memory given back; it is now too large.
func TestAdmitSaturates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _ := benchTable(t, 80)
	for _, files := range []string{"9223372036854775807", "2251799813685248"} {
		snap := *tbl.CurrentSnapshot()
		snap.Summary = &table.Summary{Operation: table.OpAppend, Properties: iceberg.Properties{"total-data-files": files}}
		b := memory.NewBudget(1<<30, "the test's budget", nil)
		_, err := (&Planner{budget: b}).admitPlan(ctx, tbl, "ns.t", &snap)
		if !errors.Is(err, memory.ErrTooLarge) || b.Stats().Used != 0 {
			t.Errorf("total-data-files %s: %v, %d bytes held; want ErrTooLarge and nothing held", files, err, b.Stats().Used)
		}
	}
}
