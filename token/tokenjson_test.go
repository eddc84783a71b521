package token

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// filled sets every exported field of v, recursively, to something that is
// not its zero value: strings that need escaping, negative numbers, slices
// of two, spaced-out raw JSON.
func filled(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				filled(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString(`s3://b/t/<&> "q" \ é` + "\t\u2028")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		filled(v.Elem())
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(` { "a" : [ 1, 2.5, "<x>" ] } `))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			filled(v.Index(i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	}
}

// marshal is json.Marshal without HTML escaping, as the sidecar writes
// every JSON string (internal/jsonstr).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// TestAppendClaimsIsMarshal: the token encoder writes what encoding/json
// writes (HTML escaping off), for a split with every field set, so a new field that it does not
// write fails here; and for the splits of the other tests.
func TestAppendClaimsIsMarshal(t *testing.T) {
	var full Split
	filled(reflect.ValueOf(&full).Elem())
	ints := full
	ints.Data.Identity = []IdentityValue{{FieldID: 1, Value: json.RawMessage("-12")}, {FieldID: 2, Value: json.RawMessage("0")},
		{FieldID: 3, Value: nil}, {FieldID: 4, Value: json.RawMessage(`"2025"`)}, {FieldID: 5, Value: json.RawMessage("1e3")}}
	ints.Encoding = Encoding{BinaryAsString: true}
	short, _, err := compactSplit(realisticSplit(10))
	if err != nil {
		t.Fatal(err)
	}
	var packed claims
	filled(reflect.ValueOf(&packed).Elem())
	for name, c := range map[string]claims{
		"packed, every field": packed,
		"every field":         {Kind: KindRows, Split: &full, Expires: 1_700_000_000, AsIs: true},
		"integer values":      {Kind: KindFile, Split: &ints},
		"zero":                {},
		"test split":          {Kind: KindRows, Split: ptr(testSplit())},
		"compacted, 10 del":   {Kind: KindRows, Split: &short, Expires: -1},
		"reference":           {Kind: KindRows, Ref: &PlanRef{Catalog: "c", Table: []string{"a", "<b>"}, MetadataLocation: "m&", Options: json.RawMessage(`{"t":"<x>"}`), Count: 1, Fingerprint: []byte{1}}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendClaims(nil, c)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("appendClaims wrote\n%s\nencoding/json wrote\n%s", got, want)
			}
		})
	}
	bad := testSplit()
	bad.Filter = json.RawMessage(`{"a":`)
	if _, err := appendClaims(nil, claims{Split: &bad}); err == nil {
		t.Fatal("a filter that is not JSON encoded")
	}
	bad = testSplit()
	bad.Data.Identity = []IdentityValue{{FieldID: 1, Value: json.RawMessage("012")}}
	if _, err := appendClaims(nil, claims{Split: &bad}); err == nil {
		t.Fatal("an identity value that is not JSON encoded")
	}
}

// FuzzAppendClaims: whatever the strings and numbers, the token encoder
// writes what encoding/json writes with HTML escaping off.
func FuzzAppendClaims(f *testing.F) {
	f.Add("s3://b/t", "data/a.parquet", "./d.parquet", "12", int64(3), int64(-1), true)
	f.Add("<&>", "\x87\u2028", `"\`, `{"x": 1}`, int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, loc, data, del, raw string, size, off int64, flag bool) {
		sp := Split{Catalog: loc, Table: []string{del, loc}, Location: loc, MetadataLocation: data, SnapshotID: size,
			Data: DataFile{Path: data, Format: del, Size: size, Records: off, SpecID: int32(off),
				Identity: []IdentityValue{{FieldID: int(size), Value: json.RawMessage(raw)}}},
			Deletes:  []DeleteFile{{Kind: DeleteKind(del), Path: del, Size: off, ContentOffset: &off, ReferencedDataFile: raw}},
			Encoding: Encoding{Version: int(off), ISOTimestamps: flag}, Filter: json.RawMessage(raw)}
		c := claims{Kind: TokenKind(loc), Split: &sp, Expires: off, AsIs: flag}
		want, werr := marshal(c)
		got, gerr := appendClaims(nil, c)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("encoding/json: %v, appendClaims: %v", werr, gerr)
		}
		if werr == nil && string(got) != string(want) {
			t.Fatalf("appendClaims wrote\n%s\nencoding/json wrote\n%s", got, want)
		}
	})
}

func ptr[T any](v T) *T { return &v }
