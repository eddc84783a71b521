//go:build integration

package e2e_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/internal/vendingcatalog"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// The sidecar against catalogs that vend each table's storage credentials:
// it is given the catalog principal's OAuth2 credential and scope, and no
// storage key at all.

// replica is one sidecar over a catalog, as cmd/sidecar wires it, with
// its own caches, metrics and log: replicas share nothing but the token
// key.
type replica struct {
	*sidecartest.Server
	log *testlog.Buffer
}

func newReplica(t *testing.T, cfg sidecatalog.Config) *replica {
	t.Helper()
	logs := &testlog.Buffer{}
	srv := sidecartest.StartSidecar(t, cfg, nil, func(hc *handlers.Config) {
		hc.Logger = slog.New(handlers.LogHandler(slog.NewJSONHandler(logs, nil)))
	})
	return &replica{Server: srv, log: logs}
}

// readOn reads every split of a plan made by another replica from r.
func (r *replica) readOn(t *testing.T, p sidecartest.Plan, planner *replica) []string {
	t.Helper()
	var rows []string
	for _, s := range p.Splits {
		resp, body := r.Get(t, strings.TrimPrefix(s.URI, planner.URL))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s on another replica: %d %s", s.URI, resp.StatusCode, body)
		}
		rows = append(rows, strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")...)
	}
	return rows
}

// leaks fails t when a credential shows in what the replicas answered,
// logged or exported as metrics.
func leaks(t *testing.T, secrets []string, answers [][]byte, replicas ...*replica) {
	t.Helper()
	for _, r := range replicas {
		_, m := r.Get(t, "/metrics")
		answers = append(answers, m, []byte(r.log.String()))
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, a := range answers {
			if bytes.Contains(a, []byte(s)) {
				t.Fatalf("a credential (%.6s…) shows in an answer, a log line or the metrics", s)
			}
		}
	}
}

// TestRealSidecarReadsVendedCredentials: SeaweedFS's REST catalog vends
// each table's STS session; the sidecar, given only the catalog principal's
// OAuth2 credential and scope (as for Polaris), plans the table on one
// replica and streams its rows exactly from another, which loads the table
// itself for the credentials. The session never shows in a token, an
// answer, a log line or a metric.
func TestRealSidecarReadsVendedCredentials(t *testing.T) {
	w := sidecartest.StartSeaweed(t, sidecartest.WithVending())
	vt := vendingTable(t, w)
	cfg := sidecatalog.Config{Type: "rest", Name: "lake", URI: w.RESTURL, Warehouse: "s3://" + w.Bucket, Props: w.ReaderProps()}
	a, b := newReplica(t, cfg), newReplica(t, cfg)

	p := a.Plan(t, sidecartest.Q("table", "lake.t"))
	if p.Mode != "v2" {
		t.Fatalf("planned %s, want v2", p.Mode)
	}
	servetest.SameRows(t, b.readOn(t, p, a), vt.want)
	servetest.SameRows(t, a.Rows(t, p), vt.want)

	// Each load is vended a session of its own, so the sessions are not
	// known here: what names them must not show, nor the principal's
	// secret. The vending front's tests look for the very keys.
	_, planBody := a.Get(t, "/splits?table=lake.t")
	leaks(t, []string{w.ReaderSecret, "s3.secret-access-key", "s3.session-token", "X-Amz-Security-Token"}, [][]byte{planBody}, a, b)
}

// TestRealSidecarAcrossRotation: a catalog (the vending front) vends
// short-lived S3 keys, in config or in storage-credentials without a
// credentials endpoint, and rotates them: the old key is refused by the
// store once expired. A stream that is under way when the key it read
// with expires reads on with the new one, and a plan after the rotation
// succeeds; the reloads show in sidecar_catalog_table_reloads_total. A
// vended key the store does not know is a 502 denied naming the catalog,
// and a catalog that vends nothing has the sidecar's own keys read.
func TestRealSidecarAcrossRotation(t *testing.T) {
	w := sidecartest.StartSeaweed(t, sidecartest.WithIdentities())
	ctx := context.Background()
	admin, _ := sidecartest.SeaweedREST(t, w)
	// Three data files packed into one split: the stream opens the second
	// and third once it has written the first's rows.
	if _, err := tablegen.Bench(ctx, admin, table.Identifier{"lake", "big"}, 30_000, 3, 0.01, 0); err != nil {
		t.Fatal(err)
	}
	warehouse := "s3://" + w.Bucket

	for _, mode := range []vendingcatalog.Mode{vendingcatalog.Config, vendingcatalog.StorageCredentials} {
		t.Run(mode.String(), func(t *testing.T) {
			f := startFront(t, w, vendingcatalog.Options{Mode: mode, Lifetime: 10 * time.Minute})
			r := newReplica(t, sidecatalog.Config{Type: "rest", Name: "lake", URI: f.URL(), Warehouse: warehouse, Props: w.ReaderProps()})
			p := r.Plan(t, sidecartest.Q("table", "lake.big"))
			if len(p.Splits) != 1 {
				t.Fatalf("%d splits, want the three files packed into one", len(p.Splits))
			}
			_, whole := r.Get(t, strings.TrimPrefix(p.Splits[0].URI, r.URL))

			resp, err := http.Get(p.Splits[0].URI)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			head := make([]byte, 4096)
			if _, err := io.ReadFull(resp.Body, head); err != nil {
				t.Fatal(err)
			}
			old := f.Current()
			next, err := f.Rotate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.ExpireOld(ctx); err != nil {
				t.Fatal(err)
			}
			wantRefused(t, w, old, "s3://"+w.Bucket+"/lake")
			rest, err := io.ReadAll(resp.Body)
			if err != nil {
				// The sidecar's log says which read ended the stream and
				// what the store answered.
				t.Fatalf("the stream across the rotation: %v after %d bytes of %d; the sidecar's log:\n%s", err, 4096+len(rest), len(whole), r.log)
			}
			if got := append(head, rest...); !bytes.Equal(got, whole) {
				t.Fatalf("the stream across the rotation sent %d bytes, not the %d of a stream before it", len(got), len(whole))
			}
			if n := sidecartest.MetricsOf(t, r.Server)[`sidecar_catalog_table_reloads_total{catalog="lake",outcome="ok",reason="refused"}`]; n < 1 {
				t.Fatalf("%v reloads for a refused key, want at least one", n)
			}
			// A plan after the rotation, and its rows.
			after := r.Plan(t, sidecartest.Q("table", "lake.big"))
			if _, body := r.Get(t, strings.TrimPrefix(after.Splits[0].URI, r.URL)); !bytes.Equal(body, whole) {
				t.Fatalf("the rows planned after the rotation differ: %d bytes, want %d", len(body), len(whole))
			}
			_, planBody := r.Get(t, "/splits?table=lake.big")
			leaks(t, []string{old.AccessKeyID, old.SecretAccessKey, next.AccessKeyID, next.SecretAccessKey, w.ReaderSecret},
				[][]byte{planBody, whole}, r)
		})
	}

	t.Run("a key the store refuses", func(t *testing.T) {
		f := startFront(t, w, vendingcatalog.Options{Mode: vendingcatalog.UnknownKey, Lifetime: 10 * time.Minute})
		r := newReplica(t, sidecatalog.Config{Type: "rest", Name: "lake", URI: f.URL(), Warehouse: warehouse, Props: w.ReaderProps()})
		resp, body := r.Get(t, "/splits?table=lake.big")
		if resp.StatusCode != http.StatusBadGateway || sidecartest.ErrorCode(t, body) != "denied" || !bytes.Contains(body, []byte(`catalog \"lake\"`)) {
			t.Fatalf("a vended key the store refuses: %d %s, want 502 denied naming the catalog", resp.StatusCode, body)
		}
		leaks(t, []string{f.Current().SecretAccessKey, f.Current().AccessKeyID}, [][]byte{body}, r)
	})

	t.Run("nothing vended", func(t *testing.T) {
		f := startFront(t, w, vendingcatalog.Options{Mode: vendingcatalog.Nothing, Lifetime: 10 * time.Minute})
		// The catalog's properties are the fallback: without S3 keys the
		// store refuses, with the sidecar's own keys it reads.
		r := newReplica(t, sidecatalog.Config{Type: "rest", Name: "lake", URI: f.URL(), Warehouse: warehouse, Props: w.ReaderProps()})
		if resp, body := r.Get(t, "/splits?table=lake.big"); resp.StatusCode != http.StatusBadGateway || sidecartest.ErrorCode(t, body) != "denied" {
			t.Fatalf("nothing vended and no keys of its own: %d %s, want 502 denied; log:\n%s", resp.StatusCode, body, r.log)
		}
		props := w.ReaderProps()
		for k, v := range w.S3Props() {
			props[k] = v
		}
		r = newReplica(t, sidecatalog.Config{Type: "rest", Name: "lake", URI: f.URL(), Warehouse: warehouse, Props: props})
		p := r.Plan(t, sidecartest.Q("table", "lake.big"))
		if rows := r.Rows(t, p); len(rows) == 0 {
			t.Fatal("no rows with the sidecar's own keys")
		}
	})
}
