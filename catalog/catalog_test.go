package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	// S3 FileIOs, as the sidecar's binary registers them.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"

	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// events is the registry a Catalog counts its reloads on.
type events struct{ reg *prometheus.Registry }

func newEvents() *events { return &events{reg: prometheus.NewRegistry()} }

// reloads lists the reloads counted: each one's reason, with "!" after it
// when the load failed, in the order of the reasons.
func (e *events) reloads(t *testing.T) string {
	t.Helper()
	families, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != "sidecar_catalog_table_reloads_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			reason := labels["reason"]
			if labels["outcome"] == "error" {
				reason += "!"
			}
			for range int(m.GetCounter().GetValue()) {
				out = append(out, reason)
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// clock is a settable clock for the caches' ages.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) option() Option          { return WithClock(c.now) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// deniedError is an object store's refusal of the credentials, as the S3
// SDK reports it: HTTP 403.
type deniedError struct{}

func (deniedError) Error() string       { return "api error AccessDenied: Access Denied" }
func (deniedError) HTTPStatusCode() int { return http.StatusForbidden }

// revoker makes the store refuse the credentials of every table load
// before a given one, as a catalog's rotated keys are refused once their
// successors are out: a file remembers the number of loads the catalog
// had answered when it was opened, and reads of a file opened with
// revoked credentials are refused.
type revoker struct {
	rc *restCatalog
	// below: files opened when the catalog had answered fewer loads are
	// refused.
	below atomic.Int32
	// always refuses every read, whatever the load.
	always atomic.Bool
}

func (v *revoker) wrap(fsys icebergio.IO) icebergio.IO { return revokedIO{IO: fsys, v: v} }

// revoke refuses the credentials of every load answered so far.
func (v *revoker) revoke() { v.below.Store(v.rc.loads.Load() + 1) }

type revokedIO struct {
	icebergio.IO
	v *revoker
}

func (r revokedIO) Open(name string) (icebergio.File, error) {
	f, err := r.IO.Open(name)
	if err != nil {
		return nil, err
	}
	return &revokedFile{File: f, v: r.v, load: r.v.rc.loads.Load()}, nil
}

type revokedFile struct {
	icebergio.File
	v    *revoker
	load int32
}

func (f *revokedFile) refused() bool { return f.v.always.Load() || f.load < f.v.below.Load() }

func (f *revokedFile) ReadAt(p []byte, off int64) (int, error) {
	if f.refused() {
		return 0, deniedError{}
	}
	return f.File.ReadAt(p, off)
}

func (f *revokedFile) Read(p []byte) (int, error) {
	if f.refused() {
		return 0, deniedError{}
	}
	return f.File.Read(p)
}

// restLake is a Catalog over a loopback REST catalog of the demo tables,
// with the given catalog properties. Its roots are the catalog's local
// warehouse (a data root, since a REST catalog's warehouse is a name) and
// the bucket s3://lake.
func restLake(t *testing.T, props map[string]string, reg prometheus.Registerer, opts ...Option) (*Catalog, *restCatalog) {
	t.Helper()
	rc := newRESTCatalog(t)
	cat, err := New(Config{Type: "rest", Name: "lake", URI: rc.URL, Props: props, DataRoots: []string{rc.dir},
		StoragePrefixes: []string{"s3://lake"}}, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat, rc
}

// metadataBytes opens a table's metadata file through the table's FileIO
// and returns it with the file's bytes on disk.
func metadataBytes(t *testing.T, tbl *table.Table) (icebergio.File, []byte) {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	want, err := os.ReadFile(strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	if err != nil {
		t.Fatal(err)
	}
	return f, want
}

// TestRefusedReadsReopen: a store that refuses the credentials a file was
// opened with (rotated, revoked) has the table loaded again and the file
// opened with the new ones, and the read goes on at the same offset, for
// ReadAt and for sequential reads; the reload is an event, once.
func TestRefusedReadsReopen(t *testing.T) {
	ctx := context.Background()
	v := &revoker{}
	ev := newEvents()
	cat, rc := restLake(t, nil, ev.reg, WithFileIOWrapper(v.wrap))
	v.rc = rc
	tbl, err := cat.LoadTable(ctx, demo.Orders)
	if err != nil {
		t.Fatal(err)
	}
	f, want := metadataBytes(t, tbl)

	head := make([]byte, 16)
	if _, err := f.ReadAt(head, 0); err != nil {
		t.Fatal(err)
	}
	v.revoke()
	next := make([]byte, 16)
	if _, err := f.ReadAt(next, 16); err != nil {
		t.Fatalf("ReadAt after the credentials were revoked: %v", err)
	}
	if !bytes.Equal(append(head, next...), want[:32]) {
		t.Fatalf("read %q, want %q", append(head, next...), want[:32])
	}
	if got := ev.reloads(t); got != "refused" {
		t.Fatalf("reloads %q, want one refused", got)
	}
	if n := rc.loads.Load(); n != 2 {
		t.Fatalf("%d table loads, want 2", n)
	}

	// Sequential reads resume at their position.
	seq, _ := metadataBytes(t, tbl)
	first := make([]byte, 10)
	if _, err := io.ReadFull(seq, first); err != nil {
		t.Fatal(err)
	}
	v.revoke()
	rest, err := io.ReadAll(seq)
	if err != nil {
		t.Fatalf("Read after the credentials were revoked: %v", err)
	}
	if got := append(first, rest...); !bytes.Equal(got, want) {
		t.Fatalf("sequential read of %d bytes differs from the file's %d", len(got), len(want))
	}
	if got := ev.reloads(t); got != "refused,refused" {
		t.Fatalf("reloads %q, want two refused", got)
	}
}

// TestRefusedKeyIsDenied: credentials the store refuses even after a new
// load are ErrDenied, naming the catalog; credentials that cannot be
// renewed because the catalog does not answer are ErrUnavailable.
func TestRefusedKeyIsDenied(t *testing.T) {
	ctx := context.Background()
	v := &revoker{}
	cat, rc := restLake(t, nil, nil, WithFileIOWrapper(v.wrap))
	v.rc = rc
	tbl, err := cat.LoadTable(ctx, demo.Orders)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := metadataBytes(t, tbl)
	v.always.Store(true)
	_, err = f.ReadAt(make([]byte, 8), 0)
	if !errors.Is(err, fault.ErrDenied) || !strings.Contains(err.Error(), `catalog "lake"`) {
		t.Fatalf("read with refused credentials: %v, want ErrDenied naming the catalog", err)
	}
	if err := cat.Ping(ctx); !errors.Is(err, fault.ErrDenied) {
		t.Fatalf("Ping after the store refused: %v, want ErrDenied (/readyz follows storage)", err)
	}

	v.always.Store(false)
	v.revoke()
	rc.failLoads.Store(true)
	_, err = f.ReadAt(make([]byte, 8), 0)
	if !errors.Is(err, fault.ErrUnavailable) {
		t.Fatalf("read whose renewal the catalog does not answer: %v, want ErrUnavailable", err)
	}
	rc.failLoads.Store(false)
	if _, err := cat.LoadTable(ctx, demo.Orders); err != nil {
		t.Fatal(err)
	}
	if err := cat.Ping(ctx); err != nil {
		t.Fatalf("Ping after a load was answered again: %v", err)
	}
}

// TestExpiredVendedCredentialsReload: prefix-scoped credentials vended with
// an expiry and no endpoint to renew them make iceberg-go's FileIO fail
// once they near it; the table is then loaded again for new ones, before a
// store ever sees the old ones expire. When the catalog advertises its
// credentials endpoint, iceberg-go renews them itself.
func TestExpiredVendedCredentialsReload(t *testing.T) {
	ctx := context.Background()
	expired := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	vended := map[string]any{"prefix": "", "config": map[string]string{
		"s3.access-key-id": "AKIDVENDED", "s3.secret-access-key": "vended-secret", "s3.session-token-expires-at-ms": expired}}
	for _, tc := range []struct {
		name      string
		endpoints []string
		reloads   string
	}{
		{"no credentials endpoint", []string{"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"}, "expired"},
		{"credentials endpoint", []string{"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			ev := newEvents()
			cat, rc := restLake(t, nil, ev.reg, clk.option())
			rc.endpoints = tc.endpoints
			rc.vend(nil, vended)
			tbl, err := cat.LoadTable(ctx, demo.Orders)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := metadataBytes(t, tbl)
			_ = f.Close()
			// The FileIO is asked for again after fsMaxAge.
			clk.advance(fsMaxAge)
			f, _ = metadataBytes(t, tbl)
			if _, err := f.ReadAt(make([]byte, 8), 0); err != nil {
				t.Fatal(err)
			}
			if got := ev.reloads(t); got != tc.reloads {
				t.Fatalf("reloads %q, want %q", got, tc.reloads)
			}

			// Without the catalog, expired credentials cannot be renewed:
			// ErrUnavailable, which clients retry.
			if tc.reloads == "" {
				return
			}
			rc.failLoads.Store(true)
			clk.advance(fsMaxAge)
			fsys, err := tbl.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Open(tbl.MetadataLocation()); !errors.Is(err, fault.ErrUnavailable) {
				t.Fatalf("open with credentials that cannot be renewed: %v, want ErrUnavailable", err)
			}
		})
	}
}

// TestTokenTablesAreCached: a token's table is loaded from the catalog
// once for many reads, again after tableMaxAge, and its pinned metadata
// file is read once.
func TestTokenTablesAreCached(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	ev := newEvents()
	cat, rc := restLake(t, nil, ev.reg, clk.option())
	tbl, err := cat.LoadTable(ctx, demo.Orders)
	if err != nil {
		t.Fatal(err)
	}
	loc := tbl.MetadataLocation()
	for range 5 {
		at, err := cat.TableAt(ctx, demo.Orders, loc)
		if err != nil {
			t.Fatal(err)
		}
		if at.MetadataLocation() != loc || at.CurrentSnapshot().SnapshotID != tbl.CurrentSnapshot().SnapshotID {
			t.Fatalf("TableAt %s: another table", at.MetadataLocation())
		}
	}
	if n := rc.loads.Load(); n != 1 {
		t.Fatalf("%d loads for one plan and five token reads, want 1", n)
	}
	clk.advance(tableMaxAge)
	if _, err := cat.TableAt(ctx, demo.Orders, loc); err != nil {
		t.Fatal(err)
	}
	if n := rc.loads.Load(); n != 2 || ev.reloads(t) != "age" {
		t.Fatalf("%d loads, reloads %q; want 2 and one for age", n, ev.reloads(t))
	}
	if _, err := cat.TableAt(ctx, []string{"demo", "missing"}, loc); !errors.Is(err, fault.ErrTableNotFound) {
		t.Fatalf("TableAt of a missing table: %v, want ErrTableNotFound", err)
	}
}

// TestSigV4SignsCatalogRequests: with rest.sigv4-enabled, every catalog
// request is signed with AWS Signature Version 4 for the configured
// service and region, with the AWS credentials of the environment, as S3
// Tables' and Glue's Iceberg REST endpoints want.
func TestSigV4SignsCatalogRequests(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSIGV4TEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "sigv4-test-secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, service := range []string{"s3tables", "glue"} {
		t.Run(service, func(t *testing.T) {
			cat, rc := restLake(t, map[string]string{"rest.sigv4-enabled": "true", "rest.signing-name": service,
				"rest.signing-region": "eu-central-1"}, nil)
			if _, err := cat.LoadTable(context.Background(), demo.Orders); err != nil {
				t.Fatal(err)
			}
			hs := rc.requestHeaders()
			if len(hs) < 2 {
				t.Fatalf("%d catalog requests, want the config and the table load", len(hs))
			}
			want := "AWS4-HMAC-SHA256 Credential=AKIDSIGV4TEST/"
			scope := "/eu-central-1/" + service + "/aws4_request"
			for i, h := range hs {
				a := h.Get("Authorization")
				if !strings.HasPrefix(a, want) || !strings.Contains(a, scope) || h.Get("X-Amz-Date") == "" {
					t.Fatalf("request %d: Authorization %q, want SigV4 for %s", i, a, scope)
				}
			}
		})
	}
}

// TestRefusals: what the sidecar does not read is refused by name: remote
// signing in the configuration at start-up, and in a table's load answer
// at planning; an encrypted table at planning.
func TestRefusals(t *testing.T) {
	for _, key := range []string{"s3.remote-signing-enabled", "s3.signer.uri"} {
		value := "true"
		if key == "s3.signer.uri" {
			value = "https://signer"
		}
		err := Config{Type: "rest", Name: "lake", URI: "http://catalog", Props: map[string]string{key: value}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "remote signing") || !strings.Contains(err.Error(), key) {
			t.Errorf("%s at start-up: %v, want a refusal naming remote signing and the property", key, err)
		}
	}
	if err := (Config{Type: "rest", Name: "lake", URI: "http://c", Props: map[string]string{"s3.remote-signing-enabled": "false"}}).Validate(); err != nil {
		t.Errorf("remote signing turned off is refused: %v", err)
	}

	cat, rc := restLake(t, nil, nil)
	rc.vend(map[string]string{"s3.remote-signing-enabled": "true", "s3.endpoint": "http://127.0.0.1:1", "s3.region": "us-east-1"})
	// The table's metadata is announced on S3, as a catalog that asks for
	// remote signing would serve it, so that iceberg-go builds an S3
	// FileIO for it.
	rc.served = map[string]string{"demo/orders": "s3://lake/demo/orders/metadata/v1.metadata.json"}
	_, err := cat.LoadTable(context.Background(), demo.Orders)
	if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), "remote signing") {
		t.Fatalf("a load answer asking for remote signing: %v, want ErrUnsupported naming it", err)
	}

	cat, rc = restLake(t, nil, nil)
	rc.edit = func(raw []byte) []byte {
		// Called by the catalog's handler goroutine: errors are t.Error.
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Error(err)
			return raw
		}
		m["properties"] = map[string]string{"s3.remote-signing-enabled": "true"}
		b, err := json.Marshal(m)
		if err != nil {
			t.Error(err)
			return raw
		}
		return b
	}
	_, err = cat.LoadTable(context.Background(), demo.Orders)
	if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), "s3.remote-signing-enabled") {
		t.Fatalf("a table whose properties ask for remote signing: %v, want ErrUnsupported naming the property", err)
	}

	cat, rc = restLake(t, nil, nil)
	rc.edit = func(raw []byte) []byte {
		// A v3 table (encryption keys are v3's) with one key.
		raw = bytes.Replace(raw, []byte(`"format-version":2`), []byte(`"format-version":3,"next-row-id":0`), 1)
		return bytes.Replace(raw, []byte(`{`), []byte(`{"encryption-keys":[{"key-id":"k1","encrypted-key-metadata":"AAAA"}],`), 1)
	}
	_, err = cat.LoadTable(context.Background(), demo.Orders)
	if !errors.Is(err, fault.ErrUnsupported) || !strings.Contains(err.Error(), "encrypted") {
		t.Fatalf("an encrypted table: %v, want ErrUnsupported saying it is encrypted", err)
	}
}

// stallingIO is a store that stops answering: opens and reads block until
// the test ends (released), as an object store that accepted the
// connection and sends nothing more.
type stallingIO struct {
	icebergio.IO
	opens    bool // opens stall too
	released <-chan struct{}
}

func (s stallingIO) Open(name string) (icebergio.File, error) {
	if s.opens {
		<-s.released
	}
	f, err := s.IO.Open(name)
	if err != nil {
		return nil, err
	}
	return stallingFile{File: f, released: s.released}, nil
}

type stallingFile struct {
	icebergio.File
	released <-chan struct{}
}

func (f stallingFile) ReadAt(p []byte, off int64) (int, error) {
	<-f.released
	return f.File.ReadAt(p, off)
}

// TestStalledStoreFails: a read or an open that gets nothing from the store
// for the stall timeout fails with ErrStalled, an ErrUnavailable, instead
// of waiting for ever; the reads that do answer are untouched.
func TestStalledStoreFails(t *testing.T) {
	ctx := context.Background()
	released := make(chan struct{})
	t.Cleanup(func() { close(released) })
	stall := false
	wrap := func(fsys icebergio.IO) icebergio.IO {
		if !stall {
			return fsys
		}
		return stallingIO{IO: fsys, released: released}
	}
	cat, _ := restLake(t, nil, nil, WithFileIOWrapper(wrap), WithStallTimeout(50*time.Millisecond))
	tbl, err := cat.LoadTable(ctx, demo.Orders)
	if err != nil {
		t.Fatal(err)
	}
	f, want := metadataBytes(t, tbl)
	got := make([]byte, len(want))
	if n, err := f.ReadAt(got, 0); err != nil || n != len(want) || !bytes.Equal(got, want) {
		t.Fatalf("a read the store answers: %d bytes, %v", n, err)
	}

	stall = true
	f, _ = metadataBytes(t, tbl)
	_, err = f.ReadAt(make([]byte, 16), 0)
	if !errors.Is(err, ErrStalled) || !errors.Is(err, fault.ErrUnavailable) {
		t.Fatalf("a read the store never answers: %v, want ErrStalled", err)
	}
	cat.wrap = func(fsys icebergio.IO) icebergio.IO { return stallingIO{IO: fsys, opens: true, released: released} }
	fsys, _ := tbl.FS(ctx)
	if _, err := fsys.Open(tbl.MetadataLocation()); !errors.Is(err, ErrStalled) {
		t.Fatalf("an open the store never answers: %v, want ErrStalled", err)
	}
}
