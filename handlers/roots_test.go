package handlers_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/token"
)

// recorder records every location the sidecar asks a table's FileIO to
// open (sidecatalog.WithFileIOWrapper).
type recorder struct {
	mu     sync.Mutex
	opened []string
}

func (r *recorder) wrap(fsys icebergio.IO) icebergio.IO { return recordingIO{IO: fsys, r: r} }

type recordingIO struct {
	icebergio.IO
	r *recorder
}

func (r recordingIO) Open(name string) (icebergio.File, error) {
	r.r.mu.Lock()
	r.r.opened = append(r.r.opened, name)
	r.r.mu.Unlock()
	return r.IO.Open(name)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.opened
	r.opened = nil
	return out
}

// TestTokensOpenOnlyPlannedPaths: the paths a token names are the only ones
// the data routes open, and only a token the server signed is opened at
// all. A token signed with another key, or a genuine one whose payload was
// edited to name /etc/passwd, is refused before any file is opened; a
// rows token cannot open the raw-file route; and even a token the server
// signed cannot climb out of a location map's target with "..". Reads go
// through the token's catalog's FileIO, with its location map, and nothing
// else.
func TestTokensOpenOnlyPlannedPaths(t *testing.T) {
	fx := positionalFixture(t)
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sidecatalog.Config{Type: "static", Tables: map[string]string{"fixtures.t": filepath.Join(fx.Dir, fx.Metadata)},
		LocationMap: fx.mappings()}
	rec := &recorder{}
	cat := catalogtest.Open(t, cfg, sidecatalog.WithFileIOWrapper(rec.wrap))
	ts := serveCatalog(t, cat, signer)

	// A genuine rows token, and the split it pins.
	p := ts.plan(t, q("table", "fixtures.t"))
	genuine := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(p.Splits[0].URI, ts.URL), "/splits/"), "/rows")
	sp, err := signer.Verify(token.KindRows, genuine)
	if err != nil {
		t.Fatal(err)
	}
	planned := []string{sp.Data.Path}
	for _, d := range sp.Deletes {
		planned = append(planned, d.Path)
	}
	rec.take()

	other, err := token.NewSigner(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	passwd := token.Split{Table: sp.Table, MetadataLocation: sp.MetadataLocation, SnapshotID: sp.SnapshotID,
		Data: token.DataFile{Path: "/etc/passwd", Format: "PARQUET", Size: 1, Records: 1}}
	forgedFile, _ := other.Sign(token.KindFile, passwd)
	forgedRows, _ := other.Sign(token.KindRows, passwd)
	edited := editPayload(t, genuine, "/etc/passwd")
	climb := sp
	climb.Data.Path = fx.LocationPrefixes[0] + "/data/../../../../../../../../etc/passwd"
	climbRows, _ := signer.Sign(token.KindRows, climb)
	climb.Deletes = nil
	climbFile, _ := signer.Sign(token.KindFile, climb)

	for _, tc := range []struct {
		name, path string
		status     int
		code       string
	}{
		{"file token signed with another key", "/files/" + forgedFile, 403, "bad_signature"},
		{"rows token signed with another key", "/splits/" + forgedRows + "/rows", 403, "bad_signature"},
		{"genuine token edited to name /etc/passwd", "/splits/" + edited + "/rows", 403, "bad_signature"},
		{"rows token on the file route", "/files/" + genuine, 403, "bad_signature"},
		{"signed rows token climbing out of the location map", "/splits/" + climbRows + "/rows", 403, "forbidden_location"},
		{"signed file token climbing out of the location map", "/files/" + climbFile, 403, "forbidden_location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := ts.get(t, tc.path)
			if resp.StatusCode != tc.status || errorCode(t, body) != tc.code {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, body, tc.status, tc.code)
			}
			if bytes.Contains(body, []byte("root:")) {
				t.Fatal("the answer holds /etc/passwd")
			}
			for _, loc := range rec.take() {
				if loc == "/etc/passwd" || !strings.HasPrefix(loc, fx.LocationPrefixes[0]) {
					t.Fatalf("opened %s", loc)
				}
			}
		})
	}

	// The genuine token opens exactly the files it pins, through the
	// catalog's FileIO (and its location map).
	if resp, _ := ts.get(t, "/splits/"+genuine+"/rows"); resp.StatusCode != http.StatusOK {
		t.Fatalf("genuine token: %d", resp.StatusCode)
	}
	opened := rec.take()
	slices.Sort(opened)
	slices.Sort(planned)
	if !slices.Equal(slices.Compact(opened), planned) {
		t.Fatalf("the genuine token opened %q, want exactly its files %q", opened, planned)
	}
}

// editPayload changes the data file path inside a token's payload and keeps
// its signature, as someone holding a token but not the key would.
func editPayload(t *testing.T, token, path string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	payload, sig, _ := strings.Cut(token, ".")
	raw, err := enc.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw[1:], &claims); err != nil {
		t.Fatal(err)
	}
	claims["s"].(map[string]any)["d"].(map[string]any)["p"] = path
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeToString(append([]byte{raw[0]}, body...)) + "." + sig
}
