package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/druid"
	"github.com/druidiceberg/sidecar/internal/druidsim"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/internal/testenv"
	"github.com/druidiceberg/sidecar/internal/testlog"
	"github.com/druidiceberg/sidecar/token"
)

// replica is one sidecar process.
type replica struct {
	cmd  *exec.Cmd
	addr string
	// healthAddr is the address of its health listener, if it has one.
	healthAddr string
	logs       *testlog.Buffer
	exited     chan error
}

// startReplica runs a sidecar process with args and waits until it
// listens; its address comes from its JSON log.
func startReplica(t *testing.T, args ...string) *replica {
	t.Helper()
	return startReplicaEnv(t, nil, args...)
}

// startReplicaEnv is startReplica with env added to the process's
// environment.
func startReplicaEnv(t *testing.T, env []string, args ...string) *replica {
	t.Helper()
	r := &replica{logs: &testlog.Buffer{}, exited: make(chan error, 1)}
	r.cmd = sidecarCommand(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	r.cmd.Env = append(r.cmd.Env, env...)
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Bytes()
			_, _ = r.logs.Write(append(slices.Clone(line), '\n'))
			var l struct {
				Msg, Addr  string
				HealthAddr string `json:"health_addr"`
			}
			if json.Unmarshal(line, &l) == nil && l.Msg == "listening" {
				addr <- [2]string{l.Addr, l.HealthAddr}
			}
		}
		r.exited <- r.cmd.Wait()
	}()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	})
	select {
	case a := <-addr:
		r.addr, r.healthAddr = a[0], a[1]
	case err := <-r.exited:
		t.Fatalf("the sidecar exited before listening: %v\n%s", err, r.logs.String())
	case <-time.After(time.Minute):
		t.Fatalf("the sidecar did not listen within a minute\n%s", r.logs.String())
	}
	return r
}

// proxied is one request the proxy passed on.
type proxied struct {
	path    string
	offset  string // the Range header's start
	backend int
	status  int
}

// roundRobin passes each request to the next replica in turn, dead or
// alive (a dead one answers 502, as a load balancer would), and kills the
// victim replica once it has sent killAfter bytes of one row stream.
type roundRobin struct {
	backends  []*httputil.ReverseProxy
	replicas  []*replica
	victim    int
	killAfter int64

	next   atomic.Uint64
	killed atomic.Bool
	mu     sync.Mutex
	log    []proxied
}

func (p *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(p.next.Add(1) % uint64(len(p.backends)))
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	if i == p.victim && strings.Contains(r.URL.Path, "/rows") && !p.killed.Load() {
		rec.onBytes = func(n int64) {
			if n >= p.killAfter && p.killed.CompareAndSwap(false, true) {
				// The replica dies in the middle of this stream.
				_ = p.replicas[i].cmd.Process.Kill()
			}
		}
	}
	defer func() {
		off, _ := strings.CutPrefix(r.Header.Get("Range"), "bytes=")
		p.mu.Lock()
		p.log = append(p.log, proxied{path: r.URL.Path, offset: strings.TrimSuffix(off, "-"), backend: i, status: rec.status})
		p.mu.Unlock()
	}()
	p.backends[i].ServeHTTP(rec, r)
}

// recorder notes an answer's status and counts its bytes.
type recorder struct {
	http.ResponseWriter
	status  int
	n       int64
	onBytes func(int64)
}

func (r *recorder) WriteHeader(s int) { r.status = s; r.ResponseWriter.WriteHeader(s) }
func (r *recorder) Flush()            { r.ResponseWriter.(http.Flusher).Flush() }
func (r *recorder) Write(p []byte) (int, error) {
	n, err := r.ResponseWriter.Write(p)
	r.n += int64(n)
	if r.onBytes != nil {
		r.onBytes(r.n)
	}
	return n, err
}

// TestReplicas: three sidecar processes that share a token key serve one
// table behind a round-robin proxy. The Druid model ingests the table,
// packed into splits whose tokens name them in their plan, gzip-compressed,
// through the proxy, with connections cut at random: every resumed read
// (Range on the compressed bytes) lands on another replica than the one
// before, which plans the referenced snapshot again or serves it from its
// cache; one replica is killed in the middle of a stream, and its reads go
// on elsewhere. The datasource holds exactly the table's live rows, and
// the two replicas left serve byte-identical streams for every URI.
func TestReplicas(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "runs three sidecar processes over a table of 120 files")
	ctx := context.Background()
	dir := t.TempDir()

	wh := filepath.Join(dir, "warehouse")
	cat, err := hadoop.NewCatalog("sidecar", wh, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 12,000 rows in 120 files: packed into five splits of about 140 KB
	// of gzip each (and a small one), every cut (at most 60,000 bytes
	// into an answer) and the kill (at 32 KiB) fall inside a stream, and
	// the resumed reads land on other replicas; more rows only lengthen
	// every read, on three processes.
	tbl, err := tablegen.Bench(ctx, catalogtest.SnappyWrites(cat), table.Identifier{"lake", "events"}, 12_000, 120, 0.03, 0.01)
	_ = cat.Close()
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := tablegen.OracleRows(ctx, tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	keyFile := filepath.Join(dir, "token.key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	lb := &roundRobin{victim: 1, killAfter: 32 << 10}
	proxy := httptest.NewServer(lb)
	defer proxy.Close()
	for range 3 {
		r := startReplica(t, "--warehouse", wh, "--token-key-file", keyFile, "--public-url", proxy.URL)
		u, _ := url.Parse("http://" + r.addr)
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
		lb.replicas = append(lb.replicas, r)
		lb.backends = append(lb.backends, rp)
	}

	task := getBody(t, proxy.URL+"/druid/task?"+url.Values{
		"table": {"lake.events"}, "dataSource": {"events"}, "timestampColumn": {"event_ts"},
		"segmentGranularity": {"ALL"}, "maxNumConcurrentSubTasks": {"3"}, "minSplits": {"5"}, "compression": {"gzip"},
	}.Encode())
	var spec struct {
		Spec struct {
			IOConfig struct {
				InputSource struct {
					URIs []string `json:"uris"`
				} `json:"inputSource"`
			} `json:"ioConfig"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(task, &spec); err != nil {
		t.Fatal(err)
	}
	uris := spec.Spec.IOConfig.InputSource.URIs
	signer, err := token.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	for _, u := range uris {
		if !strings.HasPrefix(u, proxy.URL+"/splits/") || !strings.HasSuffix(u, "/rows.ndjson.gz") || len(u) > 2048 {
			t.Fatalf("URI %s", u)
		}
		tok, err := signer.Decode(token.KindRows, strings.TrimSuffix(strings.TrimPrefix(u, proxy.URL+"/splits/"), "/rows.ndjson.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if tok.Ref != nil {
			refs++
		}
	}
	if len(uris) < 5 || len(uris) >= 120 || refs == 0 {
		t.Fatalf("%d URIs for 120 data files, %d of them plan references; want a few packed splits", len(uris), refs)
	}

	d := druidsim.New()
	d.Concurrency = 3
	cut := &druidsim.CuttingTransport{Cuts: 12, MaxBytes: 60_000, Seed: 15}
	d.Client = &http.Client{Transport: cut}
	if err := d.ExecTask(ctx, task); err != nil {
		t.Fatalf("the Druid model's task failed: %v\nvictim's log:\n%s", err, lb.replicas[lb.victim].logs.String())
	}
	// The task types every column (the docs' type table).
	want, err := druidsim.ExpectStrings(oracle, "event_ts", druid.Types(tbl.Schema().Fields(), token.Encoding{}))
	if err != nil {
		t.Fatal(err)
	}
	got := d.RowStrings("events")
	if !slices.Equal(got, want) {
		t.Fatalf("the datasource holds %d rows, the table %d live ones", len(got), len(want))
	}

	// Who served what: resumed reads on other replicas, and the victim's
	// broken stream finished elsewhere.
	if !lb.killed.Load() {
		t.Fatal("the victim was never killed: no stream of it reached 32 KiB")
	}
	select {
	case <-lb.replicas[lb.victim].exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed replica did not exit")
	}
	byPath := map[string][]proxied{}
	lb.mu.Lock()
	for _, p := range lb.log {
		byPath[p.path] = append(byPath[p.path], p)
	}
	lb.mu.Unlock()
	resumedElsewhere, victimFinished := 0, false
	for _, reqs := range byPath {
		first := -1
		for _, p := range reqs {
			// Druid asks for bytes=0- too, answered with the whole body.
			if p.offset == "0" && p.status == http.StatusOK {
				first = p.backend
			}
		}
		for _, p := range reqs {
			if p.offset != "0" && p.status == http.StatusPartialContent && p.backend != first {
				resumedElsewhere++
				victimFinished = victimFinished || first == lb.victim
			}
		}
	}
	if resumedElsewhere < 3 || !victimFinished {
		t.Fatalf("%d reads resumed on another replica (want several), the victim's stream finished elsewhere: %v",
			resumedElsewhere, victimFinished)
	}

	// The replicas left serve the same bytes for every URI.
	alive := []*replica{lb.replicas[0], lb.replicas[2]}
	for _, u := range uris {
		var bodies [][]byte
		for _, r := range alive {
			bodies = append(bodies, getBody(t, strings.Replace(u, proxy.URL, "http://"+r.addr, 1)))
		}
		if !bytes.Equal(bodies[0], bodies[1]) || len(bodies[0]) == 0 {
			t.Fatalf("%s: the replicas serve %d and %d different bytes", u, len(bodies[0]), len(bodies[1]))
		}
	}
	for _, r := range alive {
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-r.exited:
			if err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, r.logs.String())
			}
		case <-time.After(time.Minute):
			t.Fatal("no exit within a minute of SIGTERM")
		}
	}
	t.Logf("%d URIs (%d plan references), %d answers cut, %d reads resumed on another replica", len(uris), refs, cut.Done(), resumedElsewhere)
}
