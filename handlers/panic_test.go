package handlers_test

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// panicking is a catalog whose planner and files panic, as a bug of the
// sidecar's own code would.
type panicking struct{}

func (panicking) Plan(context.Context, splits.Request) (splits.Plan, error) {
	panic("a bug in planning")
}

func (panicking) Resolve(context.Context, token.TokenKind, token.PlanRef) ([]token.Split, error) {
	panic("a bug in resolving")
}

func (panicking) Source(context.Context, token.Split) (splits.Source, error) {
	return splits.Source{FS: panickingFS{}}, nil
}

// panickingFS opens files that send their first bytes and then panic.
type panickingFS struct{ icebergio.IO }

func (panickingFS) Open(name string) (icebergio.File, error) { return &panickingFile{name: name}, nil }

type panickingFile struct {
	icebergio.File
	name string
	pos  int64
}

func (f *panickingFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *panickingFile) Name() string               { return f.name }
func (f *panickingFile) Size() int64                { return panickingSize }
func (f *panickingFile) Mode() fs.FileMode          { return 0o444 }
func (f *panickingFile) ModTime() time.Time         { return time.Time{} }
func (f *panickingFile) IsDir() bool                { return false }
func (f *panickingFile) Sys() any                   { return nil }
func (f *panickingFile) Close() error               { return nil }

func (f *panickingFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		f.pos = off
	case io.SeekEnd:
		f.pos = panickingSize + off
	}
	return f.pos, nil
}

// ReadAt answers Parquet's magic bytes, at either end, for /files's
// check before the first byte.
func (f *panickingFile) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = "PAR1"[(off+int64(i))%4]
	}
	return len(p), nil
}

func (f *panickingFile) Read(p []byte) (int, error) {
	if f.pos > 0 {
		panic("a bug in the middle of a file")
	}
	n := min(len(p), 64<<10)
	f.pos += int64(n)
	return n, nil
}

// panickingSize is large enough that the first bytes go out before the
// panic.
const panickingSize = 4 << 20

// TestPanicsEndAtTheHandler: a panic of the sidecar's own code ends at the
// one boundary in the router: logged with its stack, answered 500
// internal before the first byte, the stream cut after it; the server
// serves on.
func TestPanicsEndAtTheHandler(t *testing.T) {
	t.Parallel()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	srv := httptest.NewServer(handlers.New(handlers.Config{
		Catalogs: []handlers.Catalog{{Type: "local", Name: "c", Plans: panicking{}, Splits: panicking{}}},
		Signer:   signer,
		Logger:   slog.New(slog.NewJSONHandler(logs, nil)),
	}))
	t.Cleanup(srv.Close)
	ts := &testServer{Server: srv}

	resp, body := ts.get(t, "/splits?table=a.b")
	if resp.StatusCode != http.StatusInternalServerError || errorCode(t, body) != "internal" {
		t.Fatalf("a panic before the first byte: %d %s, want 500 internal", resp.StatusCode, body)
	}
	if log := logs.String(); !strings.Contains(log, "a bug in planning") || !strings.Contains(log, "panic_test.go") {
		t.Fatalf("the panic is not logged with its stack:\n%s", log)
	}

	tok, err := signer.Sign(token.KindFile, token.Split{Catalog: "c", Table: []string{"a", "b"}, MetadataLocation: "/m.json",
		Data: token.DataFile{Path: "/d.parquet", Format: "PARQUET", Size: panickingSize, Records: 1}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := http.Get(srv.URL + "/files/" + tok)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if got.StatusCode != http.StatusOK {
		t.Fatalf("the file route: %d", got.StatusCode)
	}
	if n, err := io.Copy(io.Discard, got.Body); err == nil {
		t.Fatalf("a panic after the first byte ended the stream cleanly after %d bytes", n)
	}
	if !strings.Contains(logs.String(), "a bug in the middle of a file") {
		t.Fatal("the panic in the stream is not logged")
	}
	// The server serves on.
	if resp, _ := ts.get(t, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after the panics: %d", resp.StatusCode)
	}
}
