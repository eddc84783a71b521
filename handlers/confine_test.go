package handlers_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/token"
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

// tokenOf is a split that the token of a URI of a plan signs: one with a
// delete file when there is one.
func tokenOf(t *testing.T, kind token.TokenKind, uri string) token.Split {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(u.Path, "/splits/"), "/files/"), "/rows")
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := signer.Decode(kind, tok)
	if err != nil || len(tk.Parts) == 0 {
		t.Fatalf("decode %s: %v", uri, err)
	}
	for _, sp := range tk.Parts {
		if len(sp.Deletes) > 0 {
			return sp
		}
	}
	return tk.Parts[0]
}

// sign signs a split with the server's key, as an insider who holds it
// would.
func sign(t *testing.T, kind token.TokenKind, sp token.Split) string {
	t.Helper()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signer.Sign(kind, sp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestHostileSignedPaths: a token signed with the server's key (an insider
// who holds it) opened whatever path it named: /files served the token key
// file, /etc/passwd or a directory, and the rows route answered a 422 that
// quoted the first bytes of the file. Every open, through /files, the rows
// route (data and delete files) and the metadata a token pins, is now
// confined to the roots of the token's table and catalog: 403
// forbidden_location, nothing opened, no byte of the file in the answer;
// a file inside the table that is not Parquet is a 422 that quotes none of
// its bytes either. The tables' own tokens still read.
func TestHostileSignedPaths(t *testing.T) {
	t.Parallel()
	srv, dir, warehouse := signedLake(t, sidecatalog.Config{})
	secret := filepath.Join(dir, "sidecar-token.key")
	rows := srv.plan(t, q("table", "demo.orders", "mode", "rows"))
	files := srv.plan(t, q("table", "demo.customers", "mode", "files"))
	rowsSplit := tokenOf(t, token.KindRows, rows.Splits[0].URI)
	fileSplit := tokenOf(t, token.KindFile, files.Splits[0].URI)
	if len(rowsSplit.Deletes) == 0 {
		t.Fatal("demo.orders' split has no delete file")
	}

	// Inside the table: a link out of it, a directory, and a file that
	// is not Parquet.
	orders := filepath.Join(warehouse, "demo", "orders")
	if err := os.Symlink(secret, filepath.Join(orders, "data", "link.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(orders, "data", "dir.parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	notParquet := filepath.Join(orders, "data", "notes.parquet")
	if err := os.WriteFile(notParquet, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(orders, "metadata", "v99.metadata.json")
	if err := os.WriteFile(notJSON, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}

	fileToken := func(path string, size int64) string {
		sp := fileSplit
		sp.Data.Path, sp.Data.Size = path, size
		return "/files/" + sign(t, token.KindFile, sp)
	}
	dataToken := func(path string) string {
		sp := rowsSplit
		sp.Data.Path, sp.Data.Size = path, int64(len(secretBytes))
		sp.Deletes = nil
		return "/splits/" + sign(t, token.KindRows, sp) + "/rows"
	}
	deleteToken := func(path string) string {
		sp := rowsSplit
		sp.Deletes = append([]token.DeleteFile(nil), sp.Deletes...)
		sp.Deletes[0].Path = path
		return "/splits/" + sign(t, token.KindRows, sp) + "/rows"
	}
	metadataToken := func(path string) string {
		sp := rowsSplit
		sp.MetadataLocation = path
		return "/splits/" + sign(t, token.KindRows, sp) + "/rows"
	}
	size := int64(len(secretBytes))
	for _, tc := range []struct {
		name, path string
		status     int
		code       string
	}{
		{"file token naming the token key file", fileToken(secret, size), 403, "forbidden_location"},
		{"file token naming /etc/passwd", fileToken("/etc/passwd", size), 403, "forbidden_location"},
		{"file token climbing out of the table", fileToken(orders+"/data/../../../../sidecar-token.key", size), 403, "forbidden_location"},
		{"file token naming a link out of the table", fileToken(filepath.Join(orders, "data", "link.parquet"), size), 403, "forbidden_location"},
		{"file token naming a directory", fileToken(filepath.Join(orders, "data", "dir.parquet"), 4096), 403, "forbidden_location"},
		{"file token naming a device", fileToken("/dev/zero", 0), 403, "forbidden_location"},
		{"rows token naming the token key file", dataToken(secret), 403, "forbidden_location"},
		{"rows token naming /etc/passwd", dataToken("/etc/passwd"), 403, "forbidden_location"},
		{"rows token whose delete file is the token key file", deleteToken(secret), 403, "forbidden_location"},
		{"rows token pinning the token key file as metadata", metadataToken(secret), 403, "forbidden_location"},
		{"rows token naming a file in the table that is not Parquet", dataToken(notParquet), 422, "unreadable_file"},
		{"rows token pinning a file in the table that is not JSON", metadataToken(notJSON), 422, "damaged_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := srv.get(t, tc.path)
			if resp.StatusCode != tc.status || errorCode(t, body) != tc.code {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, body, tc.status, tc.code)
			}
			// The last 8 bytes but 4 read as a footer length are
			// bytes too.
			tail := []byte(secretBytes[len(secretBytes)-8:])
			footer := strconv.FormatUint(uint64(binary.LittleEndian.Uint32(tail)), 10)
			for _, leak := range []string{"zq9", "secret-material", "'z'", footer} {
				if bytes.Contains(body, []byte(leak)) {
					t.Fatalf("the answer quotes the file's bytes (%s): %s", leak, body)
				}
			}
		})
	}

	// The tables' own tokens read.
	if got := srv.rows(t, rows); len(got) != len(demo.OrdersLive) {
		t.Fatalf("demo.orders: %d rows, want %d", len(got), len(demo.OrdersLive))
	}
	resp, body := srv.get(t, strings.TrimPrefix(files.Splits[0].URI, srv.URL))
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("PAR1")) {
		t.Fatalf("demo.customers' file: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// TestHostileOtherTables: with one catalog principal, anyone who could
// submit a Druid task (or reach the port) read every table that principal
// could. A catalog's allowlist (Config.Allow) serves only its namespaces
// and tables: any other is a 403 table_not_served at planning (every
// planning route and the status page) and at reading, even with a token a
// sidecar without the list signed with the same key, and the status page
// lists none of them.
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
