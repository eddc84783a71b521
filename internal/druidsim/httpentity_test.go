package druidsim

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// rangeServer serves body at every path, honouring `Range: bytes=N-` when
// ranged, and cuts the first cuts connections after 100 bytes of their
// answer.
func rangeServer(t *testing.T, body []byte, ranged bool, cuts int32) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := int64(0)
		if v, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ranged && ok {
			from, _ = strconv.ParseInt(strings.TrimSuffix(v, "-"), 10, 64)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-*/*", from))
			w.WriteHeader(http.StatusPartialContent)
		}
		rest := body[from:]
		if n.Add(1) <= cuts && len(rest) > 100 {
			_, _ = w.Write(rest[:100])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		_, _ = w.Write(rest)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestHTTPEntity: the model reads a URI as Druid's HttpEntity does: every
// request has a Range, the first bytes=0-; a cut connection resumes at the
// raw bytes read, also when the server ignores Range (the offset is
// skipped); the body is decompressed by the path's extension, above the
// retries; an error status is retried up to ten tries in all.
func TestHTTPEntity(t *testing.T) {
	ctx := context.Background()
	var plain bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&plain, `{"t":%d,"v":"row %d"}`+"\n", i, i)
	}
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	_, _ = gw.Write(plain.Bytes())
	_ = gw.Close()
	zs, _ := zstd.NewWriter(nil)
	zst := zs.EncodeAll(plain.Bytes(), nil)
	for _, tc := range []struct {
		name   string
		path   string
		body   []byte
		ranged bool
	}{
		{"plain", "/a/rows", plain.Bytes(), true},
		{"plain, no range support", "/a/rows", plain.Bytes(), false},
		{"gzip", "/a/rows.ndjson.gz", gz.Bytes(), true},
		{"zstd", "/a/rows.ndjson.zst", zst, true},
		{"gzip, query string aside", "/a/rows.gz?x=1", gz.Bytes(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := rangeServer(t, tc.body, tc.ranged, 3)
			d := New()
			got, err := d.fetch(ctx, srv.URL+tc.path, inputSource{Type: "http"})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain.Bytes()) {
				t.Fatalf("read %d bytes, want the %d of the plain rows", len(got), plain.Len())
			}
			// Each cut answer gave 100 bytes; without range support they
			// are the same first 100, skipped.
			want := "[0 100 200 300]"
			if !tc.ranged {
				want = "[0 100 100 100]"
			}
			if f := d.Fetches(); len(f) != 1 || fmt.Sprint(f[0].Opens) != want {
				t.Fatalf("fetches %+v, want opens at %s", f, want)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusConflict)
	}))
	defer srv.Close()
	d := New()
	if _, err := d.fetch(ctx, srv.URL+"/rows", inputSource{Type: "http"}); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("an error status: %v", err)
	}
	if f := d.Fetches(); len(f[0].Opens) != maxTries {
		t.Fatalf("%d tries, want %d", len(f[0].Opens), maxTries)
	}
}
