package deletes

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// eqKeys is the set of keys of one equality delete file (integers sorted,
// other keys in a map), with a small filter in front of them: most rows of
// a data file are not deleted, and two bits of one hash tell most of them
// so without a lookup (whose cache misses dominate on sets of many keys). It is immutable once built,
// so streams share it through the delete cache.
type eqKeys struct {
	m      map[string]struct{} // the keys that are not in ints
	seed   maphash.Seed
	salt   uint64   // for the hash of 9-byte keys (integers)
	filter []uint64 // a bitset of 2^k bits, about 16 per key
	mask   uint64
	// ints are the integer keys (appendKeyInt's) in ascending order: 8
	// bytes a key where the map takes some 70, and the order that streams
	// walk (intWalk).
	ints []int64
}

// bitsPerKey sizes the filter: with two bits per key set out of 16, about 1
// row in 70 that is not deleted still reaches the map.
const bitsPerKey = 16

// filterBytesPerKey is what the filter holds for each key, at most: the
// filter's size is rounded up to a power of two.
const filterBytesPerKey = 2 * bitsPerKey / 8

// newEqKeys builds the filter over the keys of m, and moves its integer
// keys into ints; m is not copied and must not change afterwards.
func newEqKeys(m map[string]struct{}) *eqKeys {
	k := &eqKeys{m: m, seed: maphash.MakeSeed(), salt: rand.Uint64()}
	n := max(64, uint64(len(m))*bitsPerKey)
	n = 1 << bits.Len64(n-1) // a power of two
	k.filter, k.mask = make([]uint64, n/64), n-1
	for key := range m {
		h := k.hash([]byte(key))
		a, b := h&k.mask, (h>>32)&k.mask
		k.filter[a/64] |= 1 << (a % 64)
		k.filter[b/64] |= 1 << (b % 64)
		if isIntKey(key) {
			k.ints = append(k.ints, int64(binary.BigEndian.Uint64([]byte(key[1:]))))
			delete(m, key)
		}
	}
	slices.Sort(k.ints)
	return k
}

// isIntKey reports whether key is appendKeyInt's.
func isIntKey[T string | []byte](key T) bool { return len(key) == 9 && key[0] == 1 }

// contains reports whether key is in the set.
func (k *eqKeys) contains(key []byte) bool {
	if !k.mayContain(k.hash(key)) {
		return false
	}
	if isIntKey(key) {
		_, ok := slices.BinarySearch(k.ints, int64(binary.BigEndian.Uint64(key[1:])))
		return ok
	}
	_, ok := k.m[string(key)]
	return ok
}

// hash is the filter's hash of a key: for a key of 9 bytes (appendKeyInt's
// integers, and a few others) a mix of its last 8, which intHash gives
// from the integer itself; maphash otherwise.
func (k *eqKeys) hash(key []byte) uint64 {
	if len(key) == 9 {
		return k.intHash(binary.BigEndian.Uint64(key[1:]))
	}
	return maphash.Bytes(k.seed, key)
}

// intHash is hash of an integer key, salted per set (splitmix64's
// finalizer).
func (k *eqKeys) intHash(u uint64) uint64 {
	u ^= k.salt
	u ^= u >> 30
	u *= 0xbf58476d1ce4e5b9
	u ^= u >> 27
	u *= 0x94d049bb133111eb
	return u ^ u>>31
}

// mayContain is the filter: false means the key is certainly absent.
func (k *eqKeys) mayContain(h uint64) bool {
	a, b := h&k.mask, (h>>32)&k.mask
	return k.filter[a/64]&(1<<(a%64)) != 0 && k.filter[b/64]&(1<<(b%64)) != 0
}

// size estimates the memory of the set: its keys, the map, the filter and
// the sorted integers.
func (k *eqKeys) size() int64 {
	return equalityKeysSize(k.m) + int64(len(k.filter))*8 + int64(cap(k.ints))*8
}

// intWalk looks up the integer keys of one column in a set's ascending
// ints, row after row of one data file. Where the column's values ascend
// (ids appended in order, the usual table with equality deletes on its
// id), a lookup is a comparison, or a few steps forward through memory
// read in order, where the filter costs a cache miss a row; a value
// further on, or below the one before, is found by a binary search.
type intWalk struct {
	i    int   // ints[:i] are less than last
	last int64 // the value looked up before
}

// walkSteps is how many keys a lookup steps over before it searches.
const walkSteps = 8

// contains reports whether v is in ints, and whether v is below the value
// looked up before (the column does not ascend there).
func (w *intWalk) contains(ints []int64, v int64) (found, back bool) {
	i := w.i
	if back = v < w.last; back {
		i = 0
	}
	w.last = v
	for n := 0; i < len(ints) && ints[i] < v; i++ {
		if n++; n == walkSteps {
			j, _ := slices.BinarySearch(ints[i:], v)
			i += j
			break
		}
	}
	w.i = i
	return i < len(ints) && ints[i] == v, back
}

// len is the number of keys.
func (k *eqKeys) len() int { return len(k.m) + len(k.ints) }
