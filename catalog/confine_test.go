package catalog

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/iceberg-go/catalog/hadoop"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
)

// localLake writes the demo tables into a warehouse under a folder of its
// own and returns the folder and the warehouse.
func localLake(t *testing.T) (dir, warehouse string) {
	t.Helper()
	dir = t.TempDir()
	warehouse = filepath.Join(dir, "warehouse")
	hc, err := hadoop.NewCatalog("test", warehouse, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if err := demo.Write(context.Background(), hc); err != nil {
		t.Fatal(err)
	}
	return dir, warehouse
}

// ordersFS is demo.orders of the catalog cfg describes, and its FileIO.
func ordersFS(t *testing.T, cfg Config, opts ...Option) (*table.Table, icebergio.IO) {
	t.Helper()
	ctx := context.Background()
	cat, err := New(cfg, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	tbl, err := cat.LoadTable(ctx, demo.Orders)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, fsys
}

// TestConfinedToRoots: whatever location a table is asked to open (a
// signed token names them), only files under the table's roots (its
// location and the warehouse here) and the catalog's data roots open: a
// file beside the warehouse, /etc/passwd, a ".." that climbs out (written
// or percent-encoded), a symbolic link that leads out, a directory and a
// named pipe inside the table are refused with ErrForbiddenLocation before
// anything reads them, and the error holds none of their bytes.
func TestConfinedToRoots(t *testing.T) {
	dir, warehouse := localLake(t)
	secret := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(secret, []byte("root:x:0:0:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported")
	if err := os.MkdirAll(imported, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(imported, "f.parquet"), []byte("PAR1"), 0o600); err != nil {
		t.Fatal(err)
	}
	tbl, fsys := ordersFS(t, Config{Type: "local", Name: "lake", Warehouse: warehouse, DataRoots: []string{imported}})
	tableDir := strings.TrimPrefix(tbl.Location(), "file://")
	data := filepath.Join(tableDir, "data")
	entries, err := os.ReadDir(data)
	if err != nil || len(entries) == 0 {
		t.Fatalf("read %s: %d files, %v", data, len(entries), err)
	}
	dataFile := filepath.Join(data, entries[0].Name())
	if err := os.Symlink(secret, filepath.Join(data, "link.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(data, "dir.parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(data, "fifo.parquet")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Held open for writing, so that an open for reading does not block.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })

	for _, loc := range []string{tbl.MetadataLocation(), dataFile, "file://" + dataFile, filepath.Join(imported, "f.parquet")} {
		f, err := fsys.Open(loc)
		if err != nil {
			t.Fatalf("open %s, inside the roots: %v", loc, err)
		}
		_ = f.Close()
	}

	for name, loc := range map[string]string{
		"a file beside the warehouse":      secret,
		"a file URI beside the warehouse":  "file://" + secret,
		"/etc/passwd":                      "/etc/passwd",
		"a climb with ..":                  data + "/../../../../secret.key",
		"a climb percent-encoded":          "file://" + data + "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.key",
		"a file URI of another host":       "file://elsewhere" + secret,
		"a symbolic link out of the table": filepath.Join(data, "link.parquet"),
		"a directory":                      filepath.Join(data, "dir.parquet"),
		"a named pipe":                     fifo,
		"a bucket no root names":           "s3://other-bucket/secret.parquet",
		"a sibling whose name extends":     warehouse + "-other/x.parquet",
		"a data root's sibling":            imported + "2/f.parquet",
	} {
		t.Run(name, func(t *testing.T) {
			f, err := fsys.Open(loc)
			if err == nil {
				_ = f.Close()
				t.Fatalf("opened %s", loc)
			}
			if !errors.Is(err, fault.ErrForbiddenLocation) {
				t.Fatalf("open %s: %v, want ErrForbiddenLocation", loc, err)
			}
			if strings.Contains(err.Error(), "root:") {
				t.Fatalf("the error holds the file's bytes: %v", err)
			}
		})
	}

	// A missing file inside the roots stays a missing file.
	if _, err := fsys.Open(filepath.Join(data, "missing.parquet")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// testMetadata is a table's metadata at s3://lake/db/t whose properties
// are props (JSON members) and whose metadata log and manifest list are
// in other buckets.
func testMetadata(t *testing.T, props string) table.Metadata {
	t.Helper()
	meta, err := table.ParseMetadataBytes([]byte(`{
  "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "s3://lake/db/t", "last-sequence-number": 1, "last-updated-ms": 1, "last-column-id": 1,
  "current-schema-id": 0, "schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}],
  "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {` + props + `},
  "current-snapshot-id": 1,
  "snapshots": [{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1, "manifest-list": "s3://older/db/t/metadata/snap-1.avro",
    "summary": {"operation": "append"}, "schema-id": 0}],
  "metadata-log": [{"metadata-file": "hdfs://nn:8020/warehouse/db/t/metadata/v1.metadata.json", "timestamp-ms": 1}]
}`))
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

// TestOperatorRoots (issue 32, item 1): the roots are the operator's only:
// the warehouse, data roots, storage prefixes and location map targets.
// What a table's metadata states (its location, write.data.path, the
// object-store and metadata paths, its metadata log and manifest lists)
// adds none, so a table whose metadata puts its files elsewhere is refused
// naming the setting to change; s3a and s3 name one store.
func TestOperatorRoots(t *testing.T) {
	cat, err := New(Config{Type: "rest", Name: "lake", URI: "http://127.0.0.1:1", Warehouse: "s3://lake/db",
		DataRoots: []string{"s3://imports/t"}, StoragePrefixes: []string{"s3://hot"},
		LocationMap: []Mapping{{From: "s3://copied/", To: "s3://replica/copied/"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	for loc, want := range map[string]bool{
		"s3://lake/db/t/data/a.parquet":                true,
		"s3a://lake/db/t/data/a.parquet":               true,
		"s3://lake/db/t2/data/a.parquet":               true,
		"s3://hot/t-data/0101/a.parquet":               true,
		"s3://imports/t/a.parquet":                     true,
		"s3://replica/copied/x.parquet":                true,
		"s3://copied/x.parquet":                        true,
		"s3://lake/other/a.parquet":                    false,
		"s3://lake/dbx/a.parquet":                      false,
		"s3://imports/u/a.parquet":                     false,
		"s3://older/db/t/data/a.parquet":               false,
		"hdfs://nn:8020/warehouse/db/t/data/a.parquet": false,
		"gs://lake/db/t/data/a.parquet":                false,
		"/lake/db/t/data/a.parquet":                    false,
		"file:///etc/passwd":                           false,
	} {
		_, _, err := cat.within(loc)
		if got := err == nil; got != want {
			t.Errorf("%s within the operator's roots: %v (%v), want %v", loc, got, err, want)
		}
		if err != nil && !errors.Is(err, fault.ErrForbiddenLocation) {
			t.Errorf("%s: %v, want ErrForbiddenLocation", loc, err)
		}
	}

	if err := cat.checkTable([]string{"db", "t"}, testMetadata(t, `"write.data.path": "s3://hot/t-data"`),
		"s3://lake/db/t/metadata/v2.metadata.json"); err != nil {
		t.Fatalf("a table inside the roots, with its older files elsewhere: %v", err)
	}
	for props, setting := range map[string]string{
		`"write.data.path": "/"`:                         "--data-root",
		`"write.data.path": "file:///"`:                  "--data-root",
		`"write.data.path": "s3://elsewhere/t"`:          "--allow-storage-prefix",
		`"write.object-storage.path": "s3://other/t"`:    "--allow-storage-prefix",
		`"write.metadata.path": "s3a://lake/other/meta"`: "--allow-storage-prefix",
	} {
		err := cat.checkTable([]string{"db", "t"}, testMetadata(t, props), "s3://lake/db/t/metadata/v2.metadata.json")
		if !errors.Is(err, fault.ErrForbiddenLocation) || !strings.Contains(err.Error(), setting) {
			t.Errorf("a table with %s: %v, want ErrForbiddenLocation naming %s", props, err, setting)
		}
	}
	if err := cat.checkTable([]string{"db", "t"}, testMetadata(t, ""), "s3://elsewhere/t/metadata/v2.metadata.json"); !errors.Is(err, fault.ErrForbiddenLocation) {
		t.Errorf("a metadata file outside the roots: %v, want ErrForbiddenLocation", err)
	}

	for _, loc := range []string{"s3://lake/db/t/../u/a.parquet", "s3://lake/db/t/%2E%2E/u/a.parquet", "s3://lake/db/t/./a.parquet",
		"file://host/etc/passwd"} {
		if _, err := parsePlace(loc); !errors.Is(err, fault.ErrForbiddenLocation) {
			t.Errorf("parse %s: %v, want ErrForbiddenLocation", loc, err)
		}
	}
}

// TestRelativeOperatorRoots: a warehouse and a data root given relative to
// the working folder ("./warehouse", the demo's default, and "../imports")
// are the folders they name, while a location with a dot segment stays
// refused.
func TestRelativeOperatorRoots(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	cat, err := New(Config{Type: "local", Name: "lake", Warehouse: "./warehouse", DataRoots: []string{"../imports"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	for loc, want := range map[string]bool{
		filepath.Join(work, "warehouse", "demo", "orders", "data", "a.parquet"): true,
		"file://" + filepath.Join(work, "warehouse", "demo", "a.parquet"):       true,
		filepath.Join(base, "imports", "a.parquet"):                             true,
		filepath.Join(work, "warehousex", "a.parquet"):                          false,
		filepath.Join(base, "other", "a.parquet"):                               false,
		filepath.Join(work, "warehouse") + "/./demo/a.parquet":                  false,
	} {
		if _, _, err := cat.within(loc); (err == nil) != want {
			t.Errorf("%s within ./warehouse and ../imports: %v, want %v", loc, err, want)
		}
	}
}

// TestPrivateFilesRefused (issue 32, item 1): the process's own files (the
// token key, the config file, credential files) are never a table's, even
// under a root: an operator whose warehouse folder holds the token key, a
// hard link to it inside a table's data folder and a symbolic link to it
// are refused with ErrForbiddenLocation, as is a credential file a
// catalog's value was read from (Config.PrivateFiles).
func TestPrivateFilesRefused(t *testing.T) {
	_, warehouse := localLake(t)
	key := filepath.Join(warehouse, "sidecar-token.key")
	cred := filepath.Join(warehouse, "s3-secret")
	for _, f := range []string{key, cred} {
		if err := os.WriteFile(f, []byte("root:secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tbl, fsys := ordersFS(t, Config{Type: "local", Name: "lake", Warehouse: warehouse, PrivateFiles: []string{cred}}, WithPrivateFiles(key))
	data := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data")
	hard := filepath.Join(data, "hard.parquet")
	if err := os.Link(key, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(data, "soft.parquet")
	if err := os.Symlink(key, soft); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{key, "file://" + key, hard, soft, cred} {
		f, err := fsys.Open(loc)
		if err == nil {
			_ = f.Close()
			t.Errorf("opened %s", loc)
			continue
		}
		if !errors.Is(err, fault.ErrForbiddenLocation) || strings.Contains(err.Error(), "root:") {
			t.Errorf("open %s: %v, want ErrForbiddenLocation quoting none of it", loc, err)
		}
	}
}
