package reader

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// wkbBuilder builds WKB values for the tests: each method appends to the value in
// the builder's byte order.
type wkbBuilder struct {
	b  []byte
	be bool
}

func (w *wkbBuilder) order() *wkbBuilder {
	if w.be {
		w.b = append(w.b, 0)
	} else {
		w.b = append(w.b, 1)
	}
	return w
}

func (w *wkbBuilder) u32(v uint32) *wkbBuilder {
	if w.be {
		w.b = binary.BigEndian.AppendUint32(w.b, v)
	} else {
		w.b = binary.LittleEndian.AppendUint32(w.b, v)
	}
	return w
}

func (w *wkbBuilder) f64(vs ...float64) *wkbBuilder {
	for _, v := range vs {
		if w.be {
			w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(v))
		} else {
			w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
		}
	}
	return w
}

// geom appends a geometry header: byte order and type code.
func (w *wkbBuilder) geom(code uint32) *wkbBuilder { return w.order().u32(code) }

func le() *wkbBuilder { return &wkbBuilder{} }
func be() *wkbBuilder { return &wkbBuilder{be: true} }

func TestAppendWKT(t *testing.T) {
	nan := math.NaN()
	square := func(w *wkbBuilder) *wkbBuilder { return w.u32(5).f64(0, 0, 1, 0, 1, 1, 0, 1, 0, 0) }
	// A multipoint whose second point is big-endian.
	mp := le().geom(4).u32(2).geom(1).f64(1, 2)
	mp.b = append(mp.b, be().geom(1).f64(3, 4).b...)
	tests := []struct {
		name string
		wkb  []byte
		want string
	}{
		{"point", le().geom(1).f64(1, 2).b, "POINT (1 2)"},
		{"point, big-endian", be().geom(1).f64(-1.5, 0.1).b, "POINT (-1.5 0.1)"},
		{"point Z", le().geom(1001).f64(1, 2, 3).b, "POINT Z (1 2 3)"},
		{"point M", le().geom(2001).f64(1, 2, 4).b, "POINT M (1 2 4)"},
		{"point ZM", le().geom(3001).f64(1, 2, 3, 4).b, "POINT ZM (1 2 3 4)"},
		{"point, extended WKB Z with an SRID", le().geom(0xa0000001).u32(4326).f64(1, 2, 3).b, "POINT Z (1 2 3)"},
		{"empty point", le().geom(1).f64(nan, nan).b, "POINT EMPTY"},
		{"extreme coordinates", le().geom(1).f64(1e21, 5e-324).b, "POINT (1e+21 5e-324)"},
		{"a NaN and an infinity", le().geom(1).f64(nan, math.Inf(-1)).b, "POINT (NaN -Infinity)"},
		{"line string", le().geom(2).u32(2).f64(0, 0, 1, 1).b, "LINESTRING (0 0, 1 1)"},
		{"empty line string", le().geom(2).u32(0).b, "LINESTRING EMPTY"},
		{"polygon with a hole", square(square(le().geom(3).u32(2))).b,
			"POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0), (0 0, 1 0, 1 1, 0 1, 0 0))"},
		{"empty polygon", le().geom(3).u32(0).b, "POLYGON EMPTY"},
		{"polygon of empty rings", le().geom(3).u32(2).u32(0).u32(0).b, "POLYGON EMPTY"},
		{"polygon with an empty hole", square(le().geom(3).u32(2)).u32(0).b, "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0), EMPTY)"},
		{"multipoint, elements of either byte order", mp.b, "MULTIPOINT ((1 2), (3 4))"},
		{"multilinestring", le().geom(5).u32(2).geom(2).u32(1).f64(1, 2).geom(2).u32(0).b,
			"MULTILINESTRING ((1 2), EMPTY)"},
		{"multipolygon", square(le().geom(6).u32(1).geom(3).u32(1)).b,
			"MULTIPOLYGON (((0 0, 1 0, 1 1, 0 1, 0 0)))"},
		{"empty multipolygon", le().geom(6).u32(0).b, "MULTIPOLYGON EMPTY"},
		{"geometry collection", le().geom(1007).u32(2).geom(1001).f64(1, 2, 3).geom(7).u32(0).b,
			"GEOMETRYCOLLECTION Z (POINT Z (1 2 3), GEOMETRYCOLLECTION EMPTY)"},
		{"triangle", le().geom(17).u32(1).u32(4).f64(0, 0, 1, 0, 0, 1, 0, 0).b, "TRIANGLE ((0 0, 1 0, 0 1, 0 0))"},
		{"TIN", le().geom(16).u32(1).geom(17).u32(1).u32(4).f64(0, 0, 1, 0, 0, 1, 0, 0).b, "TIN (((0 0, 1 0, 0 1, 0 0)))"},
		{"polyhedral surface", square(le().geom(15).u32(1).geom(3).u32(1)).b,
			"POLYHEDRALSURFACE (((0 0, 1 0, 1 1, 0 1, 0 0)))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendWKT([]byte("x"), tt.wkb)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			want := `x"` + tt.want + `"`
			if string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if !json.Valid(got[1:]) {
				t.Errorf("not a JSON string: %s", got[1:])
			}
		})
	}
}

// TestAppendWKTDamaged: each damage is an error that leaves the output as
// it came.
func TestAppendWKTDamaged(t *testing.T) {
	deep := le()
	for range maxWKBDepth + 2 {
		deep.geom(7).u32(1)
	}
	deep.geom(1).f64(0, 0)
	tests := []struct {
		name string
		wkb  []byte
		want string
	}{
		{"empty", nil, "truncated geometry header"},
		{"byte order", []byte{2, 1, 0, 0, 0}, "byte order 2"},
		{"unknown type", le().geom(99).b, "geometry type 99"},
		{"unknown dimensions", le().geom(4001).b, "geometry type 4001"},
		{"truncated point", le().geom(1).f64(1).b, "truncated point"},
		{"count past the bytes", le().geom(2).u32(math.MaxUint32).f64(0, 0).b, "4294967295 elements"},
		{"ring count past the bytes", le().geom(3).u32(1 << 30).b, "1073741824 elements"},
		{"collection count past the bytes", le().geom(7).u32(3).geom(1).f64(0, 0).b, "3 elements"},
		{"collection shorter than its count", le().geom(7).u32(2).geom(1).f64(0, 0).b, "truncated geometry header"},
		{"trailing bytes", append(le().geom(1).f64(1, 2).b, 0), "1 bytes after the geometry"},
		{"wrong element type", le().geom(4).u32(1).geom(2).u32(0).b, "a LINESTRING of 2 dimensions among POINTs of 2"},
		{"wrong element dimensions", le().geom(4).u32(1).geom(1001).f64(1, 2, 3).b, "a POINT of 3 dimensions among POINTs of 2"},
		{"nested too deep", deep.b, "nested deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendWKT([]byte("x"), tt.wkb)
			if !errors.Is(err, errWKB) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want errWKB saying %q", err, tt.want)
			}
			if string(got) != "x" {
				t.Errorf("output %q after an error, want it as it came", got)
			}
		})
	}
}

// TestWKTValueIsCorruptFile: a damaged WKB value in a column is the
// reader's corrupt-file error, and the line stays valid JSON.
func TestWKTValueIsCorruptFile(t *testing.T) {
	var s scratch
	vt := valueType{conv: convWKT}
	v := valuesOf(parquet.ByteArrayValue([]byte{1, 1}))
	out := appendValue(nil, v, 0, &vt, &encoding{}, &s)
	if !errors.Is(s.err, ErrCorruptFile) || string(out) != "null" {
		t.Errorf("got %q, err %v; want null and ErrCorruptFile", out, s.err)
	}
	vt = valueType{conv: convBase64}
	if out := appendValue(nil, v, 0, &vt, &encoding{binaryAsString: true}, &s); string(out) != `"AQE="` {
		t.Errorf("WKB as base64: got %s, want \"AQE=\" whatever binaryAsString says", out)
	}
}
