// Package memory is the sidecar's memory budget: the bytes that plans and
// decoded delete files may hold together, reserved before they are held,
// and the rule that sizes the budget from the process's memory limit (the
// Go memory limit, or the container's cgroup limit).
//
// Plans and delete sets draw from one Budget. A plan reserves what its
// files need before iceberg-go plans them; a delete file reserves as it
// decodes. A reservation that does not fit now, because others hold the
// memory, fails with ErrBusy (the caller answers 503 and the client
// retries); one that can never fit, being larger than the budget or than
// the bound its reservation was given, fails with an *ExceedsError. Before
// it answers ErrBusy, the budget asks the holders of memory that can be
// given back (the delete cache's idle entries) to give it back. The
// package example reserves and releases.
package memory

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/druidiceberg/sidecar/internal/promreg"
)

// Kind says what a reservation holds memory for; it labels the metrics.
type Kind string

// The kinds of reservations.
const (
	// Plan is a plan's files as iceberg-go plans them.
	Plan Kind = "plan"
	// Deletes are decoded delete files: being decoded, held by streams, or
	// kept by the delete cache.
	Deletes Kind = "deletes"
)

// ErrBusy: the memory is held by others now; it is free again when they
// finish, so the request is worth retrying.
var ErrBusy = errors.New("the memory budget is in use by other requests")

// ErrTooLarge is what every *ExceedsError is (errors.Is): no retry helps.
var ErrTooLarge = errors.New("larger than the memory bound")

// ExceedsError says a reservation can never fit: it needs more than Bound.
type ExceedsError struct {
	Kind Kind
	// Need is what the reservation would hold, at least.
	Need int64
	// Bound is the bound it passed, and BoundName what that bound is
	// (the budget's origin, or the bound the reservation was given).
	Bound     int64
	BoundName string
}

func (e *ExceedsError) Error() string {
	return fmt.Sprintf("needs %s or more, more than %s, %s", Bytes(e.Need), Bytes(e.Bound), e.BoundName)
}

// Is makes every ExceedsError ErrTooLarge.
func (e *ExceedsError) Is(target error) bool { return target == ErrTooLarge }

// Budget is memory that reservations share, up to its capacity. It is safe
// for concurrent use.
type Budget struct {
	capacity int64
	origin   string
	reserved *prometheus.GaugeVec   // by kind
	refused  *prometheus.CounterVec // by kind and reason

	mu       sync.Mutex
	used     int64
	byKind   map[Kind]int64
	peak     int64
	reclaim  []func(need int64)
	refusals map[bool]int64 // by busy
}

// NewBudget returns a budget of capacity bytes; origin says where the
// capacity comes from, for the errors that name it ("the memory budget
// (--memory-budget)"). It follows the bytes reserved and counts the
// reservations refused on reg (nil: not exported). A capacity <= 0 is no
// budget: every reservation fits.
func NewBudget(capacity int64, origin string, reg prometheus.Registerer) *Budget {
	return &Budget{
		capacity: capacity, origin: origin, byKind: map[Kind]int64{}, refusals: map[bool]int64{},
		reserved: promreg.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sidecar_memory_reserved_bytes",
			Help: "Memory reserved from the memory budget, by kind: plan (a plan's data files by the sizing rule) and deletes (decoded delete files, being loaded, used by streams or kept by the delete cache).",
		}, []string{"kind"})),
		refused: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sidecar_memory_refused_total",
			Help: "Reservations of the memory budget refused, by kind (plan, deletes) and reason (busy: others held the memory, answered 503; too_large: it can never fit, answered 422).",
		}, []string{"kind", "reason"})),
	}
}

// Capacity is the budget's size in bytes; <= 0 is none.
func (b *Budget) Capacity() int64 { return b.capacity }

// Origin says where the capacity comes from.
func (b *Budget) Origin() string { return b.origin }

// Stats are a Budget's counts.
type Stats struct {
	// Used is what the reservations hold now, and ByKind the same by kind.
	Used   int64
	ByKind map[Kind]int64
	// Peak is the most Used has been.
	Peak int64
	// Busy and TooLarge count the reservations refused each way.
	Busy, TooLarge int64
}

// Stats returns the budget's counts.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	by := make(map[Kind]int64, len(b.byKind))
	for k, v := range b.byKind {
		by[k] = v
	}
	return Stats{Used: b.used, ByKind: by, Peak: b.peak, Busy: b.refusals[true], TooLarge: b.refusals[false]}
}

// OnPressure registers reclaim, which a reservation that does not fit
// calls, without the budget's lock held, before it gives up: reclaim
// should release at least need bytes of reservations it can do without
// (a cache's idle entries), if it has them.
func (b *Budget) OnPressure(reclaim func(need int64)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reclaim = append(b.reclaim, reclaim)
}

// Reserve reserves n bytes for kind. bound, when > 0, is the most the
// reservation may ever hold (Grow and Set check it too); boundName says
// what it is. A nil Budget reserves nothing and always succeeds.
func (b *Budget) Reserve(kind Kind, n, bound int64, boundName string) (*Reservation, error) {
	r := &Reservation{b: b, kind: kind, bound: bound, boundName: boundName}
	if err := r.Grow(n); err != nil {
		return nil, err
	}
	return r, nil
}

// take moves n bytes (n may be negative) into kind's reservations, or
// fails when they do not fit.
func (b *Budget) take(kind Kind, n int64) error {
	if b.capacity > 0 && n > b.capacity {
		return b.refuse(kind, false, &ExceedsError{Kind: kind, Need: n, Bound: b.capacity, BoundName: b.origin})
	}
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		if n <= 0 || b.capacity <= 0 || b.used+n <= b.capacity {
			b.used += n
			b.byKind[kind] += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			if n != 0 {
				b.reserved.WithLabelValues(string(kind)).Add(float64(n))
			}
			return nil
		}
		held, short := b.used, b.used+n-b.capacity
		reclaim := b.reclaim
		b.mu.Unlock()
		if attempt > 0 || len(reclaim) == 0 {
			return b.refuse(kind, true, fmt.Errorf("%w: %s of the %s budget (%s) are held, and %s more are needed",
				ErrBusy, Bytes(held), Bytes(b.capacity), b.origin, Bytes(n)))
		}
		for _, f := range reclaim {
			f(short)
		}
	}
}

func (b *Budget) refuse(kind Kind, busy bool, err error) error {
	b.mu.Lock()
	b.refusals[busy]++
	b.mu.Unlock()
	reason := "too_large"
	if busy {
		reason = "busy"
	}
	b.refused.WithLabelValues(string(kind), reason).Inc()
	return err
}

// Reservation is memory reserved from a Budget. Its methods are not safe
// for concurrent use, but Release is safe to call more than once.
type Reservation struct {
	b         *Budget
	kind      Kind
	n         int64
	bound     int64
	boundName string
	mu        sync.Mutex
	released  bool
}

// Size is what the reservation holds.
func (r *Reservation) Size() int64 {
	if r == nil {
		return 0
	}
	return r.n
}

// Grow reserves n more bytes; on an error the reservation keeps what it
// held.
func (r *Reservation) Grow(n int64) error { return r.Set(r.Size() + n) }

// Set makes the reservation hold n bytes: more is reserved (and can fail
// as Reserve does), less is given back. A negative n, which only an
// overflowing size computes, is refused: it would give back what others
// hold.
func (r *Reservation) Set(n int64) error {
	if r == nil || r.b == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		return errors.New("memory reservation used after its release")
	}
	if n < 0 {
		return fmt.Errorf("a memory reservation of %d bytes: a size overflowed", n)
	}
	if r.bound > 0 && n > r.bound {
		return r.b.refuse(r.kind, false, &ExceedsError{Kind: r.kind, Need: n, Bound: r.bound, BoundName: r.boundName})
	}
	if err := r.b.take(r.kind, n-r.n); err != nil {
		return err
	}
	r.n = n
	return nil
}

// Release gives the reservation's memory back.
func (r *Reservation) Release() {
	if r == nil || r.b == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released {
		return
	}
	r.released = true
	_ = r.b.take(r.kind, -r.n) // giving back never fails
	r.n = 0
}

// Bytes formats n bytes for a message: in the largest binary unit that
// leaves a whole or one-decimal number (512 MiB, 1.5 GiB).
type Bytes int64

func (n Bytes) String() string {
	v := int64(n)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.size {
			if v%u.size == 0 {
				return fmt.Sprintf("%d %s", v/u.size, u.suffix)
			}
			return fmt.Sprintf("%.1f %s", float64(v)/float64(u.size), u.suffix)
		}
	}
	return fmt.Sprintf("%d bytes", v)
}
