package testlog_test

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/druidiceberg/sidecar/internal/testlog"
)

// TestBufferConcurrentLoggers: goroutines logging at once lose no line
// (and, under -race, do not race).
func TestBufferConcurrentLoggers(t *testing.T) {
	var buf testlog.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				log.Info("request", "id", fmt.Sprintf("%d-%d", g, i))
			}
		})
	}
	wg.Wait()
	lines := buf.JSONLines(t)
	seen := map[any]bool{}
	for _, l := range lines {
		if l["msg"] != "request" {
			t.Fatalf("line %v", l)
		}
		seen[l["id"]] = true
	}
	if len(lines) != 400 || len(seen) != 400 {
		t.Fatalf("%d lines with %d ids, want 400 of each", len(lines), len(seen))
	}
}
