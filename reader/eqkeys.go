package reader

import (
	"hash/maphash"
	"math/bits"
)

// eqKeys is the set of keys of one equality delete file, with a small
// filter in front of the map: most rows of a data file are not deleted, and
// two bits of one hash tell most of them so without a map lookup (whose
// cache misses dominate on sets of many keys). It is immutable once built,
// so streams share it through the delete cache.
type eqKeys struct {
	m      map[string]struct{}
	seed   maphash.Seed
	filter []uint64 // a bitset of 2^k bits, about 16 per key
	mask   uint64
}

// bitsPerKey sizes the filter: with two bits per key set out of 16, about 1
// row in 70 that is not deleted still reaches the map.
const bitsPerKey = 16

// newEqKeys builds the filter over the keys of m; m is not copied and must
// not change afterwards.
func newEqKeys(m map[string]struct{}) *eqKeys {
	k := &eqKeys{m: m, seed: maphash.MakeSeed()}
	n := max(64, uint64(len(m))*bitsPerKey)
	n = 1 << bits.Len64(n-1) // a power of two
	k.filter, k.mask = make([]uint64, n/64), n-1
	for key := range m {
		// maphash.String and maphash.Bytes agree on equal contents.
		h := maphash.String(k.seed, key)
		a, b := h&k.mask, (h>>32)&k.mask
		k.filter[a/64] |= 1 << (a % 64)
		k.filter[b/64] |= 1 << (b % 64)
	}
	return k
}

// contains reports whether key is in the set.
func (k *eqKeys) contains(key []byte) bool {
	if !k.mayContain(k.hash(key)) {
		return false
	}
	_, ok := k.m[string(key)]
	return ok
}

func (k *eqKeys) hash(key []byte) uint64 { return maphash.Bytes(k.seed, key) }

// mayContain is the filter: false means the key is certainly absent.
func (k *eqKeys) mayContain(h uint64) bool {
	a, b := h&k.mask, (h>>32)&k.mask
	return k.filter[a/64]&(1<<(a%64)) != 0 && k.filter[b/64]&(1<<(b%64)) != 0
}

// size estimates the memory of the set: its keys, the map and the filter.
func (k *eqKeys) size() int64 {
	return equalityKeysSize(k.m) + int64(len(k.filter))*8
}

// len is the number of keys.
func (k *eqKeys) len() int { return len(k.m) }
