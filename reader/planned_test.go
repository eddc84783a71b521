package reader_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/sharedtables"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest/servetest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// plannedDeleteCacheSize is the delete cache of localPlanned: the
// sidecar's default.
const plannedDeleteCacheSize = 256 << 20

// localPlanned serves the local warehouse dir (see catalogPlanned).
func localPlanned(t testing.TB, dir string, opts ...splits.PlannerOption) *servetest.Replica {
	t.Helper()
	return catalogPlanned(t, catalog.Config{Type: "local", Warehouse: dir}, plannedDeleteCacheSize, opts...)
}

// catalogPlanned is one catalog of the sidecar with its planner and
// reader, wired as cmd/sidecar wires them (servetest.Replica): the
// sidecar's catalog of cfg, a planner over it with opts, and a reader with
// a delete cache of cacheSize bytes (0: none, so that every split reads
// its delete files itself). It reads a table as the row route does,
// without HTTP.
func catalogPlanned(t testing.TB, cfg catalog.Config, cacheSize int64, opts ...splits.PlannerOption) *servetest.Replica {
	t.Helper()
	r := servetest.New(t, catalogtest.Open(t, cfg), nil, opts...)
	if cacheSize > 0 {
		r.WithDeleteCache(cacheSize)
	}
	return r
}

// rowsRequest asks for the rows of name (mode=rows) at snapshot id, or at
// the current snapshot when id is 0.
func rowsRequest(name string, id int64) splits.Request {
	req := splits.Request{Table: name, Mode: splits.ModeRows}
	if id != 0 {
		req.SnapshotID = &id
	}
	return req
}

// metaRequest asks for name at snapshot id (0: the current one) with the
// metadata columns names, in mode auto: they take the row path.
func metaRequest(t testing.TB, name string, id int64, names string) splits.Request {
	t.Helper()
	req := rowsRequest(name, id)
	req.Mode = splits.ModeAuto
	meta, err := token.ParseMetaColumns(strings.Split(names, ","))
	if err != nil {
		t.Fatal(err)
	}
	req.MetaColumns = meta
	return req
}

// Tables that several tests only read are written once per run of the
// package, each in a shared warehouse of its own (sharedWarehouse); a test
// that changes a table writes its own.

// sharedWarehouse is sharedtables.Warehouse writing Snappy-compressed
// (catalogtest.SnappyWrites): what these tests check does not depend on
// the codec, the reader's own tests hold every codec, and zstd is most of
// the cost of writing a table under -race.
func sharedWarehouse[T any](t testing.TB, key string, build func(context.Context, icecatalog.Catalog) (T, error)) (string, T) {
	t.Helper()
	return sharedtables.Warehouse(t, key, func(ctx context.Context, cat *hadoop.Catalog) (T, error) {
		return build(ctx, catalogtest.SnappyWrites(cat))
	})
}

// sharedScenarios is every tablegen scenario, as scenarios.<name>, in one
// shared warehouse, by name.
func sharedScenarios(t testing.TB) (string, map[string]*table.Table) {
	t.Helper()
	return sharedWarehouse(t, "scenarios", tablegen.BuildScenarios)
}

// assertKeyOrder checks that the keys of every row come in the order of
// columns (a row may carry fewer, never others).
func assertKeyOrder(t testing.TB, rows []string, columns []string) {
	t.Helper()
	for _, line := range rows {
		keys := rowKeys(t, line)
		at := 0
		for _, k := range keys {
			i := slices.Index(columns[at:], k)
			if i < 0 {
				t.Fatalf("row %s: keys %v are not in schema order %v", line, keys, columns)
			}
			at += i + 1
		}
	}
}

// rowKeys are the top-level keys of one JSON object, in order.
func rowKeys(t testing.TB, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("row %q is no object", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
	}
	return keys
}
