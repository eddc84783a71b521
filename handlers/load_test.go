package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/druidiceberg/sidecar/token"
)

// TestLoadAndLeaks runs 64 clients against the real router over a real
// listener, each at least once and for a second: each reads row streams and
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
// (go test -run TestLoadAndLeaks -v ./handlers/); speed is not asserted.
func TestLoadAndLeaks(t *testing.T) {
	// Splits of 2,000 rows, half a MB each: far more than the buffers
	// between the server and a client that does not read, so that
	// streams never read stall (checked below). What could leak is
	// counted in requests, cuts and attacks, not rows; more rows only
	// lengthen every read.
	//
	// Each run lasts duration/2, and each client reads at least once in
	// it however late it starts: what is checked is the same in every
	// read, so a run needs every client's reads, not a long time.
	testenv.SkipShort(t, "runs 64 clients and the hostile ones beside them, and waits out the write-stall timeout")
	rows, files, duration := 8_000, 4, 2*time.Second
	const clients = 64
	ctx := context.Background()
	cat, dir := localWarehouse(t)
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
	srv := newServerListening(t, sidecatalog.Config{Type: "local", Warehouse: dir}, nil, testDeleteCacheSize,
		func(l net.Listener) net.Listener {
			return connlimit.New(smallBuffers{Listener: l, only: attackerIP}, loadConnections, connlimit.Hooks{
				Refused: func(c net.Conn) { _ = handlers.WriteRefusal(c, loadConnections) },
			})
		},
		func(c *handlers.Config) {
			c.MaxStreams, c.BodyTimeout, c.WriteStallTimeout = clients, bodyTimeout, stall
		})

	// The URIs: every split of the current snapshot (row streams) and every
	// data file of the first, before its deletes (raw files).
	rowsPlan := srv.plan(t, q("table", "load.t", "minSplits", strconv.Itoa(files)))
	filesPlan := srv.plan(t, q("table", "load.t", "mode", "files",
		"snapshotId", strconv.FormatInt(tbl.Metadata().Snapshots()[0].SnapshotID, 10)))
	if rowsPlan.Mode != "v2" || filesPlan.Mode != "v1" {
		t.Fatalf("plans are %s and %s, want v2 and v1", rowsPlan.Mode, filesPlan.Mode)
	}
	var targets []loadTarget
	for _, u := range append(rowsPlan.InputSource.URIs, filesPlan.InputSource.URIs...) {
		path := strings.TrimPrefix(u, srv.URL)
		resp, body := srv.get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("reference read of %s: %d", path, resp.StatusCode)
		}
		targets = append(targets, loadTarget{path, body})
	}
	// The row stream the non-readers ask for, against the few KiB of
	// send and receive buffers of their connections (smallBuffers,
	// dialNonReader) and the server's own.
	if n := len(targets[0].want); n < 8*16<<10 {
		t.Fatalf("the row stream the non-readers ask for is %d bytes; the test needs at least %d", n, 8*16<<10)
	}
	on := attackTargets{rows: targets[0], snapshot: tbl.CurrentSnapshot().SnapshotID, stall: stall}
	// A file token that pins another size than the file's.
	signer, err := token.NewSigner(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := signer.Verify(token.KindFile, strings.TrimPrefix(targets[len(targets)-1].path, "/files/"))
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
	if got := metricSum(t, srv, "sidecar_streams_active"); got != 0 {
		t.Errorf("sidecar_streams_active = %v after the load, want 0", got)
	}
}

// loadTarget is a URI the load reads, with its reference bytes.
type loadTarget struct {
	path string
	want []byte
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
func runLoad(t *testing.T, srv *testServer, client *http.Client, targets []loadTarget, on attackTargets, clients int, duration time.Duration,
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
	var list []attack
	if hostile {
		var done, doneMore func()
		var more []attack
		list, done = attacks(srv)
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
		for time.Now().Before(deadline) {
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
			time.Sleep(20 * time.Millisecond)
		}
	})
	for _, a := range list {
		wg.Go(func() {
			// Once at least, then for as long as the run lasts.
			for first := true; first || time.Now().Before(deadline); first = false {
				status, err := a.run()
				if err != nil {
					errs <- fmt.Errorf("%s: %w", a.name, err)
					return
				}
				r.sawHostile(a.name, status)
				if !slices.Contains(a.want, status) {
					errs <- fmt.Errorf("%s: %d, want one of %v", a.name, status, a.want)
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
	r.peakRSS = peakRSS()
	return r
}

// druidRead reads one target as Druid does, whole, from a Range offset, or
// cut at a random byte, and checks what it read to the end byte for byte.
// The bytes that arrive before deadline count towards the run's throughput.
func druidRead(r *loadRun, client *http.Client, base string, tg loadTarget, rng *rand.Rand, deadline time.Time) error {
	inWindow := func(n int) {
		if time.Now().Before(deadline) {
			r.bytesInWindow.Add(int64(n))
		}
	}
	from := 0
	if rng.IntN(4) == 0 {
		from = rng.IntN(len(tg.want))
	}
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, base+tg.path, nil)
	if err != nil {
		return err
	}
	if from > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
	}
	r.requests.Add(1)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", tg.path, err)
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
		return fmt.Errorf("GET %s from %d: %d %s", tg.path, from, resp.StatusCode, body)
	default:
		want := tg.want[from:]
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
			cmp := &comparer{want: want, counted: inWindow}
			n, err := io.Copy(cmp, resp.Body)
			r.bytesRead.Add(n)
			if err != nil {
				return fmt.Errorf("GET %s from %d: read: %w", tg.path, from, err)
			} else if cmp.differ || cmp.off != len(want) {
				return fmt.Errorf("GET %s from %d: %d bytes that differ from the reference's %d", tg.path, from, cmp.off, len(want))
			}
			r.completed.Add(1)
		}
	}
	return nil
}

// attack is one hostile client's request, repeated for the whole run: run
// sends it once and returns the status, which must be one of want.
type attack struct {
	name string
	want []int
	run  func() (int, error)
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
// and the server's write-stall timeout.
type attackTargets struct {
	rows     loadTarget
	snapshot int64
	resized  string
	outside  string
	stall    time.Duration
}

// attacks are the hostile clients of TestLoadAndLeaks that need nothing
// but the server, each a replay of a TestHostile* attack with its payload
// built once; done closes their idle connections.
func attacks(srv *testServer) (_ []attack, done func()) {
	// Their own connections, so that the Druid-like clients' pool is not
	// taken, nor shared with connections the server closes.
	transport := &http.Transport{}
	c := &http.Client{Transport: transport}
	get := getter(srv, c)
	post := func(body string) func() (int, error) {
		return func() (int, error) {
			resp, err := c.Post(srv.URL+"/splits", "application/json", strings.NewReader(body))
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			_, err = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, err
		}
	}
	trickle := func() (int, error) {
		// A POST /splits body a byte every 50 ms: the server answers 408
		// once the body deadline passes.
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		body := `{"type":"iceberg","namespace":"load","tableName":"t"}`
		if _, err := fmt.Fprintf(conn, "POST /splits HTTP/1.1\r\nHost: sidecar\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body)); err != nil {
			return 0, err
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			for i := 0; i < len(body)-1; i++ {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := conn.Write([]byte{body[i]}); err != nil {
					return
				}
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	big := strings.Repeat("x", 900_000)
	return []attack{
		{"nested filter", []int{http.StatusBadRequest}, get("/splits?" + q("table", "load.t", "icebergFilter", nestedNot(2000)).Encode())},
		{"wide filter", []int{http.StatusBadRequest}, post(`{"namespace":"load","tableName":"t","icebergFilter":` + wideOr(1000) + `}`)},
		{"trickled body", []int{http.StatusRequestTimeout}, trickle},
		{"trickled body 2", []int{http.StatusRequestTimeout}, trickle},
		{"900 KB value", []int{http.StatusBadRequest}, get("/splits?table=load.t&mode=" + big)},
		{"name with a NUL", []int{http.StatusBadRequest}, get("/splits?" + q("table", "load.t\x00").Encode())},
		{"1001 include intervals", []int{http.StatusBadRequest}, get("/changes?" + q("table", "load.t", "timeColumn", "ts",
			"include", strings.TrimSuffix(strings.Repeat("2024-01-01/2024-01-02,", 1001), ",")).Encode())},
	}, transport.CloseIdleConnections
}

// moreAttacks are the hostile clients of TestLoadAndLeaks that aim at
// what on names: made-up methods, a query that does not parse, odd but
// valid input, a Range past a stream's end, a file token of another size,
// answers never read, and a flood of idle connections.
func moreAttacks(srv *testServer, on attackTargets) (_ []attack, done func()) {
	transport := &http.Transport{}
	c := &http.Client{Transport: transport}
	get := getter(srv, c)
	var methods atomic.Int64
	method := func(prefix string) func() (int, error) {
		// A method no route takes, new each time.
		return func() (int, error) {
			req, err := http.NewRequest(fmt.Sprintf("%sM%d", prefix, methods.Add(1)), srv.URL+"/splits", nil)
			if err != nil {
				return 0, err
			}
			return do(c, req)
		}
	}
	addr := strings.TrimPrefix(srv.URL, "http://")
	return []attack{
		{"made-up methods", []int{http.StatusMethodNotAllowed}, method("")},
		{"500 KB methods", []int{http.StatusMethodNotAllowed}, method(strings.Repeat("M", 500_000))},
		{"broken percent-encoding", []int{http.StatusBadRequest}, get("/splits?table=load.t&mode=files%zz")},
		{"fromSnapshot at the target", []int{http.StatusConflict}, get("/druid/task?" + q("table", "load.t",
			"fromSnapshot", strconv.FormatInt(on.snapshot, 10), "dataSource", "l", "timestampColumn", "event_ts").Encode())},
		{"Range past the end", []int{http.StatusRequestedRangeNotSatisfiable}, get(on.rows.path, "Range", fmt.Sprintf("bytes=%d-", len(on.rows.want)+1))},
		{"file of another size", []int{http.StatusConflict}, get("/files/" + on.resized)},
		{"signed token outside the roots", []int{http.StatusForbidden}, get("/files/" + on.outside)},
		{"answers never read", []int{http.StatusOK}, func() (int, error) { return neverRead(srv, addr, on) }},
		{"idle connection flood", []int{http.StatusOK}, func() (int, error) { return connectionFlood(addr) }},
	}, transport.CloseIdleConnections
}

// getter makes attacks that GET a path of srv with c, with the headers
// given as name, value pairs (Host sets the request's host).
func getter(srv *testServer, c *http.Client) func(path string, header ...string) func() (int, error) {
	return func(path string, header ...string) func() (int, error) {
		return func() (int, error) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			if err != nil {
				return 0, err
			}
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			if req.Header.Get("Host") != "" {
				req.Host = req.Header.Get("Host")
			}
			return do(c, req)
		}
	}
}

// do sends req with c and reads the answer whole: its status.
func do(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// neverRead asks for a row stream and then a plan of 100 splits, each on
// a connection of its own that never reads past the answer's head, and
// checks that the server cuts each (the body ends short, never cleanly)
// once its writes have moved nothing for the stall bound. A stream answered
// 503 (every slot taken) counts as such.
func neverRead(srv *testServer, addr string, on attackTargets) (int, error) {
	for _, path := range []string{on.rows.path, "/splits?table=load.wide&minSplits=100"} {
		stalls := loadMetric(srv, "sidecar_http_write_stalls_total")
		resp, c, err := dialNonReader(addr, path, attackerIP)
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
		deadline := time.Now().Add(20 * on.stall)
		for loadMetric(srv, "sidecar_http_write_stalls_total") <= stalls {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("%s was not cut within %v of not being read", path, 20*on.stall)
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * on.stall))
		if n, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, fmt.Errorf("%s, never read, then read: %d bytes and %v, want a body cut short", path, n, err)
		}
	}
	return http.StatusOK, nil
}

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

// loadMetric is the sum of a metric's series, for the attackers, which
// have no testing.T of their own.
func loadMetric(srv *testServer, name string) float64 {
	families, err := srv.reg.Gather()
	if err != nil {
		return -1
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// comparer checks what is written to it against want, in order; counted,
// when set, is told how much was written.
type comparer struct {
	want    []byte
	off     int
	differ  bool
	counted func(int)
}

// countingWriter discards what is written to it and tells counted how much.
type countingWriter func(int)

func (c countingWriter) Write(p []byte) (int, error) {
	c(len(p))
	return len(p), nil
}

func (c *comparer) Write(p []byte) (int, error) {
	if c.counted != nil {
		c.counted(len(p))
	}
	if c.off+len(p) > len(c.want) || !bytes.Equal(p, c.want[c.off:c.off+len(p)]) {
		c.differ = true
	}
	c.off += len(p)
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
	if raceEnabled {
		return s.heap <= base.heap+rssSlack
	}
	return s.rss <= base.rss+rssSlack
}

// settle collects garbage and returns memory to the OS until the process is
// back within reach of base (no more goroutines and fds than base, RSS
// within rssSlack), or ten seconds pass; then, with a base, it fails the
// test on what did not come back, with the goroutines' stacks. Without a
// base it returns the settled state to compare against.
func settle(t *testing.T, base *processState) processState {
	t.Helper()
	var s processState
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s = processState{goroutines: runtime.NumGoroutine(), fds: openFDs(t), rss: currentRSS(), heap: int64(ms.HeapInuse)}
		if base == nil {
			// Wait for the goroutines of earlier work to end, then measure.
			time.Sleep(100 * time.Millisecond)
			if again := runtime.NumGoroutine(); again == s.goroutines || time.Now().After(deadline) {
				return s
			}
			continue
		}
		if s.goroutines <= base.goroutines && s.fds <= base.fds && s.memoryBack(*base) {
			return s
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s.goroutines > base.goroutines {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("%d goroutines after the load, %d before:\n%s", s.goroutines, base.goroutines, stacks.String())
	}
	if s.fds > base.fds {
		t.Errorf("%d open file descriptors after the load, %d before", s.fds, base.fds)
	}
	if !s.memoryBack(*base) {
		t.Errorf("RSS %.1f MiB and heap %.1f MiB after the load, %.1f and %.1f MiB before (race detector on: %v)",
			mib(s.rss), mib(s.heap), mib(base.rss), mib(base.heap), raceEnabled)
	}
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

// currentRSS is VmRSS, the resident set now, in bytes.
func currentRSS() int64 { return procStatus("VmRSS:") }

// resetPeak resets the kernel's high-water mark of the resident set and
// returns the resident set now.
func resetPeak() int64 {
	resetPeakRSS()
	return currentRSS()
}

// procStatus reads one kB field of /proc/self/status, in bytes; -1 when
// absent.
func procStatus(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
