package memory

import (
	"context"
	"sync"
)

// A scope holds the reservations made for one request until the request
// ends: what a plan's files need is held for as long as the request keeps
// them (a /changes request cuts many plans from one scan), and given back
// at once when it ends, however it ends.
type scope struct {
	mu     sync.Mutex
	held   []*Reservation
	closed bool
}

type scopeKey struct{}

// WithScope returns ctx carrying a new scope, and the function that ends
// it, releasing every reservation held in it.
func WithScope(ctx context.Context) (context.Context, func()) {
	s := &scope{}
	return context.WithValue(ctx, scopeKey{}, s), s.end
}

// Hold keeps r until the scope of ctx ends and reports true; without a
// scope (or once it ended) it releases r at once and reports false: the
// reservation then only admitted what it reserved.
func Hold(ctx context.Context, r *Reservation) bool {
	s, ok := ctx.Value(scopeKey{}).(*scope)
	if ok {
		s.mu.Lock()
		if !s.closed {
			s.held = append(s.held, r)
			s.mu.Unlock()
			return true
		}
		s.mu.Unlock()
	}
	r.Release()
	return false
}

func (s *scope) end() {
	s.mu.Lock()
	held := s.held
	s.held, s.closed = nil, true
	s.mu.Unlock()
	for _, r := range held {
		r.Release()
	}
}
