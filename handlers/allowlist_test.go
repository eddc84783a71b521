package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/demo"
)

// secretBytes are the contents of the files an attacker is after; no
// answer may hold any of them.
const secretBytes = "zq9:x:0:0:secret-material:/bin/bash\n"

// signedLake writes the demo tables into a warehouse under a folder of its
// own, beside a file that is no table's (a token key, /etc/passwd), and
// serves the warehouse through a catalog with cfg's allowlist and data
// roots.
func signedLake(t *testing.T, cfg sidecatalog.Config) (srv *testServer, dir, warehouse string) {
	t.Helper()
	dir = t.TempDir()
	warehouse = filepath.Join(dir, "warehouse")
	if err := demo.Write(context.Background(), catalogtest.Local(t, warehouse)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sidecar-token.key"), []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Type, cfg.Warehouse = "local", warehouse
	return newServer(t, cfg, nil), dir, warehouse
}

// TestHostileOtherTables: with one catalog principal, anyone who could
// submit a Druid task (or reach the port) read every table that principal
// could. A catalog's allowlist (Config.Allow) serves only its namespaces
// and tables: any other is a 403 table_not_served at planning (every
// planning route and the status page) and at reading, even with a token a
// sidecar without the list signed with the same key, and the status page
// lists none of them. The catalog's TestAllowlist holds the list itself;
// this test holds every route to it.
func TestHostileOtherTables(t *testing.T) {
	t.Parallel()
	open, _, warehouse := signedLake(t, sidecatalog.Config{})
	srv := newServer(t, sidecatalog.Config{Type: "local", Warehouse: warehouse, Allow: []string{"demo.customers"}}, nil)
	rows := open.plan(t, q("table", "demo.orders", "mode", "rows"))
	orderTS := "&dataSource=o&timestampColumn=order_ts"
	for _, path := range []string{
		"/splits?table=demo.orders",
		"/druid/task?table=demo.orders" + orderTS,
		"/druid/sql?table=demo.orders" + orderTS,
		"/changes?table=demo.orders&timeColumn=order_ts",
		strings.TrimPrefix(rows.Splits[0].URI, open.URL),
	} {
		resp, body := srv.get(t, path)
		if resp.StatusCode != http.StatusForbidden || errorCode(t, body) != "table_not_served" {
			t.Errorf("GET %s: %d %s, want 403 table_not_served", path, resp.StatusCode, body)
		}
	}
	// The status page says so, as it says every error of a table.
	if resp, body := srv.get(t, "/?table=demo.orders"); resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("table not served")) {
		t.Errorf("status page of demo.orders: %d %s", resp.StatusCode, body)
	}

	// The table it serves plans and reads; the status page lists it alone.
	p := srv.plan(t, q("table", "demo.customers", "mode", "rows"))
	if got := srv.rows(t, p); len(got) != 5 {
		t.Fatalf("demo.customers: %d rows, want 5", len(got))
	}
	resp, body := srv.get(t, "/")
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("demo.customers")) || bytes.Contains(body, []byte("demo.orders")) {
		t.Fatalf("status page: %d, lists demo.customers %v and demo.orders %v", resp.StatusCode,
			bytes.Contains(body, []byte("demo.customers")), bytes.Contains(body, []byte("demo.orders")))
	}
}
