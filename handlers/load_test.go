package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

// TestLoadAndLeaks runs 64 clients against the real router over a real
// listener for a few seconds: each reads row streams and raw-file streams
// of a generated table (300,000 rows, 4 data files, positional and equality
// deletes), whole, from a Range offset, or cut at a random byte (the client
// closes the connection, or its context is cancelled). Every read that
// completes must be byte-exact against a reference read. Afterwards the
// process must be back where it started: no more goroutines, no more open
// file descriptors, and a resident set near its start (with -race, whose
// shadow memory is never released, the Go heap in use). The figures are
// logged (go test -run TestLoadAndLeaks -v ./handlers/); speed is not
// asserted.
func TestLoadAndLeaks(t *testing.T) {
	rows, files, duration := 300_000, 4, 5*time.Second
	if testing.Short() {
		rows, duration = 60_000, 1500*time.Millisecond
	}
	const clients = 64
	ctx := context.Background()
	cat, dir := localWarehouse(t)
	if _, err := tablegen.Bench(ctx, cat, table.Identifier{"load", "t"}, rows, files, 0.05, 0.01); err != nil {
		t.Fatalf("write the load table: %v", err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"load", "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, splits.CatalogConfig{Type: "local", Warehouse: dir}, nil,
		func(c *handlers.Config) { c.MaxStreams = clients })

	// The URIs: every split of the current snapshot (row streams) and every
	// data file of the first, before its deletes (raw files).
	rowsPlan := srv.plan(t, q("table", "load.t", "minSplits", strconv.Itoa(files)))
	filesPlan := srv.plan(t, q("table", "load.t", "mode", "files",
		"snapshotId", strconv.FormatInt(tbl.Metadata().Snapshots()[0].SnapshotID, 10)))
	if rowsPlan.Mode != "v2" || filesPlan.Mode != "v1" {
		t.Fatalf("plans are %s and %s, want v2 and v1", rowsPlan.Mode, filesPlan.Mode)
	}
	type target struct {
		path string
		want []byte
	}
	var targets []target
	for _, u := range append(rowsPlan.InputSource.URIs, filesPlan.InputSource.URIs...) {
		path := strings.TrimPrefix(u, srv.URL)
		resp, body := srv.get(t, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("reference read of %s: %d", path, resp.StatusCode)
		}
		targets = append(targets, target{path, body})
	}

	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: transport}
	before := settle(t, nil)
	t.Logf("before: %d goroutines, %d fds, RSS %.1f MiB, heap %.1f MiB", before.goroutines, before.fds, mib(before.rss), mib(before.heap))

	var (
		requests, completed, aborts, cancels, rejected, bytesRead atomic.Int64
		peakGoroutines                                            atomic.Int64
	)
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > peakGoroutines.Load() {
				peakGoroutines.Store(n)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	peakRSSBefore := resetPeak()

	deadline := time.Now().Add(duration)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 0x10ad))
			for time.Now().Before(deadline) {
				tg := targets[rng.IntN(len(targets))]
				from := 0
				if rng.IntN(4) == 0 {
					from = rng.IntN(len(tg.want))
				}
				rctx, cancel := context.WithCancel(ctx)
				req, err := http.NewRequestWithContext(rctx, http.MethodGet, srv.URL+tg.path, nil)
				if err != nil {
					cancel()
					errs <- err
					return
				}
				if from > 0 {
					req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
				}
				requests.Add(1)
				resp, err := client.Do(req)
				if err != nil {
					cancel()
					errs <- fmt.Errorf("GET %s: %w", tg.path, err)
					return
				}
				switch {
				case resp.StatusCode == http.StatusServiceUnavailable:
					// A slot is not free yet: a cut stream's handler has not
					// noticed. Druid retries; so does this client.
					rejected.Add(1)
					_, _ = io.Copy(io.Discard, resp.Body)
				case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent:
					body, _ := io.ReadAll(resp.Body)
					errs <- fmt.Errorf("GET %s from %d: %d %s", tg.path, from, resp.StatusCode, body)
				default:
					want := tg.want[from:]
					switch rng.IntN(3) {
					case 0: // cut by closing the connection mid-stream
						n, _ := io.CopyN(io.Discard, resp.Body, int64(rng.IntN(len(want)+1)))
						bytesRead.Add(n)
						aborts.Add(1)
					case 1: // cut by cancelling the request's context
						n, _ := io.CopyN(io.Discard, resp.Body, int64(rng.IntN(len(want)+1)))
						bytesRead.Add(n)
						cancel()
						cancels.Add(1)
					default: // read to the end, byte-exact
						// Compared as it arrives: 64 clients holding whole
						// bodies would measure the clients, not the server.
						cmp := &comparer{want: want}
						n, err := io.Copy(cmp, resp.Body)
						bytesRead.Add(n)
						if err != nil {
							errs <- fmt.Errorf("GET %s from %d: read: %w", tg.path, from, err)
						} else if cmp.differ || cmp.off != len(want) {
							errs <- fmt.Errorf("GET %s from %d: %d bytes that differ from the reference's %d", tg.path, from, cmp.off, len(want))
						}
						completed.Add(1)
					}
				}
				resp.Body.Close()
				cancel()
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
	peak := peakRSS()

	transport.CloseIdleConnections()
	after := settle(t, &before)
	t.Logf("load: %d clients for %v: %d requests, %d completed byte-exact, %d cut by closing, %d cut by cancelling, %d answered 503 (retried), %.1f MiB read",
		clients, duration, requests.Load(), completed.Load(), aborts.Load(), cancels.Load(), rejected.Load(), mib(bytesRead.Load()))
	t.Logf("peak: %d goroutines, RSS %.1f MiB (%.1f MiB before the load)", peakGoroutines.Load(), mib(peak), mib(peakRSSBefore))
	t.Logf("after: %d goroutines, %d fds, RSS %.1f MiB, heap %.1f MiB", after.goroutines, after.fds, mib(after.rss), mib(after.heap))
	if completed.Load() == 0 || aborts.Load()+cancels.Load() == 0 {
		t.Fatalf("the load read nothing to the end or cut nothing: %d completed, %d cut", completed.Load(), aborts.Load()+cancels.Load())
	}
	if got := metricSum(t, srv, "sidecar_streams_active"); got != 0 {
		t.Errorf("sidecar_streams_active = %v after the load, want 0", got)
	}
}

// comparer checks what is written to it against want, in order.
type comparer struct {
	want   []byte
	off    int
	differ bool
}

func (c *comparer) Write(p []byte) (int, error) {
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
		t.Skipf("no /proc/self/fd: %v", err)
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
