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

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/demo"
)

// commitForeignFile commits, as a writer of the table may (Spark's
// add_files, ALTER TABLE … SET TBLPROPERTIES), a "data file" at path that
// no writer wrote, and sets props on the table.
func commitForeignFile(t *testing.T, warehouse string, ident table.Identifier, path string, props iceberg.Properties) {
	t.Helper()
	ctx := context.Background()
	cat := catalogtest.Local(t, warehouse)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, path, iceberg.ParquetFile,
		nil, nil, nil, 1, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if len(props) > 0 {
		if err := tx.SetProperties(props); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.AddDataFiles(ctx, []iceberg.DataFile{b.Build()}, nil, table.WithoutAutoNameMapping()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTableMetadataMakesNoRoot (issue 32, item 1): a writer of a served
// table set write.data.path=/ and committed a "data file" whose path is the
// sidecar's token key; /splits?mode=files handed out a file token for it
// and /files answered 200 with the key, byte for byte, because the table's
// own metadata made / a root. Roots now come from the operator only: the
// plan is a 403 forbidden_location that names the setting to change, and
// no answer holds a byte of the key. A file of the table's own folder that
// is not Parquet is a 422 unreadable_file on /files, where it was served.
func TestTableMetadataMakesNoRoot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props iceberg.Properties
	}{
		{"write.data.path=/", iceberg.Properties{"write.data.path": "/"}},
		{"write.data.path=file:///", iceberg.Properties{"write.data.path": "file:///"}},
		{"no property, only the file", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			warehouse := filepath.Join(dir, "warehouse")
			if err := demo.Write(context.Background(), catalogtest.Local(t, warehouse)); err != nil {
				t.Fatal(err)
			}
			key := filepath.Join(dir, "sidecar-token.key")
			if err := os.WriteFile(key, []byte(secretBytes), 0o600); err != nil {
				t.Fatal(err)
			}
			commitForeignFile(t, warehouse, demo.Customers, key, tc.props)
			srv := newServer(t, sidecatalog.Config{Type: "local", Warehouse: warehouse}, nil)

			resp, body := srv.get(t, "/splits?"+q("table", "demo.customers", "mode", "files").Encode())
			if bytes.Contains(body, []byte("secret-material")) {
				t.Fatalf("the plan holds the key: %s", body)
			}
			if resp.StatusCode == http.StatusOK {
				// Today's main: each file token is served; one is the key.
				var p plan
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatal(err)
				}
				for _, uri := range p.InputSource.URIs {
					u, err := url.Parse(uri)
					if err != nil {
						t.Fatal(err)
					}
					r, b := srv.get(t, u.Path)
					if bytes.Contains(b, []byte("secret-material")) {
						t.Fatalf("/files answered %d with the token key", r.StatusCode)
					}
				}
				t.Fatalf("/splits?mode=files planned a table whose data file is the token key: 200 %s", body)
			}
			if resp.StatusCode != http.StatusForbidden || errorCode(t, body) != "forbidden_location" {
				t.Fatalf("plan: %d %s, want 403 forbidden_location", resp.StatusCode, body)
			}
			if !strings.Contains(string(body), "--data-root") {
				t.Fatalf("the refusal names no setting to change: %s", body)
			}
		})
	}

	t.Run("a file of the table's folder that is not Parquet", func(t *testing.T) {
		dir := t.TempDir()
		warehouse := filepath.Join(dir, "warehouse")
		if err := demo.Write(context.Background(), catalogtest.Local(t, warehouse)); err != nil {
			t.Fatal(err)
		}
		notParquet := filepath.Join(warehouse, "demo", "customers", "data", "notes.parquet")
		if err := os.WriteFile(notParquet, []byte(secretBytes), 0o600); err != nil {
			t.Fatal(err)
		}
		commitForeignFile(t, warehouse, demo.Customers, notParquet, nil)
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
	})
}
