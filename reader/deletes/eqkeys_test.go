package deletes

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/druidiceberg/sidecar/reader/column"
	"github.com/druidiceberg/sidecar/reader/encode"
	"github.com/druidiceberg/sidecar/reader/parquetpage"
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

// TestEqKeysIntHash: the hash EqualitySet.Contains takes from an integer is the
// filter's hash of the integer's key, so the shortcut hides no key.
func TestEqKeysIntHash(t *testing.T) {
	m := map[string]struct{}{}
	for i := range int64(1000) {
		m[string(encode.AppendKeyInt(nil, i*7-3000))] = struct{}{}
	}
	k := newEqKeys(m)
	for i := range int64(1000) {
		x := i*7 - 3000
		if k.hash(encode.AppendKeyInt(nil, x)) != k.intHash(uint64(x)) {
			t.Fatalf("%d: the integer's hash is not its key's", x)
		}
		if !k.mayContain(k.intHash(uint64(x))) {
			t.Fatalf("%d: the filter hides a key", x)
		}
	}
}

// TestEqSetWalk: a set on one integer column that walks its keys answers
// as the keys say, row after row, whether the column's values ascend,
// repeat, jump, go down or come in no order (after which it stops
// walking), over two delete files, and a null row still finds the null
// key.
func TestEqSetWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	deleted := map[int64]bool{}
	var files [2]map[string]struct{}
	for f := range files {
		files[f] = map[string]struct{}{string(encode.AppendKeyInt(nil, math.MinInt64+int64(f))): {}}
		deleted[math.MinInt64+int64(f)] = true
		for range 3000 {
			x := rng.Int64N(20_000) - 5_000
			files[f][string(encode.AppendKeyInt(nil, x))] = struct{}{}
			deleted[x] = true
		}
	}
	files[1]["\x00"] = struct{}{} // a null key
	ascending := func(n int, step int64) []int64 {
		var out []int64
		for x := int64(-6000); len(out) < n; x += rng.Int64N(step) {
			out = append(out, x)
		}
		return out
	}
	random := make([]int64, 5000)
	for i := range random {
		random[i] = rng.Int64N(22_000) - 6_000
	}
	descending := slices.Clone(ascending(3000, 3))
	slices.Reverse(descending)
	cases := []struct {
		name   string
		values []int64
		walks  bool // still walking at the end
	}{
		{"ascending, repeating", ascending(20_000, 2), true},
		{"ascending, jumping", append(ascending(3000, 40), math.MinInt64, math.MinInt64+1, math.MaxInt64), true},
		{"sorted runs", slices.Concat(ascending(3000, 4), ascending(3000, 7), ascending(3000, 3)), true},
		{"descending", descending, false},
		{"no order", random, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			one := &parquetpage.Values{N: 1, Int64: make([]int64, 1), Def: []uint8{1}}
			col := &column.Leaf{Type: encode.ValueType{Conv: encode.ConvInt64}, Cur: one, MaxDef: 1}
			set := &EqualitySet{ids: []int{1}, cols: []*column.Leaf{col}, consts: [][]byte{nil},
				keys: []*eqKeys{newEqKeys(maps.Clone(files[0])), newEqKeys(maps.Clone(files[1]))}}
			set.walks = make([]intWalk, len(set.keys))
			var kb []byte
			for i, x := range tc.values {
				one.Int64[0] = x
				var got bool
				if kb, got = set.Contains(kb); got != deleted[x] {
					t.Fatalf("value %d (row %d): deleted %v, want %v", x, i, got, deleted[x])
				}
			}
			if walking := set.walks != nil; walking != tc.walks {
				t.Errorf("walking at the end: %v, want %v", walking, tc.walks)
			}
			one.Def[0] = 0
			if _, got := set.Contains(kb); !got {
				t.Errorf("a null row is not deleted by the null key")
			}
		})
	}
}
