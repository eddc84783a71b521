package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/tablegen"
)

// TestFilesServesOnlyParquet: a writer of a served table commits, inside
// the table's own folder, a "data file" that is not Parquet. /files
// answers its token 422 unreadable_file, with and without a Range, and
// quotes none of its bytes: it hands out only what begins and ends like
// Parquet. The catalog's TestTableMetadataMakesNoRoot holds the refusal of
// a committed file outside the operator's roots.
func TestFilesServesOnlyParquet(t *testing.T) {
	ctx := context.Background()
	warehouse := filepath.Join(t.TempDir(), "warehouse")
	cat := catalogtest.Local(t, warehouse)
	if err := demo.Write(ctx, cat); err != nil {
		t.Fatal(err)
	}
	notParquet := filepath.Join(warehouse, "demo", "customers", "data", "notes.parquet")
	if err := os.WriteFile(notParquet, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tablegen.AddForeignFile(ctx, cat, demo.Customers, notParquet, nil); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, sidecatalog.Config{Type: "local", Warehouse: warehouse}, nil)
	resp, body := srv.get(t, "/splits?"+q("table", "demo.customers", "mode", "files").Encode())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("plan: %d %s", resp.StatusCode, body)
	}
	var p plan
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range p.Splits {
		if !strings.HasSuffix(s.DataFile, "notes.parquet") {
			continue
		}
		found = true
		u, err := url.Parse(s.URI)
		if err != nil {
			t.Fatal(err)
		}
		for _, rng := range []string{"", "bytes=0-", "bytes=5-"} {
			var r *http.Response
			var b []byte
			if rng == "" {
				r, b = srv.get(t, u.Path)
			} else {
				r, b = srv.get(t, u.Path, "Range", rng)
			}
			if r.StatusCode != http.StatusUnprocessableEntity || errorCode(t, b) != "unreadable_file" {
				t.Fatalf("/files of a file that is not Parquet (Range %q): %d %q, want 422 unreadable_file", rng, r.StatusCode, b)
			}
			if bytes.Contains(b, []byte("secret")) {
				t.Fatalf("the answer quotes the file: %s", b)
			}
		}
	}
	if !found {
		t.Fatalf("the plan has no split of notes.parquet: %s", body)
	}
}
