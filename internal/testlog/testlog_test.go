package testlog_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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

// TestBufferAwait: Await returns once a write makes its condition hold,
// not before, and with the context's cause when no write does.
func TestBufferAwait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testlog.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, nil))
		log.Info("starting")
		done := make(chan error, 1)
		go func() {
			done <- buf.Await(t.Context(), func(s string) bool { return strings.Contains(s, `"msg":"listening"`) })
		}()
		for i := range 3 {
			synctest.Wait() // Await is blocked
			select {
			case err := <-done:
				t.Fatalf("Await returned (%v) after %d lines, before the awaited one", err, i+1)
			default:
			}
			log.Info("step", "i", i)
		}
		log.Info("listening")
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Await: %v", err)
			}
		default:
			t.Fatal("Await did not return once the awaited line was written")
		}

		why := errors.New("the server exited")
		ctx, cancel := context.WithCancelCause(t.Context())
		time.AfterFunc(time.Minute, func() { cancel(why) })
		start := time.Now()
		err := buf.Await(ctx, func(s string) bool { return strings.Contains(s, "never") })
		if !errors.Is(err, why) || time.Since(start) != time.Minute {
			t.Fatalf("Await for a line never written: %v after %v, want %v after 1m0s", err, time.Since(start), why)
		}
	})
}
