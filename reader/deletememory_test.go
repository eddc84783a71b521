package reader_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/token"
)

// bombPaths is how many distinct file_path values the positional delete
// bomb names: decoded whole, each is a bitmap of its own.
const bombPaths = 30_000

// TestPositionalDeleteBomb replays a positional delete file that names a
// great many paths that are no data file (one position each) besides the
// split's own: a valid file of a few KiB that decoded whole holds one
// bitmap per path (12 MB estimated here; 2.45 GB from 145 KB at scale).
// The sidecar keeps only the positions of the split's data file: the cache
// holds a few KiB, the memory budget never more than the bound of a file
// decoded whole, and a split of another data file it names does not try
// to decode it whole again.
func TestPositionalDeleteBomb(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 10)
	// A second data file of the same rows, which the bomb names too.
	rows := make([]idRow, 10)
	for i := range rows {
		rows[i] = idRow{ID: int64(i), Name: string(rune('a' + i))}
	}
	_, z2 := writeParquet(t, dir, "data2.parquet", rows)
	s2 := dataSplit("data2.parquet", z2, 10)
	type bombRow struct {
		FilePath string `parquet:"file_path,id(2147483546),zstd"`
		Pos      int64  `parquet:"pos,id(2147483545),zstd"`
	}
	dels := make([]bombRow, 0, bombPaths+3)
	for i := range bombPaths {
		dels = append(dels, bombRow{fmt.Sprintf("%s/ghost/%08d.parquet", bucket, i), 1})
	}
	dels = append(dels, bombRow{s.Data.Path, 3}, bombRow{s.Data.Path, 7}, bombRow{s2.Data.Path, 0})
	p, z := writeParquet(t, dir, "bomb.parquet", dels, parquet.MaxRowsPerRowGroup(1<<16))
	s.Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: p, Format: "PARQUET", Size: z}}
	s2.Deletes = s.Deletes

	budget := memory.NewBudget(1<<30, "the test budget", nil)
	cache := deletes.NewCache(256<<20, nil)
	budget.OnPressure(cache.Reclaim)
	fs := newOpenCounter(testFS(dir))
	r := newReader(fs, reader.WithDeleteCache(cache), reader.WithMemory(budget, 8<<20, "the test bound"))
	for range 2 {
		got, _ := readAll(t, r, s, idSchema)
		if !slices.Equal(got, keep(lines, 3, 7)) {
			t.Fatalf("got %q", got)
		}
	}
	cs, bs := cache.Stats(), budget.Stats()
	t.Logf("delete file %d KiB; cache %d bytes in %d entries; budget peak %d bytes", z>>10, cs.Bytes, cs.Entries, bs.Peak)
	if cs.Bytes > 64<<10 {
		t.Errorf("the cache holds %d bytes for one data file's two positions", cs.Bytes)
	}
	if bs.Peak > 4<<20+64<<10 {
		t.Errorf("decoding reserved up to %d bytes, past the 4 MiB of a file decoded whole (half the bound)", bs.Peak)
	}
	if bs.Used <= 0 || bs.Used > cs.Bytes {
		t.Errorf("the budget holds %d bytes for a cache of %d", bs.Used, cs.Bytes)
	}
	// Once decoded whole (given up), once for the data file; the second
	// split hit the cache.
	if n := fs.count(p); n != 2 {
		t.Errorf("the delete file was opened %d times, want 2", n)
	}
	// Another data file the file names: the cache remembers that the file
	// is decoded per data file, so it is opened once more, not twice.
	if got, _ := readAll(t, r, s2, idSchema); len(got) != 9 || strings.Contains(got[0], `"id":0,`) {
		t.Fatalf("the second data file: got %q", got)
	}
	if n := fs.count(p); n != 3 {
		t.Errorf("after a split of another data file the delete file was opened %d times, want 3", n)
	}
}

// eqBombKeys is the size of the equality delete bomb: sequential ids,
// which Parquet stores in a few bytes each.
const eqBombKeys = 100_000

// TestEqualityDeleteBomb replays an equality delete file of many ids: the
// reservation grows as the keys are decoded, so a file past the bound fails
// Open with an error that names it and the bound (a 422), and one that does
// not fit while other requests hold the budget fails busy (a 503); neither
// holds more than the bound while it decodes, and both give everything back.
func TestEqualityDeleteBomb(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := writeIDs(t, dir, 10)
	type delByID struct {
		ID int64 `parquet:"id,id(1),delta"`
	}
	ids := make([]delByID, eqBombKeys)
	for i := range ids {
		ids[i] = delByID{int64(i)}
	}
	p, z := writeParquet(t, dir, "eq-bomb.parquet", ids)
	s.Deletes = []token.DeleteFile{{Kind: token.DeleteEquality, Path: p, Format: "PARQUET", Size: z, EqualityIDs: []int{1}}}
	ctx := context.Background()
	open := func(r fsReader) error {
		st, err := r.Open(ctx, s, tableOf(idSchema))
		if err == nil {
			st.Close()
		}
		return err
	}

	t.Run("past the bound", func(t *testing.T) {
		t.Parallel()
		budget := memory.NewBudget(1<<30, "the test budget", nil)
		bound := int64(1 << 20)
		err := open(newReader(testFS(dir), reader.WithMemory(budget, bound, "--max-delete-memory")))
		if !errors.Is(err, memory.ErrTooLarge) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "1 MiB, --max-delete-memory") {
			t.Fatalf("open: %v; want ErrTooLarge naming %s and the bound", err, p)
		}
		if bs := budget.Stats(); bs.Used != 0 || bs.Peak > bound {
			t.Errorf("budget %+v: want nothing held, and never past the bound", bs)
		}
	})
	t.Run("busy", func(t *testing.T) {
		t.Parallel()
		budget := memory.NewBudget(8<<20, "the test budget", nil)
		other, err := budget.Reserve(memory.Plan, 7<<20, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		r := newReader(testFS(dir), reader.WithDeleteCache(deletes.NewCache(8<<20, nil)), reader.WithMemory(budget, 0, ""))
		if err := open(r); !errors.Is(err, memory.ErrBusy) {
			t.Fatalf("open while others hold the budget: %v, want ErrBusy", err)
		}
		other.Release()
		if err := open(r); err != nil {
			t.Fatalf("open once the budget is free: %v", err)
		}
		bs := budget.Stats()
		t.Logf("delete file %d KiB; %d keys hold %d bytes", z>>10, eqBombKeys, bs.Used)
		if bs.Used <= int64(eqBombKeys)*8 || bs.Used > bs.Peak {
			t.Errorf("the cached keys hold %d bytes of the budget, want their estimate", bs.Used)
		}
	})
}
