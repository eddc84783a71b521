package reader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// openCounter counts the files opened through it, by path; it can hold the
// opens of a path until a channel closes, and fail the next opens of a path.
type openCounter struct {
	icebergio.IO

	mu    sync.Mutex
	opens map[string]int
	gate  map[string]chan struct{}
	fail  map[string]int
}

var errStorage = errors.New("storage unreachable")

func newOpenCounter(fs icebergio.IO) *openCounter {
	return &openCounter{IO: fs, opens: map[string]int{}, gate: map[string]chan struct{}{}, fail: map[string]int{}}
}

func (c *openCounter) Open(name string) (icebergio.File, error) {
	c.mu.Lock()
	c.opens[name]++
	gate := c.gate[name]
	failing := c.fail[name] > 0
	if failing {
		c.fail[name]--
	}
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if failing {
		return nil, fmt.Errorf("open %s: %w", name, errStorage)
	}
	return c.IO.Open(name)
}

func (c *openCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[name]
}

// sharedDeletes writes n data files of ten rows (ids 0-9) and one
// positional delete file, as iceberg-go's planner attaches to all of them
// when the file's path bounds are truncated: it deletes positions i%10 and
// (i+3)%10 of data file i, and rows of a path that is no data file. It
// returns the splits and the expected lines of each.
func sharedDeletes(t testing.TB, dir string, n int) ([]token.Split, [][]string) {
	t.Helper()
	rows := make([]idRow, 10)
	for i := range rows {
		rows[i] = idRow{ID: int64(i), Name: string(rune('a' + i))}
	}
	lines := allLines()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.MaxRowsPerRowGroup(4)); err != nil {
		t.Fatal(err)
	}
	var dels []posDelete
	var ss []token.Split
	var want [][]string
	for i := range n {
		name := fmt.Sprintf("data-%03d.parquet", i)
		if err := writeFile(filepath.Join(dir, name), buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		s := dataSplit(name, int64(buf.Len()), 10)
		a, b := i%10, (i+3)%10
		dels = append(dels, posDelete{s.Data.Path, int64(min(a, b))}, posDelete{s.Data.Path, int64(max(a, b))})
		ss = append(ss, s)
		want = append(want, keep(lines, a, b))
	}
	dels = append(dels, posDelete{bucket + "/gone.parquet", 1})
	_, size := writeParquet(t, dir, "shared-deletes.parquet", dels, parquet.MaxRowsPerRowGroup(64))
	for i := range ss {
		ss[i].Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: bucket + "/shared-deletes.parquet", Format: "PARQUET", Size: size}}
	}
	return ss, want
}

// TestDeleteCacheSharedPositionalFile opens 100 splits that share one
// positional delete file: with the cache it is opened and decoded once, and
// every split gets its own rows, the same as without the cache.
func TestDeleteCacheSharedPositionalFile(t *testing.T) {
	dir := t.TempDir()
	ss, want := sharedDeletes(t, dir, 100)
	delPath := ss[0].Deletes[0].Path

	plainFS := newOpenCounter(testFS(dir))
	plain := newReader(plainFS)
	cachedFS := newOpenCounter(testFS(dir))
	cache := deletes.NewCache(64<<20, nil)
	cached := newReader(cachedFS, reader.WithDeleteCache(cache))

	for i, s := range ss {
		got, st := readAll(t, cached, s, idSchema)
		if !slices.Equal(got, want[i]) {
			t.Fatalf("split %d: got %q, want %q", i, got, want[i])
		}
		plainGot, plainSt := readAll(t, plain, s, idSchema)
		if !slices.Equal(got, plainGot) {
			t.Fatalf("split %d: cached %q, uncached %q", i, got, plainGot)
		}
		if st.RowsDeleted[token.DeletePosition] != 2 || st.RowsRead != plainSt.RowsRead || st.RowsEmitted != plainSt.RowsEmitted {
			t.Errorf("split %d: stats %+v, uncached %+v", i, st, plainSt)
		}
		wantLoads := int64(0)
		if i == 0 {
			wantLoads = 1
		}
		if n := st.DeleteFilesLoaded[token.DeletePosition]; n != wantLoads {
			t.Errorf("split %d: loaded %d positional delete files, want %d", i, n, wantLoads)
		}
		if n := plainSt.DeleteFilesLoaded[token.DeletePosition]; n != 1 {
			t.Errorf("split %d uncached: loaded %d positional delete files, want 1", i, n)
		}
	}
	if n := cachedFS.count(delPath); n != 1 {
		t.Errorf("with the cache the delete file was opened %d times, want 1", n)
	}
	if n := plainFS.count(delPath); n != 100 {
		t.Errorf("without the cache the delete file was opened %d times, want 100", n)
	}
	cs := cache.Stats()
	if cs.Misses[token.DeletePosition] != 1 || cs.Hits[token.DeletePosition] != 99 || cs.Entries != 1 || cs.Bytes <= 0 || cs.Evictions != 0 {
		t.Errorf("cache stats %+v", cs)
	}
}

// TestDeleteCacheBitmapsStayUnchanged: a split with both a positional
// delete file and a deletion vector unions them into a bitmap of its own; the
// cached bitmaps, which other splits read, keep their positions.
func TestDeleteCacheBitmapsStayUnchanged(t *testing.T) {
	dir := t.TempDir()
	ss, want := sharedDeletes(t, dir, 3)
	s := ss[1] // positions 1 and 4 deleted by position
	dvFile := writeDV(t, dir, "dv.puffin", s.Data.Path, 4, 7)
	all := allLines()
	if !slices.Equal(want[1], keep(all, 1, 4)) {
		t.Fatalf("sharedDeletes deletes %q of data file 1", want[1])
	}
	cache := deletes.NewCache(64<<20, nil)
	r := newReader(testFS(dir), reader.WithDeleteCache(cache))
	both, dvOnly := s, s
	both.Deletes = append(slices.Clone(s.Deletes), dvFile)
	dvOnly.Deletes = []token.DeleteFile{dvFile}

	for round := range 2 {
		got, st := readAll(t, r, both, idSchema)
		if w := keep(all, 1, 4, 7); !slices.Equal(got, w) {
			t.Fatalf("round %d, both kinds: got %q, want %q", round, got, w)
		}
		// Position 4 is named by both: it counts as positional.
		if st.RowsDeleted[token.DeletePosition] != 2 || st.RowsDeleted[token.DeleteDeletionVector] != 1 {
			t.Errorf("round %d, both kinds: stats %+v", round, st)
		}
		if got, _ := readAll(t, r, s, idSchema); !slices.Equal(got, keep(all, 1, 4)) {
			t.Fatalf("round %d, positional only after the union: got %q", round, got)
		}
		if got, _ := readAll(t, r, dvOnly, idSchema); !slices.Equal(got, keep(all, 4, 7)) {
			t.Fatalf("round %d, deletion vector only after the union: got %q", round, got)
		}
	}
	cs := cache.Stats()
	if cs.Misses[token.DeletePosition] != 1 || cs.Misses[token.DeleteDeletionVector] != 1 ||
		cs.Hits[token.DeletePosition] != 3 || cs.Hits[token.DeleteDeletionVector] != 3 || cs.Entries != 2 {
		t.Errorf("cache stats %+v", cs)
	}
}

// allLines is every line of a sharedDeletes data file.
func allLines() []string {
	var lines []string
	for i := range 10 {
		lines = append(lines, `{"id":`+itoa(i)+`,"name":"`+string(rune('a'+i))+`"}`)
	}
	return lines
}

// waitFlying waits until n callers wait on loads of the cache. It fails the
// test after a minute, so that a broken single-flight shows as a failure
// rather than a hung test; nothing is timed.
func waitFlying(t *testing.T, c *deletes.Cache, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for c.Flying() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait on loads, want %d", c.Flying(), n)
		}
		runtime.Gosched()
	}
}

// TestDeleteCacheSingleFlight: concurrent first requests for one delete
// file wait on one load; a failed load reaches every waiter and is not
// kept, so the next request loads again.
func TestDeleteCacheSingleFlight(t *testing.T) {
	const n = 16
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "load succeeds", true: "load fails"}[fail], func(t *testing.T) {
			dir := t.TempDir()
			ss, want := sharedDeletes(t, dir, n)
			delPath := ss[0].Deletes[0].Path
			fs := newOpenCounter(testFS(dir))
			gate := make(chan struct{})
			fs.gate[delPath] = gate
			if fail {
				fs.fail[delPath] = 1
			}
			cache := deletes.NewCache(64<<20, nil)
			r := newReader(fs, reader.WithDeleteCache(cache))

			type result struct {
				lines []string
				loads int64
				err   error
			}
			results := make([]result, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					ctx := context.Background()
					st, err := r.Open(ctx, ss[i], tableOf(idSchema))
					if err != nil {
						results[i].err = err
						return
					}
					defer st.Close()
					var buf bytes.Buffer
					results[i].err = st.Run(ctx, &buf, nil)
					results[i].lines = ndjson(buf.String())
					results[i].loads = st.Stats().DeleteFilesLoaded[token.DeletePosition]
				})
			}
			// Every caller has missed and waits: one holds the gate, the
			// others wait on its load.
			waitFlying(t, cache, n)
			close(gate)
			wg.Wait()

			if got := fs.count(delPath); got != 1 {
				t.Errorf("the delete file was opened %d times, want 1", got)
			}
			cs := cache.Stats()
			if fail {
				for i, res := range results {
					if !errors.Is(res.err, errStorage) {
						t.Errorf("split %d: got %v, want the storage error", i, res.err)
					}
				}
				if cs.Misses[token.DeletePosition] != n || cs.Hits[token.DeletePosition] != 0 || cs.Entries != 0 || cs.Bytes != 0 {
					t.Errorf("after the failed load: cache stats %+v", cs)
				}
				// The failure was not kept: the next request loads again.
				got, st := readAll(t, r, ss[3], idSchema)
				if !slices.Equal(got, want[3]) || st.DeleteFilesLoaded[token.DeletePosition] != 1 {
					t.Errorf("after the failure: got %q, loads %v", got, st.DeleteFilesLoaded)
				}
				if got := fs.count(delPath); got != 2 {
					t.Errorf("the delete file was opened %d times, want 2", got)
				}
				if cs := cache.Stats(); cs.Entries != 1 || cs.Misses[token.DeletePosition] != n+1 {
					t.Errorf("after the retry: cache stats %+v", cs)
				}
				return
			}
			loads := int64(0)
			for i, res := range results {
				if res.err != nil {
					t.Fatalf("split %d: %v", i, res.err)
				}
				if !slices.Equal(res.lines, want[i]) {
					t.Errorf("split %d: got %q, want %q", i, res.lines, want[i])
				}
				loads += res.loads
			}
			if loads != 1 {
				t.Errorf("the streams say they loaded %d delete files, want 1", loads)
			}
			if cs.Misses[token.DeletePosition] != 1 || cs.Hits[token.DeletePosition] != n-1 || cs.Entries != 1 {
				t.Errorf("cache stats %+v", cs)
			}
		})
	}
}

func ndjson(s string) []string {
	var out []string
	for l := range bytes.Lines([]byte(s)) {
		out = append(out, string(bytes.TrimSuffix(l, []byte("\n"))))
	}
	return out
}

// TestDeleteCacheEviction bounds the cache to two entries' worth of bytes:
// a third entry evicts the least recently used one, and an entry larger
// than the whole bound is used but not kept.
func TestDeleteCacheEviction(t *testing.T) {
	dir := t.TempDir()
	s, lines := writeIDs(t, dir, 10)
	var dels [3]token.DeleteFile
	for i := range dels {
		// The same positions, so the entries have the same size.
		p, z := writeParquet(t, dir, fmt.Sprintf("del%d.parquet", i), []posDelete{{s.Data.Path, 2}, {s.Data.Path, 5}})
		dels[i] = token.DeleteFile{Kind: token.DeletePosition, Path: p, Format: "PARQUET", Size: z}
	}
	with := func(d token.DeleteFile) token.Split {
		s := s
		s.Deletes = []token.DeleteFile{d}
		return s
	}
	read := func(t *testing.T, r fsReader, d token.DeleteFile) {
		t.Helper()
		if got, _ := readAll(t, r, with(d), idSchema); !slices.Equal(got, keep(lines, 2, 5)) {
			t.Fatalf("got %q", got)
		}
	}

	// The size of one entry, as the cache estimates it.
	probe := deletes.NewCache(64<<20, nil)
	read(t, newReader(testFS(dir), reader.WithDeleteCache(probe)), dels[0])
	size := probe.Stats().Bytes
	if size <= 0 {
		t.Fatalf("an entry of %d bytes", size)
	}

	t.Run("least recently used evicted", func(t *testing.T) {
		fs := newOpenCounter(testFS(dir))
		cache := deletes.NewCache(2*size, nil)
		r := newReader(fs, reader.WithDeleteCache(cache))
		read(t, r, dels[0])
		read(t, r, dels[1])
		read(t, r, dels[0]) // 0 is now more recent than 1
		if cs := cache.Stats(); cs.Entries != 2 || cs.Bytes != 2*size || cs.Evictions != 0 {
			t.Fatalf("two entries: stats %+v", cs)
		}
		read(t, r, dels[2]) // evicts 1
		read(t, r, dels[0]) // a hit
		read(t, r, dels[1]) // a miss again; evicts 2
		opens := []int{fs.count(dels[0].Path), fs.count(dels[1].Path), fs.count(dels[2].Path)}
		if !slices.Equal(opens, []int{1, 2, 1}) {
			t.Errorf("delete files opened %v times, want [1 2 1]", opens)
		}
		cs := cache.Stats()
		if cs.Entries != 2 || cs.Bytes != 2*size || cs.Evictions != 2 ||
			cs.Misses[token.DeletePosition] != 4 || cs.Hits[token.DeletePosition] != 2 {
			t.Errorf("stats %+v", cs)
		}
		read(t, r, dels[2]) // evicted above
		if n := fs.count(dels[2].Path); n != 2 {
			t.Errorf("the evicted file was opened %d times, want 2", n)
		}
	})

	t.Run("larger than the bound", func(t *testing.T) {
		fs := newOpenCounter(testFS(dir))
		cache := deletes.NewCache(size-1, nil)
		r := newReader(fs, reader.WithDeleteCache(cache))
		read(t, r, dels[0])
		read(t, r, dels[0])
		if n := fs.count(dels[0].Path); n != 2 {
			t.Errorf("opened %d times, want 2", n)
		}
		if cs := cache.Stats(); cs.Entries != 0 || cs.Bytes != 0 || cs.Evictions != 0 || cs.Misses[token.DeletePosition] != 2 {
			t.Errorf("stats %+v", cs)
		}
	})
}

// TestDeleteCacheEqualityKeysFollowTheSchema: equality keys are encoded in
// the types of the table schema, so one delete file read for two schemas
// (a float promoted to double) is two entries, each matching its own data;
// the data file's side (its columns) is never cached.
func TestDeleteCacheEqualityKeysFollowTheSchema(t *testing.T) {
	type dataRow struct {
		ID    int64   `parquet:"id,id(1)"`
		Score float32 `parquet:"score,id(2)"`
	}
	type dataRowDouble struct {
		ID    int64   `parquet:"id,id(1)"`
		Score float64 `parquet:"score,id(2)"`
	}
	type delRow struct {
		Score float32 `parquet:"score,id(2)"`
	}
	dir := t.TempDir()
	_, z1 := writeParquet(t, dir, "float.parquet", []dataRow{{1, 0.5}, {2, 1.5}, {3, 2.5}})
	_, z2 := writeParquet(t, dir, "double.parquet", []dataRowDouble{{4, 1.5}, {5, 3.5}})
	pd, zd := writeParquet(t, dir, "eq.parquet", []delRow{{1.5}, {3.5}})
	eq := token.DeleteFile{Kind: token.DeleteEquality, Path: pd, Format: "PARQUET", Size: zd, EqualityIDs: []int{2}}
	floats := dataSplit("float.parquet", z1, 3, eq)
	doubles := dataSplit("double.parquet", z2, 2, eq)
	v1 := iceberg.NewSchema(1, field(1, "id", iceberg.PrimitiveTypes.Int64), field(2, "score", iceberg.PrimitiveTypes.Float32))
	v2 := iceberg.NewSchema(2, field(1, "id", iceberg.PrimitiveTypes.Int64), field(2, "score", iceberg.PrimitiveTypes.Float64))

	cache := deletes.NewCache(64<<20, nil)
	r := newReader(testFS(dir), reader.WithDeleteCache(cache))
	plain := newReader(testFS(dir))
	for _, tc := range []struct {
		name   string
		split  token.Split
		schema *iceberg.Schema
		want   []string
	}{
		{"float data, float schema", floats, v1, []string{`{"id":1,"score":0.5}`, `{"id":3,"score":2.5}`}},
		{"float data, double schema", floats, v2, []string{`{"id":1,"score":0.5}`, `{"id":3,"score":2.5}`}},
		{"double data, double schema", doubles, v2, nil},
		{"float data, float schema again", floats, v1, []string{`{"id":1,"score":0.5}`, `{"id":3,"score":2.5}`}},
	} {
		got, _ := readAll(t, r, tc.split, tc.schema)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if plainGot, _ := readAll(t, plain, tc.split, tc.schema); !slices.Equal(got, plainGot) {
			t.Errorf("%s: cached %q, uncached %q", tc.name, got, plainGot)
		}
	}
	if cs := cache.Stats(); cs.Misses[token.DeleteEquality] != 2 || cs.Hits[token.DeleteEquality] != 2 || cs.Entries != 2 {
		t.Errorf("cache stats %+v", cs)
	}
}

// TestDeleteCacheReadersDoNotShareEntries: two Readers on one cache share
// its bound, not its entries, since their FileIOs may map one path to two
// different files.
func TestDeleteCacheReadersDoNotShareEntries(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	var splitOf [2]token.Split
	var lines []string
	for i, dir := range []string{dirA, dirB} {
		s, l := writeIDs(t, dir, 10)
		// The same path in both, naming another position in each.
		_, z := writeParquet(t, dir, "del.parquet", []posDelete{{s.Data.Path, int64(i)}})
		s.Deletes = []token.DeleteFile{{Kind: token.DeletePosition, Path: bucket + "/del.parquet", Format: "PARQUET", Size: z}}
		splitOf[i], lines = s, l
	}
	cache := deletes.NewCache(64<<20, nil)
	a := newReader(testFS(dirA), reader.WithDeleteCache(cache))
	b := newReader(testFS(dirB), reader.WithDeleteCache(cache))
	if got, _ := readAll(t, a, splitOf[0], idSchema); !slices.Equal(got, keep(lines, 0)) {
		t.Errorf("reader A: got %q", got)
	}
	if got, _ := readAll(t, b, splitOf[1], idSchema); !slices.Equal(got, keep(lines, 1)) {
		t.Errorf("reader B: got %q", got)
	}
	if cs := cache.Stats(); cs.Entries != 2 || cs.Misses[token.DeletePosition] != 2 {
		t.Errorf("cache stats %+v", cs)
	}
}

// TestDeleteCacheScenarios reads every snapshot of every tablegen scenario
// without a cache and through one shared cache, twice (cold, then warm),
// and holds the three to the same bytes and counts.
func TestDeleteCacheScenarios(t *testing.T) {
	ctx := context.Background()
	// Snappy files: what the cache holds does not depend on the codec.
	cat := catalogtest.SnappyWrites(catalogtest.Local(t, filepath.Join(t.TempDir(), "warehouse")))
	fs := catalog.NewFS(nil, nil)
	cache := deletes.NewCache(64<<20, nil)
	plain, cached := newReader(fs), newReader(fs, reader.WithDeleteCache(cache))
	kinds := map[token.DeleteKind]bool{}
	for _, sc := range tablegen.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			tbl, err := sc.Build(ctx, cat, table.Identifier{"scenarios", sc.Name})
			if err != nil {
				t.Fatal(err)
			}
			for _, snap := range tbl.Metadata().Snapshots() {
				schema := snapshotSchema(t, tbl, snap.SnapshotID)
				ts := token.TableSchema{Schema: schema, NameMapping: tbl.Metadata().NameMapping()}
				tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, task := range tasks {
					s, err := splits.FromTask(tbl.Metadata(), tbl.MetadataLocation(), snap.SnapshotID, schema.ID, task)
					if err != nil {
						t.Fatal(err)
					}
					for _, d := range s.Deletes {
						kinds[d.Kind] = true
					}
					want, wantSt := runSplit(t, ctx, plain, s, ts)
					for _, pass := range []string{"cold", "warm"} {
						got, st := runSplit(t, ctx, cached, s, ts)
						if !bytes.Equal(got, want) {
							t.Fatalf("snapshot %d, %s (%s cache): rows differ\n got %s\nwant %s", snap.SnapshotID, s.Data.Path, pass, got, want)
						}
						st.DeleteFilesLoaded, wantSt.DeleteFilesLoaded = nil, nil
						if st.RowsRead != wantSt.RowsRead || st.RowsEmitted != wantSt.RowsEmitted || !maps.Equal(st.RowsDeleted, wantSt.RowsDeleted) {
							t.Fatalf("snapshot %d, %s (%s cache): stats %+v, want %+v", snap.SnapshotID, s.Data.Path, pass, st, wantSt)
						}
					}
				}
			}
		})
	}
	cs := cache.Stats()
	for kind := range kinds {
		if cs.Misses[kind] == 0 || cs.Hits[kind] < cs.Misses[kind] {
			t.Errorf("%s delete files: %d hits, %d misses; every split was read twice", kind, cs.Hits[kind], cs.Misses[kind])
		}
	}
	if len(kinds) < 3 {
		t.Errorf("the scenarios use the delete kinds %v, want all three", kinds)
	}
}
