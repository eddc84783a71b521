package reader

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// eqKeys is the set of keys of one equality delete file, with a small
// filter in front of the map: most rows of a data file are not deleted, and
// two bits of one hash tell most of them so without a map lookup (whose
// cache misses dominate on sets of many keys). It is immutable once built,
// so streams share it through the delete cache.
type eqKeys struct {
	m      map[string]struct{}
	seed   maphash.Seed
	salt   uint64   // for the hash of 9-byte keys (integers)
	filter []uint64 // a bitset of 2^k bits, about 16 per key
	mask   uint64
}

// bitsPerKey sizes the filter: with two bits per key set out of 16, about 1
// row in 70 that is not deleted still reaches the map.
const bitsPerKey = 16

// filterBytesPerKey is what the filter holds for each key, at most: the
// filter's size is rounded up to a power of two.
const filterBytesPerKey = 2 * bitsPerKey / 8

// newEqKeys builds the filter over the keys of m; m is not copied and must
// not change afterwards.
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

// size estimates the memory of the set: its keys, the map and the filter.
func (k *eqKeys) size() int64 {
	return equalityKeysSize(k.m) + int64(len(k.filter))*8
}

// len is the number of keys.
func (k *eqKeys) len() int { return len(k.m) }
