package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the s3 scheme, as the binary registers it
)

// TestOpenAsksAMissingObjectAgain: gocloud's S3 driver takes any failure
// whose message holds "301" for a missing bucket, and iceberg-go's
// blobfs.Open reports it as fs.ErrNotExist. A store's request id holds
// "301" by chance (about one answer in 200 for a 24-digit hex id), so a
// refusal that should renew the credentials read as a missing file. The
// store here is an HTTP handler that answers as S3 does: no real store
// can be made to pick such a request id. The first GET of the object is
// refused with a request id that holds "301", the next one served; the
// missing object is answered 404 twice.
func TestOpenAsksAMissingObjectAgain(t *testing.T) {
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
			s3Error(w, http.StatusNotFound, "NoSuchKey", "18ED78BA07AF8779F1689F79")
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
	props := map[string]string{
		"s3.endpoint": store.URL, "s3.region": "us-east-1",
		"s3.access-key-id": "key", "s3.secret-access-key": "secret",
		"s3.force-virtual-addressing": "false",
	}
	const location = "s3://lake/data/f.parquet"
	fsys, err := icebergio.LoadFS(context.Background(), props, location)
	if err != nil {
		t.Fatal(err)
	}

	// What the workaround is for: iceberg-go and gocloud alone read the
	// refusal as a missing file.
	refusals.Store(1)
	if _, err := fsys.Open(location); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("iceberg-go's open of a refusal whose request id holds 301: %v; if it is no longer fs.ErrNotExist, openObject's second open can go", err)
	}

	refusals.Store(1)
	gets.Store(0)
	tio := &tableIO{c: &Catalog{}}
	f, err := tio.openObject(fsys, location)
	if err != nil {
		t.Fatalf("open after a refusal read as missing: %v", err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil || string(got) != string(body) {
		t.Fatalf("read %q, %v; want %q", got, err, body)
	}
	if n := gets.Load(); n != 2 {
		t.Fatalf("%d GETs, want the refused one and the one asked again", n)
	}

	gets.Store(0)
	if _, err := tio.openObject(fsys, "s3://lake/data/missing.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing object: %v, want fs.ErrNotExist", err)
	}
	if n := gets.Load(); n != 2 {
		t.Fatalf("%d GETs of the missing object, want 2", n)
	}
}

// s3Error answers as S3 does when it refuses a request: the status, and
// the error code and request id in the header and the XML body.
func s3Error(w http.ResponseWriter, status int, code, requestID string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-amz-request-id", requestID)
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><RequestId>%s</RequestId></Error>`, code, requestID)
}
