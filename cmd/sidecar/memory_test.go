package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/internal/tablegen"
	"github.com/druidiceberg/sidecar/splits"
)

// The sidecar under a small Go memory limit: 8 MiB makes a budget of
// 4 MiB, which plans a table of 700 data files (2.7 MiB by the rule) one
// at a time, never one of 1,100 (4.3 MiB).
const (
	smallMemoryLimit = "8MiB"
	fitsOneAtATime   = 700
	neverFits        = 1_100
)

// TestSidecarUnderAMemoryLimit runs the sidecar as a process under a small
// GOMEMLIMIT, the limit the memory rule reads, and plans by the rule: a
// table too large for the budget is a 422 that names what it needs,
// concurrent plans that do not fit together are 503s with Retry-After that
// succeed when retried, as Druid retries, and the process lives through it.
func TestSidecarUnderAMemoryLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	cat, err := hadoop.NewCatalog("mem", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string]int{"large": neverFits, "medium": fitsOneAtATime} {
		if _, err := tablegen.Wide(ctx, cat, table.Identifier{"wide", name}, files, 10); err != nil {
			t.Fatal(err)
		}
	}
	if err := cat.Close(); err != nil {
		t.Fatal(err)
	}
	r := startReplicaEnv(t, []string{"GOMEMLIMIT=" + smallMemoryLimit}, "--catalog", "local", "--warehouse", dir,
		"--token-key-file", filepath.Join(dir, "token.key"))
	if !strings.Contains(r.logs.String(), `"limit_from":"GOMEMLIMIT"`) {
		t.Errorf("the start-up log does not give the limit's origin:\n%s", r.logs.String())
	}

	get := func(table string) (int, http.Header, string) {
		resp, err := http.Get("http://" + r.addr + "/splits?" + url.Values{"table": {table}, "mode": {"rows"}}.Encode())
		if err != nil {
			t.Fatalf("GET /splits of %s: %v\n%s", table, err, r.logs.String())
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}

	status, _, body := get("wide.large")
	need := fmt.Sprintf("its %d data files need 4.3 MiB to plan (4 KiB each), more than 4 MiB", neverFits)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `"memory_exceeded"`) || !strings.Contains(body, need) {
		t.Fatalf("a plan that never fits: %d %s; want 422 with %q", status, body, need)
	}

	// Three plans at once that fit one at a time: each is a 200 or a 503
	// that a retry turns into a 200. A plan turned away asks again once
	// another has answered 200 (and so gives its memory back), as Druid
	// asks again after Retry-After: asking at once, the three plans of
	// 700 files each were asked again dozens of times, every time in vain
	// while another still held the budget. One plan at least is always
	// asking, so that none waits for nothing: the last one to be turned
	// away with none in flight asks again at once (the plan that answered
	// may not have given its memory back yet).
	var wg sync.WaitGroup
	var mu sync.Mutex
	busy, inFlight := 0, 0
	planned := make(chan struct{}) // closed, and replaced, on each 200
	for range 3 {
		wg.Go(func() {
			for attempt := 0; ; attempt++ {
				mu.Lock()
				inFlight++
				answered := planned
				mu.Unlock()
				status, h, body := get("wide.medium")
				mu.Lock()
				inFlight--
				if status == http.StatusOK {
					close(planned)
					planned = make(chan struct{})
				}
				others := inFlight
				mu.Unlock()
				if status == http.StatusOK {
					var p struct{ Splits []json.RawMessage }
					if err := json.Unmarshal([]byte(body), &p); err != nil || len(p.Splits) == 0 {
						t.Errorf("a plan of %d splits: %v", len(p.Splits), err)
					}
					return
				}
				if status != http.StatusServiceUnavailable || !strings.Contains(body, `"memory_busy"`) || h.Get("Retry-After") == "" || attempt > 100 {
					t.Errorf("attempt %d: %d %s (Retry-After %q)", attempt, status, body, h.Get("Retry-After"))
					return
				}
				mu.Lock()
				busy++
				mu.Unlock()
				if others > 0 {
					select {
					case <-answered:
					case <-time.After(time.Minute):
						t.Errorf("attempt %d: no plan answered within a minute of a 503", attempt)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d answers 503 memory_busy among three concurrent plans of %d files", busy, fitsOneAtATime)
	if r.cmd.ProcessState != nil {
		t.Fatalf("the sidecar exited: %v", r.cmd.ProcessState)
	}
	if status, _, body := get("wide.medium"); status != http.StatusOK {
		t.Fatalf("after the plans: %d %s", status, body)
	}
	if got := int64(fitsOneAtATime * splits.PlanBytesPerFile); got > 4<<20 || 2*got <= 4<<20 {
		t.Fatalf("the test's tables no longer straddle the budget: %d bytes a plan", got)
	}
}

// TestMemoryRule: the budget is half the Go memory limit, and one decoded
// delete file's bound --max-delete-memory, or half the budget, or 1 GiB
// without a limit; an error names where the bound comes from.
func TestMemoryRule(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	tests := []struct {
		name                 string
		cfg                  config
		budget, bound        int64
		boundName, budgetsIn string
	}{
		{"a limit", config{limitsConfig: limitsConfig{memoryLimit: memory.Limit{Bytes: 1 << 30, Origin: "GOMEMLIMIT"}}}, 512 << 20, 256 << 20,
			"--max-delete-memory (by default half the memory budget", "GOMEMLIMIT"},
		{"the flag", config{limitsConfig: limitsConfig{MaxDeleteMemory: 2 << 30, memoryLimit: memory.Limit{Bytes: 1 << 30, Origin: "GOMEMLIMIT"}}}, 512 << 20, 2 << 30,
			"--max-delete-memory", "GOMEMLIMIT"},
		{"no limit", config{}, 0, 1 << 30, "without a memory limit", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, bound, name := memoryRule(tt.cfg, reg)
			if b.Capacity() != tt.budget || bound != tt.bound || !strings.Contains(name, tt.boundName) || !strings.Contains(b.Origin(), tt.budgetsIn) {
				t.Errorf("budget %d (%s), bound %d (%s); want %d, %d (%s)", b.Capacity(), b.Origin(), bound, name, tt.budget, tt.bound, tt.boundName)
			}
		})
	}
}
