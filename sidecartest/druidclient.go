package sidecartest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// DruidClient reads a URI as Druid's http input source does (HttpEntity
// with RetryingInputStream): every request carries `Range: bytes=<offset>-`,
// starting at bytes=0-; after a broken connection it reconnects at the
// offset consumed so far, and when an answer has no Content-Range it skips
// the bytes itself. It breaks up to CutsLeft connections on purpose, each
// after a random number of bytes (of Rand), and counts them in Cuts.
type DruidClient struct {
	Client   *http.Client
	Rand     *rand.Rand
	CutsLeft int
	Cuts     int
}

// Read returns the whole body of uri, breaking connections at random
// points while it may.
func (d *DruidClient) Read(t testing.TB, uri string) []byte {
	t.Helper()
	var got []byte
	for attempt := 0; ; attempt++ {
		if attempt > 1000 {
			t.Fatalf("%s: no progress after %d attempts", uri, attempt)
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, uri, nil)
		if err != nil {
			t.Fatal(err)
		}
		offset := int64(len(got))
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		resp, err := d.Client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", uri, err)
		}
		body := io.Reader(resp.Body)
		switch {
		case resp.StatusCode == http.StatusPartialContent:
			if cr := resp.Header.Get("Content-Range"); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", offset)) {
				t.Fatalf("Content-Range %q for offset %d", cr, offset)
			}
		case resp.StatusCode == http.StatusOK:
			if _, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
				t.Fatalf("skip %d bytes: %v", offset, err)
			}
		case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && offset > 0:
			resp.Body.Close()
			return got // a raw file read to its end
		default:
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("GET %s at %d: %d %s", uri, offset, resp.StatusCode, b)
		}
		if d.CutsLeft > 0 {
			// Break this connection after a random number of bytes.
			n := d.Rand.Int64N(4096)
			chunk, err := io.ReadAll(io.LimitReader(body, n))
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			got = append(got, chunk...)
			resp.Body.Close()
			if int64(len(chunk)) == n {
				d.CutsLeft--
				d.Cuts++
				continue
			}
			return got // the body ended before the cut
		}
		rest, err := io.ReadAll(body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return append(got, rest...)
	}
}
