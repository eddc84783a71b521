package encode

import (
	"errors"
	"testing"

	"github.com/druidiceberg/sidecar/internal/cost"
)

// FuzzWKBCounts builds WKB values around the counts the fuzzer claims:
// depth geometry collections (or multi-geometries, by outer) of one
// element each, around a geometry of type code (Z, M and PostGIS codes
// included) that claims count elements, its first ring claiming ring
// points, and then the fuzzer's bytes as its coordinates. Seeds claim
// counts in the billions (2^31, 2^32-1, 3e9) for every type, in both byte
// orders, nested up to past maxWKBDepth. However much a value claims, the
// encoder must end in errWKB (the reader's ErrCorruptFile) leaving the
// output as it came, whenever the claim passes the bytes (each element
// takes one byte at least), and allocate no more than wkbAllocBound for
// the value's bytes: nothing is sized by a count.
//
//	go test ./reader/encode -run '^$' -fuzz '^FuzzWKBCounts$' -fuzztime 60s
func FuzzWKBCounts(f *testing.F) {
	codes := []uint32{1, 2, 3, 4, 5, 6, 7, 15, 16, 17, 1002, 2003, 3004, 0x20000002, 0xa0000003}
	for i, code := range codes {
		for _, count := range []uint32{1 << 31, 1<<32 - 1, 3_000_000_000, 2, 0} {
			f.Add(i%2 == 1, uint32(7), uint8(i%3), code, count, uint32(1<<31), le().f64(0, 0, 1, 1, 0, 0).b)
		}
	}
	f.Add(false, uint32(7), uint8(maxWKBDepth+1), uint32(2), uint32(1), uint32(0), le().f64(1, 2).b)
	f.Add(true, uint32(6), uint8(1), uint32(3), uint32(1), uint32(4_000_000_000), be().f64(0, 0, 1, 0, 1, 1, 0, 0).b)
	f.Add(false, uint32(16), uint8(1), uint32(17), uint32(1), uint32(1), le().u32(4).f64(0, 0, 1, 0, 0, 1, 0, 0).b)
	f.Fuzz(func(t *testing.T, be bool, outer uint32, depth uint8, code, count, ring uint32, tail []byte) {
		if len(tail) > maxFuzzBytes {
			tail = tail[:maxFuzzBytes]
		}
		depth %= maxWKBDepth + 8
		raw := wkbClaiming(be, outer, int(depth), code, count, ring, tail)
		// Where count is a count: not a point's coordinate or a PostGIS
		// SRID, and not bytes a wrapper that is no collection reads as
		// its own coordinates.
		counted := (code&0x0fffffff)%1000 != wkbPoint && code&0x20000000 == 0 && (depth == 0 || outer == wkbGeometryCollection)
		checkWKBBound(t, raw, count, counted)
	})
}

// wkbClaiming builds FuzzWKBCounts' value: depth collections of type outer
// with one element each, around a geometry of type code whose count (for
// a point, its first coordinate's low half) is count and whose first ring
// (for a polygon or triangle) has ring points, then tail.
func wkbClaiming(be bool, outer uint32, depth int, code, count, ring uint32, tail []byte) []byte {
	w := &wkbBuilder{be: be}
	for range depth {
		w.geom(outer).u32(1)
	}
	w.geom(code).u32(count)
	switch code % 1000 {
	case wkbPolygon, wkbTriangle:
		w.u32(ring)
	}
	return append(w.b, tail...)
}

// wkbAllocBound is the most appendWKT may allocate for a value of n bytes:
// its output (at most 39 bytes a byte and a few more) grown by append, and
// room for what the fuzzing machinery allocates meanwhile.
func wkbAllocBound(n int) uint64 { return 64<<10 + 160*uint64(n) }

// checkWKBBound is the body of FuzzWKBCounts.
func checkWKBBound(t *testing.T, raw []byte, count uint32, counted bool) {
	var out []byte
	var err error
	allocated := cost.AllocatedBy(func() { out, err = appendWKT([]byte("x"), raw) })
	if allocated > wkbAllocBound(len(raw)) {
		t.Fatalf("%x: %d bytes allocated for a value of %d bytes claiming %d elements", raw, allocated, len(raw), count)
	}
	if err != nil {
		if !errors.Is(err, errWKB) || string(out) != "x" {
			t.Fatalf("%x: error %v with output %q; want errWKB and the output as it came", raw, err, out)
		}
		return
	}
	if counted && uint64(count) > uint64(len(raw)) {
		t.Fatalf("%x: %d elements claimed in %d bytes, and the encoder wrote %q", raw, count, len(raw), out)
	}
}
