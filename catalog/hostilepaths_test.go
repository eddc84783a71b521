package catalog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/demo"
	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// secretBytes are the contents of the files an attacker is after; no
// error may hold any of them.
const secretBytes = "zq9:x:0:0:secret-material:/bin/bash\n"

// demoLake writes the demo tables into a warehouse under a folder of its
// own, beside a file that is no table's (a token key), and returns the
// folder, the warehouse and the key file.
func demoLake(t *testing.T) (dir, warehouse, key string) {
	t.Helper()
	dir = t.TempDir()
	warehouse = filepath.Join(dir, "warehouse")
	if err := demo.Write(context.Background(), catalogtest.Local(t, warehouse)); err != nil {
		t.Fatal(err)
	}
	key = filepath.Join(dir, "sidecar-token.key")
	if err := os.WriteFile(key, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, warehouse, key
}

// TestHostileSignedPaths: a token signed with the server's key (an insider
// who holds it) may name any path. Every open of its split, as the routes
// make them (the raw file through the table's FileIO for /files, the rows
// of data and delete files through the reader, the metadata the token pins
// through the planner's Source), is confined to the roots of the token's
// table and catalog: fault.ErrForbiddenLocation (403 forbidden_location),
// nothing opened, no byte of the file in the error; a file inside the
// table that is not Parquet is one of the reader's sentinels (422
// unreadable_file) and one that is not JSON damaged metadata (422
// damaged_metadata), quoting none of their bytes either. The tables' own
// splits still read. handlers' TestTokensOpenOnlyPlannedPaths holds the
// routes' 403.
func TestHostileSignedPaths(t *testing.T) {
	ctx := context.Background()
	_, warehouse, secret := demoLake(t)
	s := newServed(t, catalog.Config{Type: "local", Warehouse: warehouse})
	rows := s.plan(t, splits.Request{Table: "demo.orders", Mode: splits.ModeRows})
	files := s.plan(t, splits.Request{Table: "demo.customers", Mode: splits.ModeFiles})
	var rowsSplit token.Split
	for _, sp := range rows.Splits[0].Parts {
		if len(sp.Deletes) > 0 {
			rowsSplit = sp
			break
		}
	}
	if len(rowsSplit.Deletes) == 0 {
		t.Fatal("demo.orders' split has no delete file")
	}
	fileSplit := files.Splits[0].Parts[0]

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

	// openFile opens a raw file as /files does: the FileIO of the split's
	// table, then the file.
	openFile := func(path string, size int64) error {
		sp := fileSplit
		sp.Data.Path, sp.Data.Size = path, size
		src, err := s.Planner.Source(ctx, sp)
		if err != nil {
			return err
		}
		f, err := src.FS.Open(sp.Data.Path)
		if err != nil {
			return err
		}
		return f.Close()
	}
	readData := func(path string) error {
		sp := rowsSplit
		sp.Data.Path, sp.Data.Size = path, int64(len(secretBytes))
		sp.Deletes = nil
		_, err := s.read(ctx, []token.Split{sp})
		return err
	}
	readDelete := func(path string) error {
		sp := rowsSplit
		sp.Deletes = append([]token.DeleteFile(nil), sp.Deletes...)
		sp.Deletes[0].Path = path
		_, err := s.read(ctx, []token.Split{sp})
		return err
	}
	readMetadata := func(path string) error {
		sp := rowsSplit
		sp.MetadataLocation = path
		_, err := s.read(ctx, []token.Split{sp})
		return err
	}
	forbidden := func(err error) bool {
		return errors.Is(err, fault.ErrForbiddenLocation) && !errors.Is(err, fault.ErrTableNotFound)
	}
	unreadable := func(err error) bool {
		return (errors.Is(err, reader.ErrCorruptFile) || errors.Is(err, reader.ErrNoFieldIDs) ||
			errors.Is(err, reader.ErrSchemaMismatch) || errors.Is(err, reader.ErrUnsupported)) &&
			!errors.Is(err, fault.ErrForbiddenLocation) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fault.ErrUnavailable)
	}
	damaged := func(err error) bool {
		return splits.IsDamagedMetadata(err) && !errors.Is(err, fault.ErrForbiddenLocation) && !errors.Is(err, fs.ErrNotExist)
	}
	size := int64(len(secretBytes))
	for _, tc := range []struct {
		name string
		err  error
		want func(error) bool
		as   string
	}{
		{"file token naming the token key file", openFile(secret, size), forbidden, "ErrForbiddenLocation"},
		{"file token naming /etc/passwd", openFile("/etc/passwd", size), forbidden, "ErrForbiddenLocation"},
		{"file token climbing out of the table", openFile(orders+"/data/../../../../sidecar-token.key", size), forbidden, "ErrForbiddenLocation"},
		{"file token naming a link out of the table", openFile(filepath.Join(orders, "data", "link.parquet"), size), forbidden, "ErrForbiddenLocation"},
		{"file token naming a directory", openFile(filepath.Join(orders, "data", "dir.parquet"), 4096), forbidden, "ErrForbiddenLocation"},
		{"file token naming a device", openFile("/dev/zero", 0), forbidden, "ErrForbiddenLocation"},
		{"rows token naming the token key file", readData(secret), forbidden, "ErrForbiddenLocation"},
		{"rows token naming /etc/passwd", readData("/etc/passwd"), forbidden, "ErrForbiddenLocation"},
		{"rows token whose delete file is the token key file", readDelete(secret), forbidden, "ErrForbiddenLocation"},
		{"rows token pinning the token key file as metadata", readMetadata(secret), forbidden, "ErrForbiddenLocation"},
		{"rows token naming a file in the table that is not Parquet", readData(notParquet), unreadable, "one of the reader's sentinels"},
		{"rows token pinning a file in the table that is not JSON", readMetadata(notJSON), damaged, "damaged metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.want(tc.err) {
				t.Fatalf("%v, want %s", tc.err, tc.as)
			}
			// The last 8 bytes but 4 read as a footer length are
			// bytes too.
			tail := []byte(secretBytes[len(secretBytes)-8:])
			footer := strconv.FormatUint(uint64(binary.LittleEndian.Uint32(tail)), 10)
			for _, leak := range []string{"zq9", "secret-material", "'z'", footer} {
				if bytes.Contains([]byte(tc.err.Error()), []byte(leak)) {
					t.Fatalf("the error quotes the file's bytes (%s): %v", leak, tc.err)
				}
			}
		})
	}

	// The tables' own splits read.
	if got := s.rows(t, rows); len(got) != len(demo.OrdersLive) {
		t.Fatalf("demo.orders: %d rows, want %d", len(got), len(demo.OrdersLive))
	}
	src, err := s.Planner.Source(ctx, fileSplit)
	if err != nil {
		t.Fatal(err)
	}
	f, err := src.FS.Open(fileSplit.Data.Path)
	if err != nil {
		t.Fatalf("demo.customers' file: %v", err)
	}
	defer f.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte("PAR1")) {
		t.Fatalf("demo.customers' file begins %q (%v), want PAR1", head, err)
	}
}
