package reader

import (
	"fmt"
	"testing"
)

// TestEqKeys: the filter in front of the map never hides a key and never
// invents one, whatever the set's size.
func TestEqKeys(t *testing.T) {
	for _, n := range []int{0, 1, 3, 64, 1000, 50_000} {
		m := map[string]struct{}{}
		for i := range n {
			m[fmt.Sprintf("key-%d", 2*i)] = struct{}{}
		}
		k := newEqKeys(m)
		if k.len() != n {
			t.Fatalf("%d keys: len %d", n, k.len())
		}
		passed := 0
		for i := range 2*n + 100 {
			key := fmt.Sprintf("key-%d", i)
			_, want := m[key]
			if got := k.contains([]byte(key)); got != want {
				t.Fatalf("%d keys: contains(%q) = %v, want %v", n, key, got, want)
			}
			h := k.hash([]byte(key))
			if !want && k.mayContain(h) {
				passed++
			}
		}
		// With 16 bits per key and two bits set, few absent keys get past
		// the filter (about 1.5% in theory; 10% allows for small sets).
		if absent := n + 100; n >= 1000 && passed*10 > absent {
			t.Errorf("%d keys: %d of %d absent keys passed the filter", n, passed, absent)
		}
	}
}

// TestEqKeysIntHash: the hash eqSet.contains takes from an integer is the
// filter's hash of the integer's key, so the shortcut hides no key.
func TestEqKeysIntHash(t *testing.T) {
	m := map[string]struct{}{}
	for i := range int64(1000) {
		m[string(appendKeyInt(nil, i*7-3000))] = struct{}{}
	}
	k := newEqKeys(m)
	for i := range int64(1000) {
		x := i*7 - 3000
		if k.hash(appendKeyInt(nil, x)) != k.intHash(uint64(x)) {
			t.Fatalf("%d: the integer's hash is not its key's", x)
		}
		if !k.mayContain(k.intHash(uint64(x))) {
			t.Fatalf("%d: the filter hides a key", x)
		}
	}
}
