package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the s3 scheme, as the binary registers it
	"github.com/druidiceberg/sidecar/internal/fault"
)

// TestOpenReportsARefusalAsRefused: an S3 store's refusal is a refusal and
// a missing object is missing, on the first ask, whatever "301" the
// answer holds. gocloud.dev before v0.47 (s3blob's ErrorCode) took any
// failure whose message held "301" for a missing bucket
// (google/go-cloud#3747), and iceberg-go's blobfs.Open then reported
// fs.ErrNotExist: a refusal whose request id held "301" by chance (about
// one answer in 200 for a 24-digit hex id) read as a file gone, with no
// renewal of the credentials, and the sidecar opened every missing file
// twice to tell them apart. The store here is an HTTP handler that
// answers as S3 does: no real store can be made to pick such a request
// id. Each open is classified as tableIO.Open classifies it.
func TestOpenReportsARefusalAsRefused(t *testing.T) {
	body := []byte("PAR1 the object's bytes PAR1")
	var gets, refusals atomic.Int32
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "only GET", http.StatusMethodNotAllowed)
			return
		}
		gets.Add(1)
		switch {
		case r.URL.Path != "/lake/data/f.parquet":
			s3Error(w, http.StatusNotFound, "NoSuchKey", "18ED78BA07A3018F1689F79C")
		case refusals.Load() > 0:
			refusals.Add(-1)
			s3Error(w, http.StatusForbidden, "InvalidAccessKeyId", "18ED78BA07A3018F1689F79C")
		default:
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(body)
		}
	}))
	t.Cleanup(store.Close)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	props := func(endpoint string) map[string]string {
		return map[string]string{
			"s3.endpoint": endpoint, "s3.region": "us-east-1",
			"s3.access-key-id": "key", "s3.secret-access-key": "secret",
			"s3.force-virtual-addressing": "false",
		}
	}
	const location = "s3://lake/data/f.parquet"
	fsys, err := icebergio.LoadFS(context.Background(), props(store.URL), location)
	if err != nil {
		t.Fatal(err)
	}
	open := func(fsys icebergio.IO, location string) (icebergio.File, error) {
		f, err := fsys.Open(location)
		if err != nil {
			return nil, classify("test", "open "+location, err)
		}
		return f, nil
	}

	t.Run("refused", func(t *testing.T) {
		refusals.Store(1)
		gets.Store(0)
		_, err := open(fsys, location)
		if !errors.Is(err, fault.ErrDenied) || errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("open refused with a request id that holds 301: %v; want fault.ErrDenied, not fs.ErrNotExist", err)
		}
		if n := gets.Load(); n != 1 {
			t.Fatalf("%d GETs, want the refused one only", n)
		}
		// The next open is served: nothing of the refusal stays.
		f, err := open(fsys, location)
		if err != nil {
			t.Fatalf("open after the refusal: %v", err)
		}
		defer f.Close()
		if got, err := io.ReadAll(f); err != nil || string(got) != string(body) {
			t.Fatalf("read %q, %v; want %q", got, err, body)
		}
	})

	t.Run("missing", func(t *testing.T) {
		gets.Store(0)
		_, err := open(fsys, "s3://lake/data/missing.parquet")
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, fault.ErrDenied) || errors.Is(err, fault.ErrUnavailable) {
			t.Fatalf("open of a missing object: %v, want fs.ErrNotExist only", err)
		}
		if n := gets.Load(); n != 1 {
			t.Fatalf("%d GETs of the missing object, want 1", n)
		}
	})

	t.Run("unreachable store, 301 in the URL", func(t *testing.T) {
		// A port nothing listens on: the connection is refused, and the
		// error's text holds the URL, "301" and all.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		const location = "s3://lake/301/f.parquet"
		down, err := icebergio.LoadFS(context.Background(), props("http://"+addr), location)
		if err != nil {
			t.Fatal(err)
		}
		_, err = open(down, location)
		if !errors.Is(err, fault.ErrUnavailable) || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "301") {
			t.Fatalf("open from a store that cannot be reached: %v; want fault.ErrUnavailable, not fs.ErrNotExist, with the URL's 301 in the text", err)
		}
	})
}

// s3Error answers as S3 does when it refuses a request: the status, and
// the error code and request id in the header and the XML body.
func s3Error(w http.ResponseWriter, status int, code, requestID string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-amz-request-id", requestID)
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><RequestId>%s</RequestId></Error>`, code, requestID)
}
