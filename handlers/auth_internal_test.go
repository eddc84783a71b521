package handlers

import (
	"fmt"
	"testing"
	"time"
)

func TestFailureLimiter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newFailureLimiter(func() time.Time { return now })
	for i := range authBurst {
		if w := l.wait("a"); w != 0 {
			t.Fatalf("failure %d: wait %v, want none within the burst", i+1, w)
		}
		l.fail("a")
	}
	if w := l.wait("a"); w != authRefill {
		t.Fatalf("after %d failures: wait %v, want %v", authBurst, w, authRefill)
	}
	if w := l.wait("b"); w != 0 {
		t.Fatalf("another address waits %v", w)
	}
	now = now.Add(authRefill / 2)
	if w := l.wait("a"); w != authRefill/2 {
		t.Fatalf("half a refill later: wait %v, want %v", w, authRefill/2)
	}
	now = now.Add(authRefill / 2)
	if w := l.wait("a"); w != 0 {
		t.Fatalf("a refill later: wait %v, want none", w)
	}
	l.fail("a")
	if w := l.wait("a"); w != authRefill {
		t.Fatalf("one failure per refill: wait %v, want %v", w, authRefill)
	}
	now = now.Add(authBurst * authRefill)
	for i := range authBurst {
		if w := l.wait("a"); w != 0 {
			t.Fatalf("refilled, failure %d: wait %v", i+1, w)
		}
		l.fail("a")
	}
}

// TestFailureLimiterBounded: the addresses remembered are bounded; past
// the bound new addresses share one allowance, and idle ones are forgotten.
func TestFailureLimiterBounded(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newFailureLimiter(func() time.Time { return now })
	for i := range authClients {
		l.fail(fmt.Sprint("10.0.", i/256, ".", i%256))
	}
	for i := range authBurst {
		if w := l.wait(fmt.Sprint("new-", i)); w != 0 {
			t.Fatalf("new address %d: wait %v", i, w)
		}
		l.fail(fmt.Sprint("new-", i))
	}
	if w := l.wait("new-other"); w == 0 {
		t.Fatal("past the bound, new addresses share one allowance: the burst is spent")
	}
	if n := len(l.buckets); n > authClients+1 {
		t.Fatalf("%d buckets, want at most %d", n, authClients+1)
	}
	// Once the remembered addresses are idle, they are forgotten.
	now = now.Add(authBurst * authRefill)
	l.fail("later")
	if n := len(l.buckets); n > 2 {
		t.Fatalf("%d buckets after they all refilled, want the new one and the shared one", n)
	}
	if w := l.wait("later"); w != 0 {
		t.Fatalf("a new address after the pruning waits %v", w)
	}
}

func TestClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:5555":             "192.0.2.7",
		"[::ffff:192.0.2.7]:5555":    "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2::9]:1":        "2001:db8:1:2::/64",
		"[2001:db8:1:3::9]:1":        "2001:db8:1:3::/64",
		"pipe":                       "pipe",
	} {
		if got := clientKey(addr); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}
