package deletes

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/promreg"
	"github.com/druidiceberg/sidecar/token"
)

// Cache holds decoded delete files for the Readers that share it
// (reader.WithDeleteCache), so that a delete file that applies to many splits is
// read and decoded once while it stays cached, not once per split. It is
// bounded by an estimate of the memory its entries hold: past the bound it
// drops the least recently used ones, and an entry larger than the whole
// bound is used by the streams that asked for it but not kept. An entry a
// stream still uses is never evicted: while every entry is in use the cache
// may hold more than its bound, and gives it back as the streams end.
//
// A first request for a delete file loads it; requests for the same file
// that arrive while it loads wait for that load instead of starting their
// own. A failed load is not kept: every waiter gets its error, and the next
// request tries again.
//
// What is cached is what does not depend on the split: a positional delete
// file as one position bitmap per data file it names, a deletion vector as
// its bitmap, an equality delete file as its set of keys. Entries are never
// modified once loaded; streams that need a union build a new bitmap.
//
// A Cache is safe for concurrent use.
type Cache struct {
	max     int64
	metrics *cacheCollectors
	group   singleflight.Group

	mu      sync.Mutex
	entries map[string]*list.Element // of *cacheEntry
	lru     list.List                // most recently used first
	bytes   int64
	spaces  uint64 // namespaces handed to Readers
	hits    map[token.DeleteKind]int64
	misses  map[token.DeleteKind]int64
	evicted int64
	flying  int // callers between a miss and the end of its load (tests)
}

// CacheStats are a Cache's counts since it was created.
type CacheStats struct {
	// Hits and Misses count requests for delete files by kind: a hit got
	// the decoded file without reading it (from the cache, or by waiting
	// on a load of the same file already running), a miss read the file
	// itself or waited on a load that failed. As long as no load fails,
	// Misses is the number of delete files read from storage.
	Hits, Misses map[token.DeleteKind]int64
	// Evictions counts entries dropped to stay within the bound.
	Evictions int64
	// Entries and Bytes are what the cache holds now; Bytes is an
	// estimate of the memory of the decoded entries.
	Entries int
	Bytes   int64
}

// NewCache returns a cache that keeps decoded delete files up to an
// estimated maxBytes of memory (with maxBytes <= 0 it keeps nothing, yet
// still lets concurrent first requests share one load). Its hits, misses,
// evictions and bytes are counted on reg (nil: not exported), into the same
// series as every other Cache on the registry.
func NewCache(maxBytes int64, reg prometheus.Registerer) *Cache {
	return &Cache{
		max:     maxBytes,
		metrics: newCacheCollectors(reg),
		entries: map[string]*list.Element{},
		hits:    map[token.DeleteKind]int64{},
		misses:  map[token.DeleteKind]int64{},
	}
}

// Flying returns how many callers are between a cache miss and the end of
// the load they run or wait on (a caller that waits on another's load
// counts too), so that a caller (a test) can tell when concurrent callers
// all wait on one load.
func (c *Cache) Flying() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flying
}

// Stats returns the cache's counts.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{
		Hits:      cloneCounts(c.hits),
		Misses:    cloneCounts(c.misses),
		Evictions: c.evicted,
		Entries:   len(c.entries),
		Bytes:     c.bytes,
	}
}

func cloneCounts(m map[token.DeleteKind]int64) map[token.DeleteKind]int64 {
	out := make(map[token.DeleteKind]int64, 3)
	for _, k := range []token.DeleteKind{token.DeletePosition, token.DeleteEquality, token.DeleteDeletionVector} {
		out[k] = m[k]
	}
	return out
}

// Space returns a namespace for one Reader's keys. Readers never share
// entries: each has its own FileIO and location map, which decide what
// bytes a path names.
func (c *Cache) Space() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spaces++
	return c.spaces
}

type cacheEntry struct {
	key  string
	val  any
	size int64
	// res is what the entry holds of the memory budget, given back when it
	// leaves the cache; refs counts the streams using it, which keep it
	// from leaving (see pin).
	res  *memory.Reservation
	refs int
}

// get returns the value cached under key, or loads it once for every
// concurrent caller. load returns the value and its estimated size in
// bytes, having reserved that from the memory budget in res, which the
// entry then holds. loaded says whether this caller ran the load. unpin,
// which the caller calls once it no longer uses the value, keeps the
// entry in the cache until then; when the value was not kept (larger than
// the cache), unpin gives res back instead.
func (c *Cache) get(key string, kind token.DeleteKind, res *memory.Reservation, load func() (any, int64, error)) (val any, loaded bool, unpin func(), err error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.lru.MoveToFront(e)
		c.hits[kind]++
		ce := c.pinLocked(e)
		c.mu.Unlock()
		c.observeLookup(kind, true)
		return ce.val, false, c.unpinner(ce), nil
	}
	c.flying++
	c.mu.Unlock()

	var stored *cacheEntry
	val, err, _ = c.group.Do(key, func() (v any, err error) {
		c.mu.Lock()
		if e, ok := c.entries[key]; ok {
			// Stored by a load that ended between the lookup above and Do.
			c.mu.Unlock()
			return e.Value.(*cacheEntry).val, nil
		}
		c.mu.Unlock()
		loaded = true
		v, size, err := load()
		if err != nil {
			return nil, err
		}
		stored = c.add(key, v, size, res)
		return v, nil
	})

	hit := err == nil && !loaded
	c.mu.Lock()
	c.flying--
	if hit {
		c.hits[kind]++
		// A waiter on another's load: pin what that load stored.
		if e, ok := c.entries[key]; ok && e.Value.(*cacheEntry).val == val {
			stored = c.pinLocked(e)
		}
	} else {
		c.misses[kind]++
	}
	c.mu.Unlock()
	c.observeLookup(kind, hit)
	switch {
	case err != nil:
		return nil, loaded, func() {}, err
	case stored != nil:
		return val, loaded, c.unpinner(stored), nil
	case loaded:
		return val, loaded, res.Release, nil
	}
	return val, loaded, func() {}, nil
}

func (c *Cache) pinLocked(e *list.Element) *cacheEntry {
	ce := e.Value.(*cacheEntry)
	ce.refs++
	return ce
}

// unpinner returns the function that ends one use of e: an entry no
// stream uses may leave the cache, and does at once while the cache is
// over its bound.
func (c *Cache) unpinner(e *cacheEntry) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			e.refs--
			out := c.evictLocked(func() bool { return c.bytes > c.max })
			c.mu.Unlock()
			c.gone(out)
		})
	}
}

func (c *Cache) observeLookup(kind token.DeleteKind, hit bool) {
	c.metrics.lookup(kind, hit)
}

// add stores a loaded value, pinned by its loader, and evicts the least
// recently used entries that no stream uses past the bound; a value larger
// than the bound is not stored (nil).
func (c *Cache) add(key string, val any, size int64, res *memory.Reservation) *cacheEntry {
	size += int64(len(key)) + entryOverhead
	if size > c.max {
		return nil
	}
	c.mu.Lock()
	if _, ok := c.entries[key]; ok {
		c.mu.Unlock()
		return nil
	}
	e := &cacheEntry{key: key, val: val, size: size, res: res, refs: 1}
	c.entries[key] = c.lru.PushFront(e)
	c.bytes += size
	out := c.evictLocked(func() bool { return c.bytes > c.max })
	c.mu.Unlock()
	c.metrics.cacheBytes.Add(float64(size))
	c.gone(out)
	return e
}

// Reclaim evicts entries that no stream uses, least recently used first,
// until they held need bytes or none is left: the memory budget calls it
// (memory.Budget.OnPressure) before it refuses a reservation.
func (c *Cache) Reclaim(need int64) {
	c.mu.Lock()
	freed := int64(0)
	out := c.evictLocked(func() bool { return freed < need }, &freed)
	c.mu.Unlock()
	c.gone(out)
}

// evictLocked drops the least recently used entries that no stream uses
// while more is true, adding their sizes to each of freed, and returns
// them.
func (c *Cache) evictLocked(more func() bool, freed ...*int64) []*cacheEntry {
	var out []*cacheEntry
	for e := c.lru.Back(); e != nil && more(); {
		prev := e.Prev()
		if ce := e.Value.(*cacheEntry); ce.refs <= 0 {
			c.lru.Remove(e)
			delete(c.entries, ce.key)
			c.bytes -= ce.size
			for _, f := range freed {
				*f += ce.size
			}
			out = append(out, ce)
		}
		e = prev
	}
	c.evicted += int64(len(out))
	return out
}

// gone gives back the memory of evicted entries and reports them; called
// without the lock.
func (c *Cache) gone(out []*cacheEntry) {
	if len(out) == 0 {
		return
	}
	delta := int64(0)
	for _, e := range out {
		e.res.Release()
		delta -= e.size
	}
	c.metrics.cacheBytes.Add(float64(delta))
	c.metrics.cacheEvictions.Add(float64(len(out)))
}

// The memory estimates. A string-keyed map entry costs its key's bytes and
// about 64 more (the string header, the map slot and its control byte at the
// map's load factor after growth, and the key allocation's rounding): a
// million 9-byte equality keys hold 71.6 bytes each, measured with
// runtime.ReadMemStats after a collection; a roaring bitmap
// costs its serialized size and a few hundred bytes of structs, slices and
// its map of 32-bit buckets; a cache entry costs its key, a list element
// and the map entry that finds it.
const (
	mapEntryOverhead = 64
	mapOverhead      = 64
	bitmapOverhead   = 320
	entryOverhead    = 160
)

// bitmapSize estimates the memory of a position bitmap.
func bitmapSize(bm *dv.RoaringPositionBitmap) int64 {
	var n countWriter
	// Serialize only fails when its writer does.
	_ = bm.Serialize(&n)
	return int64(n) + bitmapOverhead
}

type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) {
	*w += countWriter(len(p))
	return len(p), nil
}

// positionEntry is a decoded positional delete file.
type positionEntry struct {
	// byPath holds the deleted positions of every data file the file
	// names, by the path the file spells.
	byPath map[string]*dv.RoaringPositionBitmap
	// corrupt holds, for a data file whose rows include an impossible
	// position (null or negative), that position as the error gives it: a
	// split of that data file fails, as it does without the cache, and the
	// other data files are unaffected.
	corrupt map[string]string
}

func (e *positionEntry) size() int64 {
	n := int64(mapOverhead)
	for p, bm := range e.byPath {
		n += int64(len(p)) + mapEntryOverhead + bitmapSize(bm)
	}
	for p, v := range e.corrupt {
		n += int64(len(p)+len(v)) + mapEntryOverhead
	}
	return n
}

// equalityKeysSize estimates the memory of a set of equality keys.
func equalityKeysSize(keys map[string]struct{}) int64 {
	n := int64(mapOverhead)
	for k := range keys {
		n += int64(len(k)) + mapEntryOverhead
	}
	return n
}

// keyBuilder spells a cache key: a kind, the Reader's namespace, then
// fields that cannot run into each other (strings are length-prefixed).
type keyBuilder []byte

func newKey(kind byte, space uint64) keyBuilder {
	return binary.AppendUvarint(keyBuilder{kind}, space)
}

func (k keyBuilder) str(s string) keyBuilder {
	return append(binary.AppendUvarint(k, uint64(len(s))), s...)
}

func (k keyBuilder) int(v int64) keyBuilder { return binary.AppendVarint(k, v) }

// positionKey identifies a decoded positional delete file: its path as the
// manifest spells it, and its size; with dataPath, only the positions of
// that data file.
func positionKey(space uint64, d token.DeleteFile, dataPath string) string {
	return string(newKey('p', space).str(d.Path).int(d.Size).str(dataPath))
}

// splitPositionKey identifies the positions that a positional delete file
// gives the data files of one split, only: a digest of their paths.
func splitPositionKey(space uint64, d token.DeleteFile, only map[string]bool) string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(only)) {
		_, _ = h.Write(binary.AppendUvarint(nil, uint64(len(p))))
		_, _ = h.Write([]byte(p))
	}
	return string(newKey('s', space).str(d.Path).int(d.Size).str(string(h.Sum(nil))))
}

// deletionVectorKey identifies a deletion vector: its puffin file, the
// blob's offset and length, and what the blob is checked against (the data
// file it references and its cardinality).
func deletionVectorKey(space uint64, d token.DeleteFile, ref string) string {
	return string(newKey('v', space).str(d.Path).int(*d.ContentOffset).int(*d.ContentSize).
		str(ref).int(d.Records))
}

// equalityKey identifies the keys of an equality delete file as they are
// encoded for a table schema: the file, its equality ids, the Iceberg type
// of each (which fixes the key encoding, see appendKey), and the table's
// name mapping (which resolves the columns of a file without field ids).
func equalityKey(space uint64, d token.DeleteFile, t token.TableSchema) (string, error) {
	k := newKey('e', space).str(d.Path).int(d.Size).int(int64(len(d.EqualityIDs)))
	for _, id := range d.EqualityIDs {
		f, err := equalityField(t.Schema, id, d.Path)
		if err != nil {
			return "", err
		}
		k = k.int(int64(id)).str(f.Type.String())
	}
	return string(k.int(int64(nameMappingDigest(t.NameMapping)))), nil
}

// nameMappingDigest hashes a name mapping; 0 for none.
func nameMappingDigest(nm iceberg.NameMapping) uint64 {
	if len(nm) == 0 {
		return 0
	}
	h := fnv.New64a()
	var walk func(fields []iceberg.MappedField)
	walk = func(fields []iceberg.MappedField) {
		var b []byte
		for _, f := range fields {
			b = strconv.AppendInt(b[:0], int64(f.ID()), 10)
			b = append(b, '[')
			for _, n := range f.Names {
				b = append(strconv.AppendInt(b, int64(len(n)), 10), ':')
				b = append(b, n...)
			}
			_, _ = h.Write(append(b, '{'))
			walk(f.Fields)
			_, _ = h.Write([]byte{'}'})
		}
	}
	walk(nm)
	return h.Sum64()
}

// union returns the union of bitmaps without modifying any of them: nil for
// none, the bitmap itself for one, a new bitmap otherwise.
func union(bms []*dv.RoaringPositionBitmap) *dv.RoaringPositionBitmap {
	bms = slices.DeleteFunc(bms, func(bm *dv.RoaringPositionBitmap) bool { return bm == nil })
	switch len(bms) {
	case 0:
		return nil
	case 1:
		return bms[0]
	}
	out := dv.NewRoaringPositionBitmap()
	for _, bm := range bms {
		out.Or(bm)
	}
	return out
}

// cacheCollectors are the delete cache's metrics. Every Cache (and
// Reader, see RegisterCacheMetrics) built on one registry counts into the same
// collectors (promreg.Register).
type cacheCollectors struct {
	cacheHits, cacheMisses *prometheus.CounterVec
	cacheEvictions         prometheus.Counter
	cacheBytes             prometheus.Gauge
}

// RegisterCacheMetrics registers the delete cache's collectors on reg
// whether a cache runs or not, so that a sidecar without one exports them
// at zero as it always has.
func RegisterCacheMetrics(reg prometheus.Registerer) { newCacheCollectors(reg) }

// newCacheCollectors registers the delete cache's collectors on reg (nil:
// none, they count unexported).
func newCacheCollectors(reg prometheus.Registerer) *cacheCollectors {
	counter := func(name, help string) prometheus.Counter {
		return promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
	}
	byKind := func(name, help string) *prometheus.CounterVec {
		return promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"kind"}))
	}
	return &cacheCollectors{
		cacheHits: byKind("sidecar_delete_cache_hits_total",
			"Delete files a split needed that the delete cache answered without reading the file (held, or being loaded for another split), by kind."),
		cacheMisses: byKind("sidecar_delete_cache_misses_total",
			"Delete files a split needed that the delete cache did not hold, so the file was read and decoded (or its load failed), by kind."),
		cacheEvictions: counter("sidecar_delete_cache_evictions_total",
			"Decoded delete files dropped from the delete cache, least recently used first, to stay within --delete-cache-size."),
		cacheBytes: promreg.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sidecar_delete_cache_bytes",
			Help: "Estimated memory held by the decoded delete files in the delete cache, in bytes.",
		})),
	}
}

// lookup counts a request for a delete file of kind (Cache.Stats
// says what a hit is).
func (c *cacheCollectors) lookup(kind token.DeleteKind, hit bool) {
	if hit {
		c.cacheHits.WithLabelValues(string(kind)).Inc()
	} else {
		c.cacheMisses.WithLabelValues(string(kind)).Inc()
	}
}
