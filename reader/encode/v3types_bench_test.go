package encode

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/variant"
)

// BenchmarkVariant decodes a typical variant (an event object of eight
// fields, a nested object and an array) to JSON, against arrow-go's
// validation and JSON of the same value:
//
//	go test ./reader/encode -run '^$' -bench 'Variant|WKT' -benchmem
func BenchmarkVariant(b *testing.B) {
	var bld variant.Builder
	if err := bld.Append(map[string]any{
		"event": "click", "user": int64(123456789), "ts": int64(1_700_000_000_000), "score": 0.75,
		"tags": []any{"a", "bb", "ccc"}, "geo": map[string]any{"lat": 52.52, "lon": 13.405},
		"ok": true, "note": nil,
	}); err != nil {
		b.Fatal(err)
	}
	v, err := bld.Build()
	if err != nil {
		b.Fatal(err)
	}
	meta, value := v.Metadata().Bytes(), v.Bytes()
	b.Run("reader", func(b *testing.B) {
		var e VariantEncoder
		var s Scratch
		out := make([]byte, 0, 1024)
		b.ReportAllocs()
		b.SetBytes(int64(len(meta) + len(value)))
		for b.Loop() {
			if err := e.SetMeta(meta); err != nil {
				b.Fatal(err)
			}
			e.Begin()
			if out, err = e.AppendVariant(out[:0], value, 0, &Options{}, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("arrow-go", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(meta) + len(value)))
		for b.Loop() {
			v, err := variant.New(meta, value)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWKT encodes a polygon of 100 points as WKT.
func BenchmarkWKT(b *testing.B) {
	w := le().geom(3).u32(1).u32(100)
	for i := range 100 {
		w.f64(13.4+float64(i)*0.001, 52.5-float64(i)*0.0005)
	}
	out := make([]byte, 0, 8192)
	b.ReportAllocs()
	b.SetBytes(int64(len(w.b)))
	for b.Loop() {
		var err error
		if out, err = appendWKT(out[:0], w.b); err != nil {
			b.Fatal(err)
		}
	}
}
