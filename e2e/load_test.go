package e2e_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/connlimit"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testnet"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/token"
)

// TestLoadAndLeaks runs 64 clients against the real router over a real
// listener, each at least once and for half a second: each reads row streams and
// raw-file streams of a generated table (8,000 rows, 4 data files,
// positional and equality deletes), whole, from a Range offset, or cut at a
// random byte (the client closes the connection, or its context is
// cancelled). Four runs alternate, quiet and beside hostile clients that
// replay every attack of
// TestHostile* in a loop, each at least once (filters nested and wide, trickled bodies, 900 KB
// values, names that are not names, too many include intervals, made-up
// methods of any length, queries that do not parse, fromSnapshot at the
// target, a Range past a stream's end, a file token of another size, row
// streams and plans never read, which the write-stall timeout cuts, and a
// flood of idle connections past the server's connection cap) while
// another checks that /healthz answers. Every read that
// completes must be byte-exact against a reference read, and every hostile
// request must get its 4xx. Afterwards the process must be back where it
// started: no more goroutines, no more open file descriptors, and a
// resident set near its start (with -race, whose shadow memory is never
// released, the Go heap in use). The figures, the legitimate clients'
// throughput in each run among them, are logged
// (go test -run TestLoadAndLeaks -v ./e2e/); speed is not asserted.
func TestLoadAndLeaks(t *testing.T) {
	// Splits of 2,000 rows, half a MB each: far more than the buffers
	// between the server and a client that does not read, so that
	// streams never read stall (checked below). What could leak is
	// counted in requests, cuts and attacks, not rows; more rows only
	// lengthen every read.
	//
	// Each run lasts duration/2, and each client reads at least once in
	// it however late it starts: what is checked is the same in every
	// read, so a run needs every client's reads, not a long time. A longer
	// run only adds reads of the same kinds, each a client's CPU: under
	// -race a client reads about once in half a second, twice in a second.
	testenv.SkipShort(t, "runs 64 clients and the hostile ones beside them, and waits out the write-stall timeout")
	rows, files, duration := 8_000, 4, time.Second
	const clients = 64
	ctx := context.Background()
	cat, dir := sidecartest.LocalWarehouse(t)
	if _, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"load", "t"}, rows, files, 0.05, 0.01); err != nil {
		t.Fatalf("write the load table: %v", err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"load", "t"})
	if err != nil {
		t.Fatal(err)
	}
	// A table of 100 small files, whose plans of 100 splits are answers
	// far larger than a connection's buffers.
	if _, err := tablegen.Wide(ctx, cat, table.Identifier{"load", "wide"}, 100, 0); err != nil {
		t.Fatalf("write the wide table: %v", err)
	}
	// The body deadline leaves a loaded machine time to read a large body
	// (the wide filter's); the tricklers never finish theirs.
	const bodyTimeout, stall = 3 * time.Second, 3 * time.Second
	// The server's connections to the attackers' address have small send
	// buffers, so that the answers they never read block; every
	// connection counts towards a cap, which the connection flood passes.
	ends := &requestEnds{}
	srv := sidecartest.NewServerListening(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil, sidecartest.DeleteCacheSize,
		func(l net.Listener) net.Listener {
			return connlimit.New(sidecartest.SmallBuffers{Listener: l, Only: attackerIP}, loadConnections, connlimit.Hooks{
				Refused: func(c net.Conn) { _ = handlers.WriteRefusal(c, loadConnections) },
			})
		},
		func(c *handlers.Config) {
			c.MaxStreams, c.BodyTimeout, c.WriteStallTimeout = clients, bodyTimeout, stall
			c.Logger = slog.New(ends)
		})

	// The URIs: every split of the current snapshot (row streams) and every
	// data file of the first, before its deletes (raw files).
	rowsPlan := srv.Plan(t, sidecartest.Q("table", "load.t", "minSplits", strconv.Itoa(files)))
	filesPlan := srv.Plan(t, sidecartest.Q("table", "load.t", "mode", "files",
		"snapshotId", strconv.FormatInt(tbl.Metadata().Snapshots()[0].SnapshotID, 10)))
	if rowsPlan.Mode != "v2" || filesPlan.Mode != "v1" {
		t.Fatalf("plans are %s and %s, want v2 and v1", rowsPlan.Mode, filesPlan.Mode)
	}
	var targets []sidecartest.LoadTarget
	for _, u := range append(rowsPlan.InputSource.URIs, filesPlan.InputSource.URIs...) {
		path := strings.TrimPrefix(u, srv.URL)
		resp, body := srv.Get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("reference read of %s: %d", path, resp.StatusCode)
		}
		targets = append(targets, sidecartest.LoadTarget{Path: path, Want: body})
	}
	// The row stream the non-readers ask for, against the few KiB of
	// send and receive buffers of their connections (smallBuffers,
	// dialNonReader) and the server's own.
	if n := len(targets[0].Want); n < 8*16<<10 {
		t.Fatalf("the row stream the non-readers ask for is %d bytes; the test needs at least %d", n, 8*16<<10)
	}
	on := attackTargets{rows: targets[0], snapshot: tbl.CurrentSnapshot().SnapshotID, stall: stall, ends: ends}
	// A file token that pins another size than the file's.
	signer, err := token.NewSigner(sidecartest.SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	sp, err := signer.Verify(token.KindFile, strings.TrimPrefix(targets[len(targets)-1].Path, "/files/"))
	if err != nil {
		t.Fatal(err)
	}
	sp.Data.Size++
	if on.resized, err = signer.Sign(token.KindFile, sp); err != nil {
		t.Fatal(err)
	}
	// A file token, signed with the key, of a file outside every root.
	sp.Data.Path = "/etc/passwd"
	if on.outside, err = signer.Sign(token.KindFile, sp); err != nil {
		t.Fatal(err)
	}

	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: transport}
	before := settle(t, nil)
	t.Logf("before: %d goroutines, %d fds, RSS %.1f MiB, heap %.1f MiB", before.goroutines, before.fds, mib(before.rss), mib(before.heap))

	// Quiet and hostile runs alternate, half the duration each, so that
	// the machine's drift (other work on it, the heap's growth) falls on
	// both alike.
	var runs []*loadRun
	for i := range 4 {
		runs = append(runs, runLoad(t, srv, client, targets, on, clients, duration/2, i%2 == 1))
	}
	rate := map[bool]float64{}
	for i, r := range runs {
		t.Logf("%s: %d clients for %v: %d requests, %d completed byte-exact, %d cut by closing, %d cut by cancelling, %d answered 503 (retried), %.1f MiB read, %.1f MiB/s before the deadline; /healthz at most %v",
			r.name, clients, duration/2, r.requests.Load(), r.completed.Load(), r.aborts.Load(), r.cancels.Load(), r.rejected.Load(),
			mib(r.bytesRead.Load()), mib(r.bytesInWindow.Load())/r.window.Seconds(), r.slowestHealth.Round(time.Millisecond))
		t.Logf("%s peak: %d goroutines, RSS %.1f MiB (%.1f MiB before the run)", r.name, r.peakGoroutines.Load(), mib(r.peakRSS), mib(r.rssBefore))
		if r.completed.Load() == 0 || r.aborts.Load()+r.cancels.Load() == 0 {
			t.Errorf("%s: the load read nothing to the end or cut nothing: %d completed, %d cut", r.name, r.completed.Load(), r.aborts.Load()+r.cancels.Load())
		}
		if i%2 == 1 {
			t.Logf("hostile clients beside the load: %s", r.hostileSummary())
		}
	}
	for _, hostile := range []bool{false, true} {
		var bytes int64
		var window time.Duration
		for i, r := range runs {
			if (i%2 == 1) == hostile {
				bytes, window = bytes+r.bytesInWindow.Load(), window+r.window
			}
		}
		rate[hostile] = float64(bytes) / window.Seconds()
	}
	t.Logf("legitimate throughput beside the hostile clients: %.2f of the quiet runs'", rate[true]/rate[false])

	transport.CloseIdleConnections()
	after := settle(t, &before)
	t.Logf("after: %d goroutines, %d fds, RSS %.1f MiB, heap %.1f MiB", after.goroutines, after.fds, mib(after.rss), mib(after.heap))
	if got := sidecartest.MetricSum(t, srv, "sidecar_streams_active"); got != 0 {
		t.Errorf("sidecar_streams_active = %v after the load, want 0", got)
	}
}

// loadRun is what one run of the load counted.
type loadRun struct {
	name                                                      string
	requests, completed, aborts, cancels, rejected, bytesRead atomic.Int64
	peakGoroutines                                            atomic.Int64
	// bytesInWindow are the bytes read before the run's deadline, over
	// window: the run's throughput without the tail of the streams
	// still open at the deadline.
	bytesInWindow      atomic.Int64
	window             time.Duration
	rssBefore, peakRSS int64
	// slowestHealth is the longest a /healthz took to answer.
	slowestHealth time.Duration

	mu      sync.Mutex
	hostile map[string]map[int]int // attack -> status -> count
}

func (r *loadRun) sawHostile(attack string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hostile[attack] == nil {
		r.hostile[attack] = map[int]int{}
	}
	r.hostile[attack][status]++
}

func (r *loadRun) hostileSummary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for attack, statuses := range r.hostile {
		parts = append(parts, fmt.Sprintf("%s %v", attack, statuses))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// runLoad runs clients Druid-like readers of targets for duration, and
// with hostile the attackers beside them, and fails the test on any read
// that is not byte-exact and any attack not answered as it should be.
func runLoad(t *testing.T, srv *sidecartest.Server, client *http.Client, targets []sidecartest.LoadTarget, on attackTargets, clients int, duration time.Duration,
	hostile bool) *loadRun {
	t.Helper()
	r := &loadRun{name: "quiet", hostile: map[string]map[int]int{}}
	if hostile {
		r.name = "hostile"
	}
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > r.peakGoroutines.Load() {
				r.peakGoroutines.Store(n)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	r.rssBefore = resetPeak()

	// The attacks, their payloads built before the run starts, so that
	// each runs at least once however loaded the machine is.
	var list []sidecartest.Attack
	if hostile {
		var done, doneMore func()
		var more []sidecartest.Attack
		list, done = sidecartest.Attacks(srv)
		defer done()
		more, doneMore = moreAttacks(srv, on)
		defer doneMore()
		list = append(list, more...)
	}

	start := time.Now()
	deadline := start.Add(duration)
	r.window = duration
	errs := make(chan error, clients+16)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 0x10ad))
			for first := true; first || time.Now().Before(deadline); first = false {
				if err := druidRead(r, client, srv.URL, targets[rng.IntN(len(targets))], rng, deadline); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	// /healthz answers throughout, quiet or not.
	wg.Go(func() {
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		// Asked every 20 ms: often enough to see a stall of the load, seldom
		// enough to add little load of its own.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ; time.Now().Before(deadline); <-tick.C {
			began := time.Now()
			resp, err := hc.Get(srv.URL + "/healthz")
			if err != nil {
				errs <- fmt.Errorf("/healthz: %w", err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("/healthz: %d", resp.StatusCode)
				return
			}
			r.slowestHealth = max(r.slowestHealth, time.Since(began))
		}
	})
	for _, a := range list {
		wg.Go(func() {
			// Once at least, then for as long as the run lasts.
			for first := true; first || time.Now().Before(deadline); first = false {
				status, err := a.Run()
				if err != nil {
					errs <- fmt.Errorf("%s: %w", a.Name, err)
					return
				}
				r.sawHostile(a.Name, status)
				if !slices.Contains(a.Want, status) {
					errs <- fmt.Errorf("%s: %d, want one of %v", a.Name, status, a.Want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.peakRSS = sidecartest.PeakRSS()
	return r
}

// druidRead reads one target as Druid does, whole, from a Range offset, or
// cut at a random byte, and checks what it read to the end byte for byte.
// The bytes that arrive before deadline count towards the run's throughput.
func druidRead(r *loadRun, client *http.Client, base string, tg sidecartest.LoadTarget, rng *rand.Rand, deadline time.Time) error {
	inWindow := func(n int) {
		if time.Now().Before(deadline) {
			r.bytesInWindow.Add(int64(n))
		}
	}
	from := 0
	if rng.IntN(4) == 0 {
		from = rng.IntN(len(tg.Want))
	}
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base+tg.Path, nil)
	if err != nil {
		return err
	}
	if from > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
	}
	r.requests.Add(1)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", tg.Path, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		// A slot is not free yet: a cut stream's handler has not
		// noticed. Druid retries; so does this client.
		r.rejected.Add(1)
		_, _ = io.Copy(io.Discard, resp.Body)
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent:
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s from %d: %d %s", tg.Path, from, resp.StatusCode, body)
	default:
		want := tg.Want[from:]
		switch rng.IntN(3) {
		case 0: // cut by closing the connection mid-stream
			n, _ := io.CopyN(countingWriter(inWindow), resp.Body, int64(rng.IntN(len(want)+1)))
			r.bytesRead.Add(n)
			r.aborts.Add(1)
		case 1: // cut by cancelling the request's context
			n, _ := io.CopyN(countingWriter(inWindow), resp.Body, int64(rng.IntN(len(want)+1)))
			r.bytesRead.Add(n)
			cancel()
			r.cancels.Add(1)
		default: // read to the end, byte-exact
			// Compared as it arrives: 64 clients holding whole
			// bodies would measure the clients, not the server.
			cmp := &sidecartest.Comparer{Want: want, Counted: inWindow}
			n, err := io.Copy(cmp, resp.Body)
			r.bytesRead.Add(n)
			if err != nil {
				return fmt.Errorf("GET %s from %d: read: %w", tg.Path, from, err)
			} else if cmp.Differ || cmp.Off != len(want) {
				return fmt.Errorf("GET %s from %d: %d bytes that differ from the reference's %d", tg.Path, from, cmp.Off, len(want))
			}
			r.completed.Add(1)
		}
	}
	return nil
}

// loadConnections caps the load server's connections: more than the
// Druid-like clients, the attackers and their pools hold, fewer than the
// connection flood opens.
const loadConnections = 256

// attackerIP is the address the attackers that never read, and the
// connection flood, connect from (the server's sockets to it have small
// send buffers).
var attackerIP = net.ParseIP("127.0.0.2")

// attackTargets are what the attacks of the load aim at: a row stream and
// its bytes, the current snapshot, a file token that pins another size
// than its file's, one signed with the key for a file outside every root,
// the server's write-stall timeout, and the log that tells when a request
// has ended.
type attackTargets struct {
	rows     sidecartest.LoadTarget
	snapshot int64
	resized  string
	outside  string
	stall    time.Duration
	// ends tells when a request the attacks sent has ended.
	ends *requestEnds
}

// moreAttacks are the hostile clients of TestLoadAndLeaks that aim at
// what on names: made-up methods, a query that does not parse, odd but
// valid input, a Range past a stream's end, a file token of another size,
// answers never read, and a flood of idle connections.
func moreAttacks(srv *sidecartest.Server, on attackTargets) (_ []sidecartest.Attack, done func()) {
	transport := &http.Transport{}
	c := &http.Client{Transport: transport}
	get := sidecartest.AttackGetter(srv, c)
	var methods atomic.Int64
	method := func(prefix string) func() (int, error) {
		// A method no route takes, new each time.
		return func() (int, error) {
			req, err := http.NewRequest(fmt.Sprintf("%sM%d", prefix, methods.Add(1)), srv.URL+"/splits", nil)
			if err != nil {
				return 0, err
			}
			return sidecartest.StatusOf(c, req)
		}
	}
	addr := strings.TrimPrefix(srv.URL, "http://")
	return []sidecartest.Attack{
		{Name: "made-up methods", Want: []int{http.StatusMethodNotAllowed}, Run: method("")},
		{Name: "500 KB methods", Want: []int{http.StatusMethodNotAllowed}, Run: method(strings.Repeat("M", 500_000))},
		{Name: "broken percent-encoding", Want: []int{http.StatusBadRequest}, Run: get("/splits?table=load.t&mode=files%zz")},
		{Name: "fromSnapshot at the target", Want: []int{http.StatusConflict}, Run: get("/druid/task?" + sidecartest.Q("table", "load.t",
			"fromSnapshot", strconv.FormatInt(on.snapshot, 10), "dataSource", "l", "timestampColumn", "event_ts").Encode())},
		{Name: "Range past the end", Want: []int{http.StatusRequestedRangeNotSatisfiable}, Run: get(on.rows.Path, "Range", fmt.Sprintf("bytes=%d-", len(on.rows.Want)+1))},
		{Name: "file of another size", Want: []int{http.StatusConflict}, Run: get("/files/" + on.resized)},
		{Name: "signed token outside the roots", Want: []int{http.StatusForbidden}, Run: get("/files/" + on.outside)},
		{Name: "answers never read", Want: []int{http.StatusOK}, Run: func() (int, error) { return neverRead(srv, addr, on) }},
		{Name: "idle connection flood", Want: []int{http.StatusOK}, Run: func() (int, error) { return connectionFlood(addr) }},
	}, transport.CloseIdleConnections
}

// neverRead asks for a row stream and then a plan of 100 splits, each on
// a connection of its own that never reads past the answer's head, and
// checks that the server cuts each (the body ends short, never cleanly)
// once its writes have moved nothing for the stall bound: the request
// ends, counted a write stall, before the body is read. A stream answered
// 503 (every slot taken) counts as such.
func neverRead(srv *sidecartest.Server, addr string, on attackTargets) (int, error) {
	for _, path := range []string{on.rows.Path, "/splits?table=load.wide&minSplits=100"} {
		stalls, err := sidecartest.GatherSum(srv, "sidecar_http_write_stalls_total")
		if err != nil {
			return 0, err
		}
		id, ended := on.ends.next()
		resp, c, err := sidecartest.DialNonReader(addr, path, attackerIP, handlers.RequestIDHeader, id)
		if c != nil {
			defer c.Close()
		}
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, nil
		}
		// Its body is read once the server has cut it: reading before
		// would let the server write on.
		select {
		case <-ended:
		case <-time.After(20 * on.stall):
			return 0, fmt.Errorf("%s was not cut within %v of not being read", path, 20*on.stall)
		}
		if now, err := sidecartest.GatherSum(srv, "sidecar_http_write_stalls_total"); err != nil || now <= stalls {
			return 0, fmt.Errorf("%s, never read, ended with %v write stalls counted, %v before (%v)", path, now, stalls, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * on.stall))
		if n, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, fmt.Errorf("%s, never read, then read: %d bytes and %v, want a body cut short", path, n, err)
		}
	}
	return http.StatusOK, nil
}

// requestEnds is the load server's log: it tells when a request whose id
// it handed out has ended, which the server logs once the request's
// handler has returned and its metrics are counted (its line "request"),
// and discards the rest.
type requestEnds struct {
	ids   atomic.Int64
	mu    sync.Mutex
	waits map[string]chan struct{}
}

// next is a new request id, and a channel closed once the request that
// carries it (as handlers.RequestIDHeader) has ended.
func (e *requestEnds) next() (string, <-chan struct{}) {
	id := fmt.Sprintf("never-read-%d", e.ids.Add(1))
	ch := make(chan struct{})
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.waits == nil {
		e.waits = map[string]chan struct{}{}
	}
	e.waits[id] = ch
	return id, ch
}

func (e *requestEnds) Enabled(context.Context, slog.Level) bool { return true }

func (e *requestEnds) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Message != "request" {
		return nil
	}
	id := handlers.RequestID(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if ch, ok := e.waits[id]; ok {
		close(ch)
		delete(e.waits, id)
	}
	return nil
}

func (e *requestEnds) WithAttrs([]slog.Attr) slog.Handler { return e }
func (e *requestEnds) WithGroup(string) slog.Handler      { return e }

// connectionFlood opens more idle keep-alive connections than the server
// holds (each asks /healthz once, from the attackers' address), then asks
// /healthz on a new one: the cap makes room by closing the longest idle.
func connectionFlood(addr string) (int, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: attackerIP}}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	ask := func() (int, error) {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return 0, err
		}
		conns = append(conns, c)
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		resp, err := testnet.Ask(c, bufio.NewReader(c), "GET /healthz HTTP/1.1\r\nHost: sidecar\r\n\r\n")
		if err != nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}
	for range loadConnections + loadConnections/4 {
		if st, err := ask(); err != nil || st != http.StatusOK {
			return st, err
		}
	}
	return ask()
}

// countingWriter discards what is written to it and tells counted how much.
type countingWriter func(int)

func (c countingWriter) Write(p []byte) (int, error) {
	c(len(p))
	return len(p), nil
}

// processState is what must come back after the load.
type processState struct {
	goroutines int
	fds        int
	rss        int64
	heap       int64 // the Go heap in use
}

// rssSlack is how far above its start the resident set may settle: the Go
// runtime keeps some heap, and the reference reads it holds are counted in
// both.
const rssSlack = 64 << 20

// memoryBack reports whether memory is back near base. With -race the
// resident set cannot come back (the race detector's shadow memory follows
// the heap's high-water mark and is never released), so the Go heap in use
// stands in for it.
func (s processState) memoryBack(base processState) bool {
	if sidecartest.RaceEnabled {
		return s.heap <= base.heap+rssSlack
	}
	return s.rss <= base.rss+rssSlack
}

// settle collects garbage and returns memory to the OS until the process is
// back within reach of base (no more goroutines and fds than base, RSS
// within rssSlack), and fails the test with what did not come back, the
// goroutines' stacks among it, if it is not within ten seconds. Without a
// base it waits until the count of goroutines has held for 100 ms (the
// goroutines of earlier work have ended) and returns the state then, to
// compare against. The runtime tells nobody when a goroutine ends or memory
// returns: asking again is the only way (testenv.Poll).
func settle(t *testing.T, base *processState) processState {
	t.Helper()
	var s processState
	measure := func() {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s = processState{goroutines: runtime.NumGoroutine(), fds: openFDs(t), rss: sidecartest.CurrentRSS(), heap: int64(ms.HeapInuse)}
	}
	if base == nil {
		last, since := -1, time.Now()
		testenv.Poll(t, 10*time.Second, func() error {
			measure()
			if s.goroutines != last {
				last, since = s.goroutines, time.Now()
			}
			if held := time.Since(since); held < 100*time.Millisecond {
				return fmt.Errorf("%d goroutines, held for %s", s.goroutines, held)
			}
			return nil
		})
		return s
	}
	testenv.Poll(t, 10*time.Second, func() error {
		measure()
		var errs []error
		if s.goroutines > base.goroutines {
			var stacks strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			errs = append(errs, fmt.Errorf("%d goroutines after the load, %d before:\n%s", s.goroutines, base.goroutines, stacks.String()))
		}
		if s.fds > base.fds {
			errs = append(errs, fmt.Errorf("%d open file descriptors after the load, %d before", s.fds, base.fds))
		}
		if !s.memoryBack(*base) {
			errs = append(errs, fmt.Errorf("RSS %.1f MiB and heap %.1f MiB after the load, %.1f and %.1f MiB before (race detector on: %v)",
				mib(s.rss), mib(s.heap), mib(base.rss), mib(base.heap), sidecartest.RaceEnabled))
		}
		return errors.Join(errs...)
	})
	return s
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		testenv.Missing(t, fmt.Sprintf("no /proc/self/fd to count open files: %v (Linux's proc file system)", err))
	}
	return len(entries)
}

// resetPeak resets the kernel's high-water mark of the resident set and
// returns the resident set now.
func resetPeak() int64 {
	sidecartest.ResetPeakRSS()
	return sidecartest.CurrentRSS()
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
