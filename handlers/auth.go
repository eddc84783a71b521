package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Credential is one username and password that HTTP Basic auth accepts.
type Credential struct {
	Username string
	Password string
}

// basicAuth checks HTTP Basic credentials against the configured ones in
// constant time: both sides are hashed first, so neither the lengths nor the
// position of the first differing byte leak.
type basicAuth struct {
	creds [][2][sha256.Size]byte
}

func newBasicAuth(creds []Credential) *basicAuth {
	if len(creds) == 0 {
		return nil
	}
	a := &basicAuth{}
	for _, c := range creds {
		a.creds = append(a.creds, [2][sha256.Size]byte{sha256.Sum256([]byte(c.Username)), sha256.Sum256([]byte(c.Password))})
	}
	return a
}

func (a *basicAuth) allows(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
	match := 0
	for _, c := range a.creds {
		match |= subtle.ConstantTimeCompare(u[:], c[0][:]) & subtle.ConstantTimeCompare(p[:], c[1][:])
	}
	return match == 1
}

// require answers 401 with a Basic challenge unless the request carries
// valid credentials, and 429 to a client address whose credentials failed
// too often (failures).
func (s *server) require(a *basicAuth, failures *failureLimiter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if a == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _, presented := r.BasicAuth()
			client := clientKey(r.RemoteAddr)
			// A client without the credentials has no use for the
			// connection: it is closed after the answer, never kept
			// alive to hold a file descriptor.
			fail := func(err error) {
				w.Header().Set("Connection", "close")
				writeError(w, r, s.Logger, err)
			}
			if presented {
				// Checked before the credentials, so that a guess made
				// while the address is held back learns nothing.
				if wait := failures.wait(client); wait > 0 {
					w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
					fail(errorf(http.StatusTooManyRequests, "too_many_failures",
						"too many failed logins from this address; retry after the given seconds"))
					return
				}
			}
			if !a.allows(r) {
				if presented {
					failures.fail(client)
				}
				w.Header().Set("WWW-Authenticate", `Basic realm="iceberg-sidecar", charset="UTF-8"`)
				fail(errorf(http.StatusUnauthorized, "unauthorized",
					"missing or wrong credentials: this sidecar requires HTTP Basic auth"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// The bounds of failureLimiter: a client address may fail Basic auth
// authBurst times at once, then once per authRefill.
const (
	authBurst  = 10
	authRefill = time.Second
	// authClients bounds the addresses remembered; past it, new addresses
	// share one allowance.
	authClients = 10_000
)

// failureLimiter holds back a client address whose credentials keep
// failing: a token bucket per address of authBurst failures, refilled one
// per authRefill. A request without credentials is not a guess and costs
// nothing; valid credentials cost nothing either, but while an address's
// bucket is empty every request from it that carries credentials is
// answered 429, its credentials unchecked, with Retry-After saying when it
// may try again.
type failureLimiter struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*failureBucket
	// pruned is when the full buckets were last dropped.
	pruned time.Time
}

type failureBucket struct {
	tokens float64
	at     time.Time
}

func newFailureLimiter(now func() time.Time) *failureLimiter {
	return &failureLimiter{now: now, buckets: map[string]*failureBucket{}}
}

// refilled is the bucket's tokens now.
func (b *failureBucket) refilled(now time.Time) float64 {
	return min(authBurst, b.tokens+float64(now.Sub(b.at))/float64(authRefill))
}

// wait is how long client must wait before its credentials are checked
// again; 0 when it may go on.
func (l *failureLimiter) wait(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(client, false)
	if b == nil {
		return 0
	}
	if t := b.refilled(l.now()); t < 1 {
		return time.Duration((1 - t) * float64(authRefill))
	}
	return 0
}

// fail records a failed login of client.
func (l *failureLimiter) fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucket(client, true)
	b.tokens, b.at = max(0, b.refilled(now)-1), now
}

// bucket is client's bucket, or the one that the addresses past
// authClients share; with create, a full one is made when there is none.
func (l *failureLimiter) bucket(client string, create bool) *failureBucket {
	if b := l.buckets[client]; b != nil {
		return b
	}
	now := l.now()
	if len(l.buckets) >= authClients && now.Sub(l.pruned) >= authRefill {
		// A full bucket is a fresh one: forget it.
		l.pruned = now
		for k, v := range l.buckets {
			if v.refilled(now) >= authBurst {
				delete(l.buckets, k)
			}
		}
	}
	if len(l.buckets) >= authClients {
		client = ""
		if b := l.buckets[client]; b != nil || !create {
			return b
		}
	}
	if !create {
		return nil
	}
	b := &failureBucket{tokens: authBurst, at: now}
	l.buckets[client] = b
	return b
}

// clientKey is the address a request's failures are counted against: its
// IP, or for IPv6 its /64, which one client holds whole. Behind a proxy it
// is the proxy's.
func clientKey(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	addr := ap.Addr().Unmap()
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}
