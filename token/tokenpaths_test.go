package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// realisticSplit is a split of a Spark-written table on S3, partitioned by
// day, with deletes delete files beside its data file (every fifth one an
// equality delete), named the way Spark names them.
func realisticSplit(deletes int) Split {
	const loc = "s3://company-lake/warehouse/sales.db/orders"
	dir := loc + "/data/event_date=2025-01-31/"
	sp := Split{
		Catalog:          "lake",
		Table:            []string{"sales", "orders"},
		Location:         loc,
		MetadataLocation: loc + "/metadata/00123-6d1f0c52-81e4-4b5a-9c3e-2a7b8d9e0f11.metadata.json",
		SnapshotID:       8286390426475512101,
		SchemaID:         3,
		Data: DataFile{
			Path:   dir + "00042-7-3f1c2a9e-8b7d-4c1e-9f0a-1b2c3d4e5f60-00001.parquet",
			Format: "PARQUET", Size: 134_217_311, Records: 2_480_117, SpecID: 1,
			Identity: []IdentityValue{{FieldID: 4, Value: json.RawMessage("20119")}},
		},
	}
	for i := range deletes {
		d := DeleteFile{
			Kind:   DeletePosition,
			Path:   fmt.Sprintf("%s%05d-%d-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c%02d-00001-deletes.parquet", dir, i*3+1, 40+i, i),
			Format: "PARQUET", Size: 4_812 + int64(i)*37, Records: 120 + int64(i),
		}
		if i%5 == 4 {
			d.Kind, d.EqualityIDs = DeleteEquality, []int{1}
			d.Path = fmt.Sprintf("%s%05d-%d-1b2c3d4e-5f60-4a3b-8c2d-0e0f9a8b7c%02d-00001-eq-deletes.parquet", dir, i*3+1, 40+i, i)
		}
		sp.Deletes = append(sp.Deletes, d)
	}
	return sp
}

// wholeTokenLength is how long the token of sp would be with its JSON
// written whole, every path in full and every format and kind spelled out.
func wholeTokenLength(t testing.TB, kind TokenKind, sp Split) int {
	t.Helper()
	sp.Location = ""
	body, err := json.Marshal(claims{Kind: kind, Split: &sp})
	if err != nil {
		t.Fatal(err)
	}
	return len(b64.EncodeToString(append([]byte{tokenVersion}, body...))) + 1 + len(b64.EncodeToString(make([]byte, 32)))
}

// TestTokenSize: a split with 10 delete files on realistic S3 paths gives a
// token under 2 KiB, so a Druid spec of a wide table stays small.
func TestTokenSize(t *testing.T) {
	s, _ := NewSigner(key(1))
	for _, n := range []int{0, 1, 10} {
		sp := realisticSplit(n)
		tok, err := s.Sign(KindRows, sp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Verify(KindRows, tok)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, sp) {
			t.Fatalf("%d deletes: round trip:\n got %+v\nwant %+v", n, got, sp)
		}
		t.Logf("%2d delete files: token %d bytes (written whole: %d)", n, len(tok), wholeTokenLength(t, KindRows, sp))
		if n == 10 && len(tok) >= 2048 {
			t.Fatalf("token of a split with 10 delete files is %d bytes, want under 2 KiB", len(tok))
		}
	}
}

// payloadOf is the JSON inside a token.
func payloadOf(t testing.TB, tok string) string {
	t.Helper()
	p, _, _ := strings.Cut(tok, ".")
	b, err := b64.DecodeString(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[1:])
}

// TestTokenPaths: every path comes back exactly as the manifests spell it,
// whether or not it is under the table location, and the paths under it are
// written relative.
func TestTokenPaths(t *testing.T) {
	off, size := int64(4), int64(40)
	split := func(loc, meta, data string, deletes ...string) Split {
		sp := Split{Table: []string{"db", "t"}, Location: loc, MetadataLocation: meta, SnapshotID: 1,
			Data: DataFile{Path: data, Format: "PARQUET", Size: 10, Records: 1}}
		for _, d := range deletes {
			sp.Deletes = append(sp.Deletes, DeleteFile{Kind: DeletePosition, Path: d, Format: "PARQUET", Size: 5, Records: 1})
		}
		return sp
	}
	for _, tc := range []struct {
		name string
		sp   Split
		// in are strings the payload must hold (as JSON), out strings it
		// must not; asIs is whether the paths must be written whole.
		in, out []string
		asIs    bool
	}{
		{name: "under the location",
			sp: split("s3://b/wh/t", "s3://b/wh/t/metadata/v1.json", "s3://b/wh/t/data/p=1/a.parquet",
				"s3://b/wh/t/data/p=1/d.parquet"),
			in:  []string{`"m":"metadata/v1.json"`, `"p":"data/p=1/a.parquet"`, `"p":"./d.parquet"`},
			out: []string{"s3://b/wh/t/"}},
		{name: "location with a trailing slash",
			sp: split("s3://b/wh/t/", "s3://b/wh/t/metadata/v1.json", "s3://b/wh/t/data/a.parquet",
				"s3://b/wh/t/data/d.parquet"),
			in: []string{`"m":"metadata/v1.json"`, `"p":"data/a.parquet"`, `"p":"./d.parquet"`}},
		{name: "a double slash after a trailing slash stays whole",
			sp: split("s3://b/wh/t/", "s3://b/wh/t//metadata/v1.json", "s3://b/wh/t//data/a.parquet",
				"s3://b/wh/t//data/d.parquet"),
			in: []string{`"m":"s3://b/wh/t//metadata/v1.json"`, `"p":"s3://b/wh/t//data/a.parquet"`, `"p":"./d.parquet"`}},
		{name: "s3a location, s3 files",
			sp: split("s3a://b/wh/t", "s3a://b/wh/t/metadata/v1.json", "s3://b/wh/t/data/a.parquet",
				"s3a://b/wh/t/data/d.parquet"),
			in: []string{`"m":"metadata/v1.json"`, `"p":"s3://b/wh/t/data/a.parquet"`, `"p":"data/d.parquet"`}},
		{name: "s3 location, s3a files",
			sp: split("s3://b/wh/t", "s3://b/wh/t/metadata/v1.json", "s3a://b/wh/t/data/a.parquet",
				"s3a://b/wh/t/data/d.parquet", "s3://b/wh/t/data/d.parquet"),
			in: []string{`"p":"s3a://b/wh/t/data/a.parquet"`, `"p":"./d.parquet"`, `"p":"data/d.parquet"`}},
		{name: "a sibling directory that shares the location's prefix",
			sp: split("s3://b/wh/t", "s3://b/wh/t_archive/metadata/v1.json", "s3://b/wh/t_archive/data/a.parquet",
				"s3://b/wh/t2/data/d.parquet"),
			in: []string{`"m":"s3://b/wh/t_archive/metadata/v1.json"`, `"p":"s3://b/wh/t2/data/d.parquet"`}},
		{name: "metadata and deletes elsewhere",
			sp: split("gs://lake/t", "gs://catalog-bucket/t/metadata/00001-x.metadata.json", "gs://lake/t/data/a.parquet",
				"gs://lake/t/data/other/d.parquet", "gs://lake/u/data/e.parquet", "/local/d.parquet"),
			in: []string{`"m":"gs://catalog-bucket/t/metadata/00001-x.metadata.json"`, `"p":"./other/d.parquet"`,
				`"p":"gs://lake/u/data/e.parquet"`, `"p":"/local/d.parquet"`}},
		{name: "local paths",
			sp: split("/tmp/wh/ns/t", "/tmp/wh/ns/t/metadata/v2.metadata.json", "/tmp/wh/ns/t/data/a.parquet",
				"/tmp/wh/ns/t/data/d.parquet", "file:/tmp/wh/ns/t/data/d.parquet"),
			in: []string{`"m":"metadata/v2.metadata.json"`, `"p":"./d.parquet"`, `"p":"file:/tmp/wh/ns/t/data/d.parquet"`}},
		{name: "file URIs",
			sp: split("file:///tmp/wh/t", "file:///tmp/wh/t/metadata/v1.json", "file:///tmp/wh/t/data/a.parquet"),
			in: []string{`"p":"data/a.parquet"`}},
		{name: "a relative part that would read as a scheme or as directory-relative stays whole",
			sp: split("s3://b/t", "s3://b/t/c:v1.json", "s3://b/t/./a.parquet", "s3://b/t/./d.parquet", "s3://b/t/x:d.parquet"),
			in: []string{`"m":"s3://b/t/c:v1.json"`, `"p":"s3://b/t/./a.parquet"`, `"p":"./d.parquet"`, `"p":"s3://b/t/x:d.parquet"`}},
		{name: "a colon after a slash is no scheme",
			sp: split("s3://b/t", "s3://b/t/metadata/v1.json", "s3://b/t/data/ts=2025-01-31T00:00:00Z/a.parquet",
				"s3://b/t/data/ts=2025-01-31T00:00:00Z/d.parquet"),
			in: []string{`"p":"data/ts=2025-01-31T00:00:00Z/a.parquet"`, `"p":"./d.parquet"`}},
		{name: "no location",
			sp: split("", "s3://b/t/metadata/v1.json", "s3://b/t/data/a.parquet", "s3://b/t/data/d.parquet"),
			in: []string{`"m":"s3://b/t/metadata/v1.json"`, `"p":"./d.parquet"`}},
		{name: "a path that is not absolute writes every path whole",
			sp:   split("s3://b/t", "s3://b/t/metadata/v1.json", "s3://b/t/data/a.parquet", "data/d.parquet", "./x.parquet"),
			in:   []string{`"m":"s3://b/t/metadata/v1.json"`, `"p":"s3://b/t/data/a.parquet"`, `"p":"data/d.parquet"`, `"a":true`},
			asIs: true},
		{name: "an empty metadata location writes every path whole",
			sp:   split("s3://b/t", "", "s3://b/t/data/a.parquet"),
			in:   []string{`"p":"s3://b/t/data/a.parquet"`},
			asIs: true},
		{name: "a data file without a directory",
			sp: split("s3://b/t", "s3://b/t/m.json", "a.parquet", "a.parquet.deletes"),
			in: []string{`"p":"a.parquet"`, `"p":"a.parquet.deletes"`}, asIs: true},
		{name: "deletion vector and its referenced data file",
			sp: func() Split {
				sp := split("s3://b/t", "s3://b/t/metadata/v1.json", "s3://b/t/data/a.parquet")
				sp.Deletes = []DeleteFile{{Kind: DeleteDeletionVector, Path: "s3://b/t/data/dv-1.puffin", Format: "PUFFIN",
					Size: 77, Records: 3, ContentOffset: &off, ContentSize: &size, ReferencedDataFile: "s3://b/t/data/a.parquet"}}
				return sp
			}(),
			in:  []string{`{"k":"dv","p":"./dv-1.puffin","z":77`, `"r":"./a.parquet"`},
			out: []string{"PUFFIN", "PARQUET"}},
		{name: "unusual formats are kept",
			sp: func() Split {
				sp := split("s3://b/t", "s3://b/t/metadata/v1.json", "s3://b/t/data/a.parquet", "s3://b/t/data/d.avro")
				sp.Data.Format = "parquet"
				sp.Deletes[0].Format = "AVRO"
				sp.Deletes = append(sp.Deletes, DeleteFile{Kind: DeleteEquality, Path: "s3://b/t/data/e.orc", Format: "ORC", EqualityIDs: []int{1, 2}})
				return sp
			}(),
			in: []string{`"f":"parquet"`, `"f":"AVRO"`, `{"k":"eq","p":"./e.orc","f":"ORC"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := NewSigner(key(1))
			tok, err := s.Sign(KindRows, tc.sp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Verify(KindRows, tok)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.sp) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.sp)
			}
			payload := payloadOf(t, tok)
			for _, s := range tc.in {
				if !strings.Contains(payload, s) {
					t.Errorf("payload lacks %s:\n%s", s, payload)
				}
			}
			for _, s := range tc.out {
				if strings.Contains(payload, s) {
					t.Errorf("payload holds %s:\n%s", s, payload)
				}
			}
			if asIs := strings.Contains(payload, `"a":true`); asIs != tc.asIs {
				t.Errorf("paths written whole: %v, want %v:\n%s", asIs, tc.asIs, payload)
			}
		})
	}
}

// FuzzTokenPaths: whatever the paths, a token gives back exactly the split
// that was signed.
func FuzzTokenPaths(f *testing.F) {
	f.Add("s3://b/t", "s3://b/t/metadata/v1.json", "s3://b/t/data/a.parquet", "s3://b/t/data/d.parquet", "s3a://b/t/data/a.parquet")
	f.Add("s3://b/t/", "s3://b/t//m.json", "s3://b/t//a", "./x", "/y")
	f.Add("", "m", "a/b", "a/b/c", "x:y")
	f.Add("t", "t/m", "t/a/b", "t/a/c", "t/./d")
	s, _ := NewSigner(key(1))
	f.Fuzz(func(t *testing.T, loc, meta, data, del, ref string) {
		sp := Split{Table: []string{"db", "t"}, Location: loc, MetadataLocation: meta,
			Data: DataFile{Path: data, Format: "PARQUET"},
			Deletes: []DeleteFile{
				{Kind: DeletePosition, Path: del, Format: "PARQUET"},
				{Kind: DeleteDeletionVector, Path: ref, Format: "PUFFIN", ReferencedDataFile: ref},
			}}
		tok, err := s.Sign(KindRows, sp)
		if !utf8.ValidString(loc) || !utf8.ValidString(meta) || !utf8.ValidString(data) ||
			!utf8.ValidString(del) || !utf8.ValidString(ref) {
			// JSON cannot carry it exactly, and Sign says so.
			if !errors.Is(err, fault.ErrUnsupported) {
				t.Fatalf("a path that is not UTF-8: %v, want fault.ErrUnsupported", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Verify(KindRows, tok)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if !reflect.DeepEqual(got, sp) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, sp)
		}
	})
}

// mac is the HMAC-SHA256 of payload under key, for forging tokens.
func mac(key, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	return h.Sum(nil)
}

// TestTokenVersion: a token starts with its version byte; a token of any
// other version, however well signed (an earlier payload, a newer release
// after a rollback), is refused as malformed with a message to plan again,
// and so is a payload that holds neither a split nor a plan reference, or
// a split without its table.
func TestTokenVersion(t *testing.T) {
	s, _ := NewSigner(key(1))
	tok, _ := s.Sign(KindRows, testSplit())
	if p, _, _ := strings.Cut(tok, "."); p[:2] != "AX" {
		// base64url of the version byte 1 and '{'.
		t.Fatalf("tokens are version 1, this one starts %q", p[:2])
	}
	forge := func(payload []byte) string {
		return b64.EncodeToString(payload) + "." + b64.EncodeToString(mac(key(1), payload))
	}
	for _, v := range []byte{0, 2, 3, 4, 9, 255} {
		_, err := s.Verify(KindRows, forge(append([]byte{v}, payloadOf(t, tok)...)))
		if !errors.Is(err, ErrMalformedToken) || !strings.Contains(err.Error(), "plan again") {
			t.Fatalf("version %d: %v, want ErrMalformedToken saying to plan again", v, err)
		}
	}
	noTable := testSplit()
	noTable.Table = nil
	if _, err := s.Sign(KindRows, noTable); err == nil {
		t.Fatal("a split without its table was signed")
	}
	for name, payload := range map[string]string{
		"neither":     `{"t":"rows"}`,
		"both":        `{"t":"rows","s":` + payloadOf(t, tok)[len(`{"t":"rows","s":`):len(payloadOf(t, tok))-1] + `,"r":{"m":"x","s":1,"o":{},"i":0,"n":1,"f":"AAAAAAAAAAAAAAAAAAAAAA==","tb":["a","b"]}}`,
		"no table":    strings.Replace(payloadOf(t, tok), `"tb":["db","t"],`, "", 1),
		"empty table": strings.Replace(payloadOf(t, tok), `"tb":["db","t"],`, `"tb":[],`, 1),
	} {
		if _, err := s.Verify(KindRows, forge(append([]byte{tokenVersion}, payload...))); !errors.Is(err, ErrMalformedToken) {
			t.Errorf("%s: %v, want ErrMalformedToken", name, err)
		}
	}
}

// TestTokenRefusesWhatItCannotSpell: a token leaves out usual formats and
// spells kinds as codes, so a split without a format or with an unknown
// kind would not come back as signed, nor would a path that is not UTF-8
// (JSON replaces the bytes); Sign refuses them.
func TestTokenRefusesWhatItCannotSpell(t *testing.T) {
	s, _ := NewSigner(key(1))
	noFormat := testSplit()
	noFormat.Data.Format = ""
	badKind := testSplit()
	badKind.Deletes[0].Kind = "eq"
	noDeleteFormat := testSplit()
	noDeleteFormat.Deletes[1].Format = ""
	notUTF8 := testSplit()
	notUTF8.Deletes[0].Path = "s3://lake/db/t/data/\x87.parquet"
	for name, sp := range map[string]Split{"data format": noFormat, "kind": badKind, "delete format": noDeleteFormat, "not UTF-8": notUTF8} {
		if _, err := s.Sign(KindRows, sp); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
}

// TestTokenPayloadIsJSON: a token stays readable, base64url JSON.
func TestTokenPayloadIsJSON(t *testing.T) {
	s, _ := NewSigner(key(1))
	tok, _ := s.Sign(KindRows, realisticSplit(2))
	p, _, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || !json.Valid(raw[1:]) || !bytes.Contains(raw, []byte(`"p":"./00001-40-`)) {
		t.Fatalf("payload %q", raw)
	}
}

// TestPackedTokens: a split of several data files comes back as signed,
// file by file, in order, with each file's delete files and residual
// filter; its paths are spelled relative like a single file's, or all
// whole when one of them cannot be; files of other tables are refused.
func TestPackedTokens(t *testing.T) {
	s, _ := NewSigner(key(1))
	a := realisticSplit(3)
	b := a
	b.Data.Path = a.Location + "/data/part=2/b.parquet"
	b.Deletes = []DeleteFile{{Kind: DeletePosition, Path: a.Location + "/data/part=2/b-deletes.parquet", Format: "PARQUET", Size: 10, Records: 1}}
	b.Filter = json.RawMessage(`{"type":"lt","term":"id","value":3}`)
	c := a
	c.Data.Path = a.Location + "/data/c.parquet"
	c.Deletes = nil
	odd := c
	odd.Data.Path = "relative/d.parquet" // neither absolute nor under the location
	for name, parts := range map[string][]Split{"compact": {a, b, c}, "as is": {a, odd, b}} {
		t.Run(name, func(t *testing.T) {
			tok, err := s.Sign(KindRows, parts...)
			if err != nil {
				t.Fatal(err)
			}
			if payload := payloadOf(t, tok); name == "compact" && strings.Count(payload, a.Location) != 1 {
				t.Errorf("the table location is spelled %d times in %s", strings.Count(payload, a.Location), payload)
			}
			got, err := s.Decode(KindRows, tok)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Parts, parts) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got.Parts, parts)
			}
			if _, err := s.Verify(KindRows, tok); !errors.Is(err, fault.ErrUnsupported) {
				t.Fatalf("Verify of a packed token: %v, want fault.ErrUnsupported", err)
			}
		})
	}
	other := c
	other.SnapshotID++
	if _, err := s.Sign(KindRows, a, other); err == nil || !strings.Contains(err.Error(), "cannot be packed") {
		t.Fatalf("a file of another snapshot was packed: %v", err)
	}
	one, _ := s.Sign(KindRows, a)
	if payload := payloadOf(t, one); strings.Contains(payload, `"p":[`) {
		t.Fatalf("a split of one file spells packed parts: %s", payload)
	}
}
