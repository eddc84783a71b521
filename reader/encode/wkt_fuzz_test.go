package encode

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/twpayne/go-geom"
	"github.com/twpayne/go-geom/encoding/wkb"
	"github.com/twpayne/go-geom/encoding/wkbcommon"

	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// FuzzWKT feeds arbitrary bytes to the WKB to WKT encoder. It must never
// panic, and either fail with errWKB leaving the output as it came, or
// write one JSON string of at most 39 characters per byte of WKB (a
// coordinate's 8 bytes can be 310 characters without an exponent, and a
// few more for the first header), so a damaged value cannot make the
// reader allocate beyond its bytes. Where go-geom, an independent WKB
// decoder, reads the same bytes as a whole geometry, the encoder must
// too, and its WKT must be the oracle's (tablegen.OracleWKT: go-geom's
// WKT, with a multipoint's points parenthesized as the OGC grammar has
// them) but for how numbers are written.
//
//	go test ./reader/encode -run '^$' -fuzz '^FuzzWKT$' -fuzztime 60s
func FuzzWKT(f *testing.F) {
	square := func(w *wkbBuilder) *wkbBuilder { return w.u32(5).f64(0, 0, 1, 0, 1, 1, 0, 1, 0, 0) }
	for _, seed := range [][]byte{
		le().geom(1).f64(1, 2).b,
		be().geom(1001).f64(1, 2, 3).b,
		le().geom(3001).f64(1, 2, 3, 4).b,
		le().geom(2).u32(2).f64(0, 0, 1, 1).b,
		square(le().geom(3).u32(1)).b,
		le().geom(4).u32(1).geom(1).f64(1, 2).b,
		le().geom(5).u32(1).geom(2).u32(1).f64(1, 2).b,
		square(le().geom(6).u32(1).geom(3).u32(1)).b,
		le().geom(7).u32(2).geom(1).f64(1, 2).geom(7).u32(0).b,
		le().geom(16).u32(1).geom(17).u32(1).u32(4).f64(0, 0, 1, 0, 0, 1, 0, 0).b,
		le().geom(0xa0000001).u32(4326).f64(1, 2, 3).b,
	} {
		f.Add(seed)
	}
	// go-geom allocates what a count asks for, up to this bound.
	wkbcommon.MaxGeometryElements = [4]int{0, maxFuzzBytes, maxFuzzBytes, maxFuzzBytes}
	f.Fuzz(checkWKT)
}

// checkWKT is the body of FuzzWKT.
func checkWKT(t *testing.T, raw []byte) {
	if len(raw) > maxFuzzBytes {
		raw = raw[:maxFuzzBytes]
	}
	out, err := appendWKT([]byte("x"), raw)
	if err != nil {
		if !errors.Is(err, errWKB) || string(out) != "x" {
			t.Fatalf("%x: error %v with output %q; want errWKB and the output as it came", raw, err, out)
		}
	} else {
		text := out[1:]
		var s string
		if json.Unmarshal(text, &s) != nil {
			t.Fatalf("%x: not a JSON string: %s", raw, text)
		}
		if len(text) > 39*len(raw)+32 {
			t.Fatalf("%x: %d bytes of WKT for %d bytes of WKB", raw, len(text), len(raw))
		}
	}

	r := bytes.NewReader(raw)
	_, gerr := readGoGeom(r)
	if gerr != nil || r.Len() > 0 {
		return // not one whole geometry to go-geom
	}
	if err != nil {
		if strings.Contains(err.Error(), "nested deeper") {
			return // go-geom has no bound
		}
		t.Fatalf("%x: go-geom reads it, the encoder fails: %v", raw, err)
	}
	want, werr := tablegen.OracleWKT(raw)
	if werr != nil {
		return // a geometry go-geom cannot write
	}
	if got := string(out[2 : len(out)-1]); !sameWKT(got, want) {
		t.Fatalf("%x: the encoder writes %q, go-geom %q", raw, got, want)
	}
}

// sameWKT reports whether two WKT texts spell the same geometry: the same
// words and punctuation, and where a number is spelt differently, ours
// (a) is what appendCoordinate writes for go-geom's value (b): the two
// write numbers by different rules, so comparing values would fail where
// ours rounds to 16 fraction digits as JTS does.
func sameWKT(a, b string) bool {
	ta, tb := wktTokens(a), wktTokens(b)
	if len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] == tb[i] {
			continue
		}
		y, err := strconv.ParseFloat(tb[i], 64)
		if err != nil || string(appendCoordinate(nil, y)) != ta[i] {
			return false
		}
	}
	return true
}

// wktTokens splits WKT into words, numbers and punctuation.
func wktTokens(s string) []string {
	var out []string
	for _, f := range strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ", ",", " , ").Replace(s)) {
		out = append(out, f)
	}
	return out
}

// readGoGeom decodes WKB with go-geom, which sizes its slices from the
// counts in the bytes up to wkbcommon.MaxGeometryElements (FuzzWKT sets
// it to what the fuzzer's inputs can hold).
func readGoGeom(r *bytes.Reader) (g geom.T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errWKB
		}
	}()
	return wkb.Read(r, wkbcommon.WKBOptionEmptyPointHandling(wkbcommon.EmptyPointHandlingNaN))
}
