//go:build integration

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
)

// waitStatus asks srv for path until it answers want, for at most 30 s,
// and returns that answer's body: the sidecar's answer follows a catalog
// process that tells nobody when it is up or down.
func waitStatus(t *testing.T, srv *sidecartest.Server, path string, want int) []byte {
	t.Helper()
	var body []byte
	testenv.Poll(t, 30*time.Second, func() error {
		var resp *http.Response
		resp, body = srv.Get(t, path)
		if resp.StatusCode != want {
			return fmt.Errorf("%s still answers %d %s, want %d", path, resp.StatusCode, body, want)
		}
		return nil
	})
	return body
}

// TestRealCatalogDownAndBack: a REST catalog that is down when the sidecar
// starts is not fatal; planning and /readyz answer 503 with Retry-After
// until it is up, then the sidecar serves it without a restart. The same
// holds when it goes down later and comes back.
func TestRealCatalogDownAndBack(t *testing.T) {
	ctx := context.Background()
	w := sidecartest.NewSeaweed(t) // configured, not started
	cfg := sidecatalog.Config{Type: "rest", Name: "seaweed", URI: w.RESTURL, Warehouse: "s3://" + w.Bucket, Props: w.Props()}
	srv := sidecartest.NewServer(t, cfg, nil)

	for _, path := range []string{"/splits?table=lake.orders", "/readyz"} {
		resp, body := srv.Get(t, path)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			sidecartest.ErrorCode(t, body) != "unavailable" || !strings.Contains(string(body), `catalog \"seaweed\"`) {
			t.Fatalf("%s with the catalog down at start: %d (Retry-After %q) %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if resp, _ := srv.Get(t, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with the catalog down: %d", resp.StatusCode)
	}

	w.Start(t)
	cat, _ := sidecartest.SeaweedREST(t, w)
	sc := tablegen.ScenarioNamed(t, "positional_and_equality")
	tbl, err := sc.Build(ctx, cat, table.Identifier{"lake", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, srv, "/splits?table=lake.orders", http.StatusOK)
	servetest.SameRows(t, srv.Rows(t, srv.Plan(t, sidecartest.Q("table", "lake.orders"))), want)
	waitStatus(t, srv, "/readyz", http.StatusOK)

	// Down after it was connected: the next load fails and /readyz
	// follows; back on the same address and data, it serves again.
	w.Stop(t)
	body := waitStatus(t, srv, "/splits?table=lake.orders", http.StatusServiceUnavailable)
	if sidecartest.ErrorCode(t, body) != "unavailable" {
		t.Fatalf("/splits with the catalog stopped: %s", body)
	}
	waitStatus(t, srv, "/readyz", http.StatusServiceUnavailable)
	w.Start(t)
	waitStatus(t, srv, "/splits?table=lake.orders", http.StatusOK)
	servetest.SameRows(t, srv.Rows(t, srv.Plan(t, sidecartest.Q("table", "lake.orders"))), want)
	waitStatus(t, srv, "/readyz", http.StatusOK)
}

// TestRealObjectStoreKilledMidStream: SeaweedFS is killed while a row stream
// reads a data file from it; the client sees an error, never a clean short
// body.
func TestRealObjectStoreKilledMidStream(t *testing.T) {
	ctx := context.Background()
	w := sidecartest.StartSeaweed(t)
	cat, cfg := sidecartest.SeaweedREST(t, w)
	if _, err := tablegen.Bench(ctx, cat, table.Identifier{"lake", "big"}, 400_000, 1, 0.01, 0); err != nil {
		t.Fatal(err)
	}
	srv := sidecartest.NewServer(t, cfg, nil)
	p := srv.Plan(t, sidecartest.Q("table", "lake.big"))
	if p.Mode != "v2" || len(p.Splits) != 1 {
		t.Fatalf("planned %s with %d splits", p.Mode, len(p.Splits))
	}
	resp, err := srv.Client().Get(p.Splits[0].URI)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	head := make([]byte, 4096)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	w.Kill(t)
	rest, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d more bytes with the object store killed", len(rest))
	}
	t.Logf("the client saw %v after %d more bytes", err, len(rest))
}

// TestRealWrongCredentials: a catalog or object store that refuses the
// configured credentials gives a clear error that names the catalog, and
// neither the answer nor the log holds the secret.
func TestRealWrongCredentials(t *testing.T) {
	ctx := context.Background()
	w := sidecartest.StartSeaweed(t)
	cat, good := sidecartest.SeaweedREST(t, w)
	if _, err := tablegen.ScenarioNamed(t, "positional_and_equality").Build(ctx, cat, table.Identifier{"lake", "t"}); err != nil {
		t.Fatal(err)
	}
	pg := sidecartest.StartPostgres(t)
	pgCat, pgGood := sidecartest.SQLCatalog(t, pg.URI(pg.Password), "s3://"+w.PlainBucket+"/warehouse", w.S3Props())
	if _, err := tablegen.ScenarioNamed(t, "positional_and_equality").Build(ctx, pgCat, table.Identifier{"lake", "t"}); err != nil {
		t.Fatal(err)
	}

	with := func(cfg sidecatalog.Config, key, value string) sidecatalog.Config {
		cfg.Props = maps.Clone(cfg.Props)
		cfg.Props[key] = value
		return cfg
	}
	pgWrong := pgGood
	pgWrong.URI = pg.URI("wrong-pg-password-77")
	tests := []struct {
		name   string
		cfg    sidecatalog.Config
		secret string
		says   string
	}{
		{"REST credential", with(good, "credential", w.AccessKey+":wrong-rest-secret-77"), "wrong-rest-secret-77", `connect to rest catalog \"seaweed\"`},
		{"S3 secret key", with(good, "s3.secret-access-key", "wrong-s3-secret-77"), "wrong-s3-secret-77", `in catalog \"seaweed\"`},
		{"PostgreSQL password", pgWrong, "wrong-pg-password-77", `connect to sql catalog \"lake\"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs testlog.Buffer
			srv := sidecartest.NewServer(t, tc.cfg, nil, func(c *handlers.Config) {
				c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			})
			resp, body := srv.Get(t, "/splits?table=lake.t")
			if resp.StatusCode != http.StatusBadGateway || sidecartest.ErrorCode(t, body) != "denied" || !strings.Contains(string(body), tc.says) {
				t.Fatalf("/splits: %d %s; want 502 denied naming %s", resp.StatusCode, body, tc.says)
			}
			if resp, body := srv.Get(t, "/readyz"); resp.StatusCode == http.StatusOK {
				t.Fatalf("/readyz with refused credentials: %d %s", resp.StatusCode, body)
			}
			if strings.Contains(string(body), tc.secret) || strings.Contains(logs.String(), tc.secret) {
				t.Fatalf("the secret leaks: answer %s\nlog %s", body, logs.String())
			}
			if !strings.Contains(logs.String(), "denied") {
				t.Fatalf("the refusal is not logged: %s", logs.String())
			}
		})
	}
}
