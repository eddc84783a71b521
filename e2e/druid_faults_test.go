//go:build druid

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/reader"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// cuttingProxy stands between Druid and the sidecar (the sidecar's public
// URL): it passes every request on, and cuts the connection of a row
// stream once it has sent the next of its cut offsets (positions in the
// whole stream, so a resumed read, which starts at its Range, is cut at
// the next one), as a load balancer or a network that drops connections
// does. It logs every row request it saw.
type cuttingProxy struct {
	*httptest.Server
	target string
	client *http.Client
	mu     sync.Mutex
	cuts   []int64
	// done is how many cuts each row path has had.
	done map[string]int
	log  []proxied
	// progress, when set, is called with a row stream's position after
	// each write to the client; ended with each row request's record.
	progress func(pos int64)
	ended    func(proxied)
}

// proxied is one row request the proxy passed on: its path, Range header,
// status, the stream positions it sent, and whether the proxy cut it.
type proxied struct {
	path, rng string
	status    int
	from, to  int64
	cut       bool
	// broken says the sidecar's answer broke off (an error reading it);
	// last is when its last byte came, end when it ended.
	broken    bool
	last, end time.Time
}

func newCuttingProxy(t *testing.T) *cuttingProxy {
	t.Helper()
	p := &cuttingProxy{done: map[string]int{},
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// reset makes every row path be cut at cuts from now on, and clears the
// log.
func (p *cuttingProxy) reset(cuts ...int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cuts, p.done, p.log = cuts, map[string]int{}, nil
}

func (p *cuttingProxy) serve(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if !strings.Contains(r.URL.Path, "/rows") {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	var from int64
	if s, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		from, _ = strconv.ParseInt(strings.TrimSuffix(s, "-"), 10, 64)
	}
	p.mu.Lock()
	cut := int64(-1)
	if i := p.done[r.URL.Path]; i < len(p.cuts) && p.cuts[i] > from {
		cut = p.cuts[i]
	}
	p.mu.Unlock()
	entry := proxied{path: r.URL.Path, rng: r.Header.Get("Range"), status: resp.StatusCode, from: from}
	limit := int64(-1)
	if cut >= 0 {
		limit = cut - from
	}
	n, last, err := p.copy(w, resp.Body, from, limit)
	entry.to, entry.last, entry.end = from+n, last, time.Now()
	entry.cut = cut >= 0 && n == limit
	entry.broken = err != nil && !entry.cut
	p.mu.Lock()
	p.log = append(p.log, entry)
	if entry.cut {
		p.done[r.URL.Path]++
	}
	ended := p.ended
	p.mu.Unlock()
	if ended != nil {
		ended(entry)
	}
	if entry.cut || entry.broken {
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // no clean end: the client sees a broken stream
	}
}

// copy copies src to w from the stream position from, at most limit bytes
// (-1: all), and answers how many, when the last came, and the error that
// ended it (nil at the limit or a clean end).
func (p *cuttingProxy) copy(w http.ResponseWriter, src io.Reader, from, limit int64) (n int64, last time.Time, err error) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for limit < 0 || n < limit {
		b := buf
		if limit >= 0 && limit-n < int64(len(b)) {
			b = b[:limit-n]
		}
		k, rerr := src.Read(b)
		if k > 0 {
			if _, werr := w.Write(b[:k]); werr != nil {
				return n, last, werr
			}
			_ = rc.Flush()
			n += int64(k)
			last = time.Now()
			p.mu.Lock()
			progress := p.progress
			p.mu.Unlock()
			if progress != nil {
				progress(from + n)
			}
		}
		if rerr == io.EOF {
			return n, last, nil
		}
		if rerr != nil {
			return n, last, rerr
		}
	}
	return n, last, nil
}

// TestRealDruidCutStreams: Druid's own http input source (an
// index_parallel task from /druid/task, unedited; segmentGranularity=ALL
// keeps Druid's publishing short) reads the row streams of three splits, plain,
// gzip and zstd, through a proxy that cuts each stream twice, at offsets
// that differ by compression: the task succeeds and the datasource holds
// the table's live rows, none twice, because Druid resumes each cut
// stream with `Range: bytes=N-` at the byte where it broke (DESIGN.md, row
// stream; handlers/compress.go for the compressed streams).
func TestRealDruidCutStreams(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	tbl, err := tablegen.Bench(ctx, cat, table.Identifier{"bench", "cut"}, 10_000, 3, 0.01, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCuttingProxy(t)
	srv := sidecartest.NewServer(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil, func(c *handlers.Config) { c.PublicURL = proxy.URL })
	proxy.target = srv.URL
	lines, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	types := druid.Types(tbl.Schema().Fields(), token.Encoding{})
	want := sidecartest.RealExpect(t, lines, "event_ts", types)
	run := fmt.Sprintf("%d", time.Now().Unix())
	for _, tc := range []struct {
		compression string
		cuts        []int64
	}{
		// The first byte; then in the middle of a line.
		{"none", []int64{1, 200_003}},
		// A byte short of the compressor's first chunk; then twice that.
		{"gzip", []int64{64<<10 - 1, 128 << 10}},
		// Two cuts a byte apart.
		{"zstd", []int64{4096, 4097}},
	} {
		t.Run(tc.compression, func(t *testing.T) {
			proxy.reset(tc.cuts...)
			ds := "real_cut_" + tc.compression + "_" + run
			task := srv.DruidTask(t, sidecartest.Q("table", "bench.cut", "dataSource", ds, "timestampColumn", "event_ts",
				"mode", "rows", "compression", tc.compression, "segmentGranularity", "ALL"))
			d.WaitTask(t, d.SubmitTask(t, task))
			d.Check(t, ds, want, types)
			proxy.mu.Lock()
			defer proxy.mu.Unlock()
			// Every cut stream was read again from where it broke.
			resumed := map[string]int64{}
			cuts := 0
			split := map[string]int{}
			for _, e := range proxy.log {
				if _, ok := split[e.path]; !ok {
					split[e.path] = len(split)
				}
				t.Logf("split %d: Range %q: %d, bytes %d-%d, cut %v", split[e.path], e.rng, e.status, e.from, e.to, e.cut)
				if at, ok := resumed[e.path]; ok {
					if e.rng != fmt.Sprintf("bytes=%d-", at) || e.status != http.StatusPartialContent {
						t.Errorf("split %d cut at %d was read again with Range %q (%d)", split[e.path], at, e.rng, e.status)
					}
					delete(resumed, e.path)
				}
				if e.cut {
					cuts++
					resumed[e.path] = e.to
				}
			}
			if len(resumed) > 0 {
				t.Errorf("streams cut and never read again: %v", resumed)
			}
			if cuts < len(tc.cuts) {
				t.Errorf("%d cuts, want at least %d: a stream shorter than the offsets %v", cuts, len(tc.cuts), tc.cuts)
			}
		})
	}
}

// TestRealDruidStalledStore: the object store stops answering in the middle
// of a split (S3 behind a proxy that, once armed, sends a data file's
// headers and then nothing), once. The sidecar aborts the row stream after
// --storage-stall-timeout without a byte from the store
// (docs/operations.md), Druid's http input source, which reads without a
// timeout, retries with `Range: bytes=N-`, the store answers again, and
// the task succeeds with the table's rows, none twice. The stalled stream
// ends within the stall timeout (and a margin for a loaded machine) of its
// last byte: no hang.
func TestRealDruidStalledStore(t *testing.T) {
	d := sidecartest.RealDruidFromEnv(t)
	ctx := context.Background()
	tbl, store, cfg := sidecartest.NewStallingLake(t)
	signer, err := token.NewSigner(sidecartest.SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	const stallTimeout = time.Second
	sc := catalogtest.Open(t, cfg, sidecatalog.WithStallTimeout(stallTimeout))
	planner, err := splits.NewPlanner(sc, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	front := newCuttingProxy(t)
	srv := httptest.NewServer(handlers.New(handlers.Config{Catalogs: []handlers.Catalog{sidecartest.WireCatalog(sc, planner, reader.New(nil))},
		Signer: signer, PublicURL: front.URL}))
	t.Cleanup(srv.Close)
	front.target = srv.URL
	lines, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	types := druid.Types(tbl.Schema().Fields(), token.Encoding{})
	want := sidecartest.RealExpect(t, lines, "event_ts", types)

	// Armed once the first row bytes went to Druid, so that the next data
	// file's reads stall; disarmed when that stream broke off.
	var arm, disarm sync.Once
	front.progress = func(int64) { arm.Do(func() { store.Armed.Store(true) }) }
	front.ended = func(e proxied) {
		if e.broken {
			disarm.Do(func() { store.Armed.Store(false) })
		}
	}
	ds := fmt.Sprintf("real_stall_%d", time.Now().Unix())
	// One split of the three data files (minSplits=1), so the store
	// stalls in the middle of the stream.
	task := (&sidecartest.Server{Server: srv}).DruidTask(t, sidecartest.Q("table", "lake.stall", "dataSource", ds, "timestampColumn", "event_ts",
		"mode", "rows", "minSplits", "1", "segmentGranularity", "ALL"))
	d.WaitTask(t, d.SubmitTask(t, task))
	d.Check(t, ds, want, types)
	front.mu.Lock()
	defer front.mu.Unlock()
	broken := 0
	for i, e := range front.log {
		t.Logf("Range %q: %d, bytes %d-%d, broken %v", e.rng, e.status, e.from, e.to, e.broken)
		if !e.broken {
			continue
		}
		broken++
		if gap := e.end.Sub(e.last); gap > stallTimeout+10*time.Second {
			t.Errorf("the stalled stream ended %s after its last byte; --storage-stall-timeout is %s", gap.Round(time.Millisecond), stallTimeout)
		} else {
			t.Logf("the stalled stream ended %s after its last byte (--storage-stall-timeout %s)", gap.Round(time.Millisecond), stallTimeout)
		}
		if i+1 >= len(front.log) || front.log[i+1].rng != fmt.Sprintf("bytes=%d-", e.to) {
			t.Errorf("the stream broken at %d was not read again from there", e.to)
		}
	}
	if broken != 1 {
		t.Errorf("%d streams broke off, want the one the stalled store broke", broken)
	}
}
