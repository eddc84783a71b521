// Package testlog collects what a server under test logs from its own
// goroutines, and lets a test wait for a line: a log line is how a server
// (in the test's process or a child) says it did something. Only tests
// import it.
package testlog

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer that several goroutines may write at once: the
// log of a server under test, or a child process's stdout and stderr
// together. The zero value is an empty buffer ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// grew, once made by Await, is closed by the next Write.
	grew chan struct{}
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew != nil {
		close(b.grew)
		b.grew = nil
	}
	return b.buf.Write(p)
}

// Await returns once cond holds of what was written so far, asking it now
// and after each write; if ctx ends first it returns ctx's cause.
func (b *Buffer) Await(ctx context.Context, cond func(written string) bool) error {
	for {
		b.mu.Lock()
		written := b.buf.String()
		if b.grew == nil {
			b.grew = make(chan struct{})
		}
		grew := b.grew
		b.mu.Unlock()
		if cond(written) {
			return nil
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// JSONLines decodes the lines written so far, one JSON object each (as
// slog's JSONHandler writes them); a line that is not one fails t.
func (b *Buffer) JSONLines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}
