package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	sidecatalog "github.com/druidiceberg/sidecar/catalog"
	"github.com/druidiceberg/sidecar/catalog/catalogtest"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/sidecartest"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// The planning benchmark table of issue 7: 10,000 data files and 1,000
// delete files (see tablegen.Wide); SIDECAR_WIDE_FILES=DATA,DELETES makes
// another. It is written once into the system temp folder and reused; a
// build that did not finish is built again.
//
//	go test -run '^$' -bench PlanWide -benchtime 10x ./handlers/
var wideTable struct {
	once sync.Once
	dir  string
	tbl  *table.Table
	n    int
	err  error
}

func wideWarehouse(b *testing.B) (string, *table.Table, int) {
	b.Helper()
	wideTable.once.Do(func() {
		data, deletes := 10_000, 1_000
		if v := os.Getenv("SIDECAR_WIDE_FILES"); v != "" {
			if _, err := fmt.Sscanf(v, "%d,%d", &data, &deletes); err != nil {
				wideTable.err = fmt.Errorf("SIDECAR_WIDE_FILES=%s: want DATA,DELETES: %w", v, err)
				return
			}
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("sidecar-wide-%d-%d", data, deletes))
		done := filepath.Join(dir, "complete")
		ident := table.Identifier{"wide", "orders"}
		ctx := context.Background()
		if _, err := os.Stat(done); errors.Is(err, os.ErrNotExist) {
			if err := os.RemoveAll(dir); err != nil {
				wideTable.err = err
				return
			}
			cat, err := hadoop.NewCatalog("bench", dir, nil)
			if err != nil {
				wideTable.err = err
				return
			}
			_, err = tablegen.Wide(ctx, cat, ident, data, deletes)
			if err == nil {
				err = os.WriteFile(done, nil, 0o644)
			}
			if err = errors.Join(err, cat.Close()); err != nil {
				wideTable.err = fmt.Errorf("build wide table: %w", err)
				return
			}
		}
		cat, err := hadoop.NewCatalog("bench", dir, nil)
		if err != nil {
			wideTable.err = err
			return
		}
		defer cat.Close()
		wideTable.dir, wideTable.n = dir, data
		wideTable.tbl, wideTable.err = cat.LoadTable(ctx, ident)
	})
	if wideTable.err != nil {
		b.Fatalf("wide table: %v", wideTable.err)
	}
	return wideTable.dir, wideTable.tbl, wideTable.n
}

// widePlanners are the three ways of planning the wide table that the
// benchmarks compare: iceberg-go's PlanFiles on the loaded table (the
// anchor), the sidecar's planner (load, plan, tokens), and GET /splits over
// HTTP (all that, plus the answer's JSON, written and read).
func widePlanners(b *testing.B) map[string]func() int {
	dir, tbl, n := wideWarehouse(b)
	ctx := context.Background()
	signer, err := token.NewSigner(testKey)
	if err != nil {
		b.Fatal(err)
	}
	planner, err := splits.NewPlanner(catalogtest.Open(b, sidecatalog.Config{Type: "local", Warehouse: dir}), signer, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv := localServer(b, dir)
	uri := srv.URL + "/splits?" + q("table", "wide.orders").Encode()
	check := func(what string, got int) int {
		if got != n {
			b.Fatalf("%s gave %d files, want %d", what, got, n)
		}
		return got
	}
	return map[string]func() int{
		"PlanFiles": func() int {
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				b.Fatal(err)
			}
			return check("PlanFiles", len(tasks))
		},
		"LoadPlanFiles": func() int {
			t, err := planner.LoadTable(ctx, "wide.orders")
			if err != nil {
				b.Fatal(err)
			}
			tasks, err := t.Scan().PlanFiles(ctx)
			if err != nil {
				b.Fatal(err)
			}
			return check("LoadTable+PlanFiles", len(tasks))
		},
		"Planner": func() int {
			p, err := planner.Plan(ctx, splits.Request{Table: "wide.orders"})
			if err != nil {
				b.Fatal(err)
			}
			files := 0
			for _, s := range p.Splits {
				files += len(s.Parts)
			}
			return check("Plan", files)
		},
		"HTTP": func() int {
			resp, err := srv.Client().Get(uri)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			size, err := io.Copy(io.Discard, resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("GET /splits: %d, %v", resp.StatusCode, err)
			}
			return int(size)
		},
	}
}

// BenchmarkPlanWide plans the wide table each way, one sub-benchmark each
// (for -cpuprofile of one of them), and reports the CPU time per plan
// besides the wall-clock time.
func BenchmarkPlanWide(b *testing.B) {
	planners := widePlanners(b)
	for _, name := range []string{"PlanFiles", "LoadPlanFiles", "Planner", "HTTP"} {
		b.Run(name, func(b *testing.B) {
			var n int
			startCPU := cpuTime(b)
			for b.Loop() {
				n = planners[name]()
			}
			b.ReportMetric((cpuTime(b)-startCPU).Seconds()*1000/float64(b.N), "cpu-ms/op")
			if name == "HTTP" {
				b.ReportMetric(float64(n), "answer-bytes")
			}
		})
	}
}

// BenchmarkPlanWideRatio plans the wide table the three ways in turn, each
// iteration, and reports each way's milliseconds per plan, wall-clock and
// CPU (user and system, all threads: PlanFiles reads manifests in parallel,
// and the planner signs in parallel), and the sidecar's ratios to
// PlanFiles. Interleaving keeps a busy machine from favouring one way; the
// CPU figures hold up better than the wall-clock ones on a busy machine.
func BenchmarkPlanWideRatio(b *testing.B) {
	planners := widePlanners(b)
	names := []string{"PlanFiles", "LoadPlanFiles", "Planner", "HTTP"}
	wall, cpu := map[string]time.Duration{}, map[string]time.Duration{}
	var answer int
	sidecartest.ResetPeakRSS()
	for b.Loop() {
		for _, name := range names {
			start, startCPU := time.Now(), cpuTime(b)
			n := planners[name]()
			wall[name] += time.Since(start)
			cpu[name] += cpuTime(b) - startCPU
			if name == "HTTP" {
				answer = n
			}
		}
	}
	for _, name := range names {
		b.ReportMetric(wall[name].Seconds()*1000/float64(b.N), name+"-ms")
		b.ReportMetric(cpu[name].Seconds()*1000/float64(b.N), name+"-cpu-ms")
	}
	for _, name := range names[1:] {
		b.ReportMetric(float64(wall[name])/float64(wall["PlanFiles"]), name+"/PlanFiles")
		b.ReportMetric(float64(cpu[name])/float64(cpu["PlanFiles"]), name+"/PlanFiles-cpu")
	}
	b.ReportMetric(float64(answer)/(1<<20), "answer-MiB")
	b.ReportMetric(float64(sidecartest.PeakRSS())/(1<<20), "peak-RSS-MiB")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPlanMemory measures the live heap that planning the wide table
// holds at its peak, each way, per data file planned: what the memory rule
// of the sidecar's planning admission (splits.PlanBytesPerFile) is sized
// from. The collector runs at GOGC=10 while it measures, so the live heap
// it samples (runtime/metrics' /gc/heap/live:bytes, after every cycle) is
// close to the live peak; the default GOGC lets the heap grow to twice it.
//
//	SIDECAR_WIDE_FILES=100000,1000 go test -run '^$' -bench PlanMemory -benchtime 1x ./handlers/
func BenchmarkPlanMemory(b *testing.B) {
	planners := widePlanners(b)
	_, _, n := wideWarehouse(b)
	for _, name := range []string{"PlanFiles", "Planner", "HTTP"} {
		b.Run(name, func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakLiveHeap(func() { planners[name]() }))
			}
			b.ReportMetric(float64(peak)/float64(n), "live-B/file")
			b.ReportMetric(float64(peak)/(1<<20), "live-MiB")
		})
	}
}

// peakLiveHeap runs f and returns the most the live heap grew above what
// it was before f, sampled after every collection at GOGC=10.
func peakLiveHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := live()
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var most uint64
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-t.C:
				most = max(most, live())
			}
		}
	}()
	f()
	close(stop)
	most := <-peak
	if most < base {
		return 0
	}
	return most - base
}
