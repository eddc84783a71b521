package reader_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/reader/deletes"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// plannedDeleteCacheSize is the delete cache of plannedReader: the
// sidecar's default.
const plannedDeleteCacheSize = 256 << 20

// plannedReader is one catalog of the sidecar with its planner and reader,
// wired as cmd/sidecar wires them. It reads a table as the row route does,
// without HTTP or tokens: the planner plans a request against the catalog,
// and the reader opens each planned split through the FileIO and schema
// the planner's Source gives it.
type plannedReader struct {
	planner *splits.Planner
	rd      *reader.Reader
	// cache is the delete cache rd decodes through; nil when it has none.
	cache *deletes.Cache
}

// localPlanned serves the local warehouse dir (see catalogPlanned).
func localPlanned(t testing.TB, dir string, opts ...splits.PlannerOption) plannedReader {
	t.Helper()
	return catalogPlanned(t, catalog.Config{Type: "local", Warehouse: dir}, plannedDeleteCacheSize, opts...)
}

// catalogPlanned opens the sidecar's catalog of cfg, a planner over it
// with opts, and a reader with a delete cache of cacheSize bytes (0: none,
// so that every split reads its delete files itself).
func catalogPlanned(t testing.TB, cfg catalog.Config, cacheSize int64, opts ...splits.PlannerOption) plannedReader {
	t.Helper()
	return plannedOver(t, catalogtest.Open(t, cfg), cacheSize, opts...)
}

// plannedOver is catalogPlanned over a catalog the test opened with
// options of its own.
func plannedOver(t testing.TB, cat *catalog.Catalog, cacheSize int64, opts ...splits.PlannerOption) plannedReader {
	t.Helper()
	signer, err := token.NewSigner(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	planner, err := splits.NewPlanner(cat, signer, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := plannedReader{planner: planner}
	if cacheSize > 0 {
		p.cache = deletes.NewCache(cacheSize, nil)
	}
	p.rd = reader.New(nil, reader.WithDeleteCache(p.cache))
	return p
}

// plan plans req and fails the test unless it plans.
func (p plannedReader) plan(t testing.TB, req splits.Request) splits.Plan {
	t.Helper()
	pl, err := p.planner.Plan(context.Background(), req)
	if err != nil {
		t.Fatalf("plan %+v: %v", req, err)
	}
	return pl
}

// open opens one planned split as the row route does: the table's schema
// and FileIO from the planner, then the reader.
func (p plannedReader) open(ctx context.Context, ps splits.PlannedSplit) (*reader.Stream, error) {
	src, err := p.planner.Source(ctx, ps.Parts[0])
	if err != nil {
		return nil, err
	}
	return p.rd.OpenAll(ctx, src.FS, ps.Parts, src.Schema)
}

// body reads one planned split whole and fails the test on any error.
func (p plannedReader) body(t testing.TB, ps splits.PlannedSplit) []byte {
	t.Helper()
	ctx := context.Background()
	st, err := p.open(ctx, ps)
	if err != nil {
		t.Fatalf("open split %s: %v", ps.Parts[0].Data.Path, err)
	}
	var buf bytes.Buffer
	if err := st.Run(ctx, &buf, func() error { return nil }); err != nil {
		_ = st.Close()
		t.Fatalf("run split %s: %v", ps.Parts[0].Data.Path, err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close split %s: %v", ps.Parts[0].Data.Path, err)
	}
	return buf.Bytes()
}

// rows reads every split of a row-path plan and returns the NDJSON lines,
// checking the framing: every line one JSON object, `\n`-terminated, no
// blank lines.
func (p plannedReader) rows(t testing.TB, pl splits.Plan) []string {
	t.Helper()
	if pl.Path != splits.PathRows {
		t.Fatalf("plan of %s takes path %s, want %s", pl.Table, pl.Path, splits.PathRows)
	}
	var lines []string
	for _, ps := range pl.Splits {
		body := p.body(t, ps)
		if len(body) == 0 {
			continue
		}
		if body[len(body)-1] != '\n' {
			t.Fatalf("split %s does not end with a newline", ps.Parts[0].Data.Path)
		}
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || line[0] != '{' || !json.Valid([]byte(line)) {
				t.Fatalf("split %s: bad NDJSON line %q", ps.Parts[0].Data.Path, line)
			}
			lines = append(lines, line)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return lines
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
// package, each in a local warehouse of its own under testRoot, and
// shared. They are written Snappy-compressed (catalogtest.SnappyWrites):
// what these tests check does not depend on the codec, the reader's own
// tests hold every codec, and zstd is most of the cost of writing a table
// under -race. A test that changes a table writes its own.
var sharedTables struct {
	mu     sync.Mutex
	builds map[string]*sharedBuild
}

type sharedBuild struct {
	once sync.Once
	dir  string
	val  any
	err  error
}

// sharedWarehouse returns the directory of the local warehouse named key,
// and what build returned when it wrote it: the first caller builds it, the
// others wait for and share the same one.
func sharedWarehouse[T any](t testing.TB, key string, build func(context.Context, icecatalog.Catalog) (T, error)) (string, T) {
	t.Helper()
	sharedTables.mu.Lock()
	if sharedTables.builds == nil {
		sharedTables.builds = map[string]*sharedBuild{}
	}
	b := sharedTables.builds[key]
	if b == nil {
		b = &sharedBuild{}
		sharedTables.builds[key] = b
	}
	sharedTables.mu.Unlock()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp(testRoot, "shared-"); b.err != nil {
			return
		}
		cat, err := hadoop.NewCatalog("shared", b.dir, nil)
		if err != nil {
			b.err = err
			return
		}
		defer cat.Close()
		b.val, b.err = build(context.Background(), catalogtest.SnappyWrites(cat))
	})
	if b.err != nil {
		t.Fatalf("shared warehouse %s: %v", key, b.err)
	}
	v, ok := b.val.(T)
	if !ok {
		t.Fatalf("shared warehouse %s holds a %T", key, b.val)
	}
	return b.dir, v
}

// sharedScenarios is every tablegen scenario, as scenarios.<name>, in one
// shared warehouse, by name.
func sharedScenarios(t testing.TB) (string, map[string]*table.Table) {
	t.Helper()
	return sharedWarehouse(t, "scenarios", func(ctx context.Context, cat icecatalog.Catalog) (map[string]*table.Table, error) {
		out := map[string]*table.Table{}
		for _, sc := range tablegen.Scenarios() {
			tbl, err := sc.Build(ctx, cat, table.Identifier{"scenarios", sc.Name})
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			out[sc.Name] = tbl
		}
		return out, nil
	})
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
