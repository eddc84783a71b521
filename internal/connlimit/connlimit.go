// Package connlimit caps the connections an HTTP server holds open, below
// the process's open-file limit, so that a flood of connections never
// makes accept fail with "too many open files" (which starves every
// client, the orchestrator's health checks among them).
//
// Idle connections go first: near the cap, each new connection closes the
// one that has been idle longest (a keep-alive between requests, or one
// that has sent nothing yet), which a client reopens at the cost of a
// handshake. Only when every connection is busy is a new one refused. The
// server hands the listener its connection states (the package example).
package connlimit

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// Hooks tell the caller what the listener does; every field is optional.
type Hooks struct {
	// Opened and Closed are called when a connection is admitted and when
	// it closes.
	Opened, Closed func()
	// Shed is called for an idle connection closed to make room.
	Shed func()
	// Refused is called for a connection refused at the cap, before it is
	// closed; it may write an answer to it (a plain-HTTP 503), and must not
	// block.
	Refused func(net.Conn)
}

// Listener is a net.Listener that holds at most Max() connections open. Pass
// its ConnState to the http.Server that serves it, so that it knows which
// connections are idle.
type Listener struct {
	net.Listener
	max    int
	shedAt int
	hooks  Hooks

	mu   sync.Mutex
	open int
	// idle holds the connections between requests or before their first,
	// longest idle first.
	idle list.List
}

// New caps the connections ln hands out at limit (at least 1). From seven
// eighths of the cap on, each new connection closes the longest idle one.
func New(ln net.Listener, limit int, hooks Hooks) *Listener {
	limit = max(limit, 1)
	return &Listener{Listener: ln, max: limit, shedAt: limit - limit/8, hooks: hooks}
}

// Max is the cap.
func (l *Listener) Max() int { return l.max }

// Open is the number of connections open now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Idle is the number of open connections that are idle: new (nothing
// read yet) or between requests.
func (l *Listener) Idle() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle.Len()
}

// Accept returns the next connection the cap admits; a connection it
// refuses is closed, and Accept waits for the next one.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
		if l.hooks.Refused != nil {
			l.hooks.Refused(c)
		}
		_ = c.Close()
	}
}

// admit sheds idle connections as the count nears the cap, and wraps c
// when there is room for it.
func (l *Listener) admit(c net.Conn) *conn {
	l.mu.Lock()
	var victims []*conn
	for l.open-len(victims) >= l.shedAt && l.idle.Len() > 0 {
		v := l.idle.Remove(l.idle.Front()).(*conn)
		v.elem = nil
		victims = append(victims, v)
	}
	l.mu.Unlock()
	for _, v := range victims {
		// The server's goroutine blocked reading the connection's next
		// request sees it closed and ends, as with an idle timeout.
		_ = v.Close()
		if l.hooks.Shed != nil {
			l.hooks.Shed()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return nil
	}
	l.open++
	if l.hooks.Opened != nil {
		l.hooks.Opened()
	}
	return &conn{Conn: c, l: l}
}

// ConnState is the http.Server hook that tells the listener which of its
// connections are idle: new (nothing read yet) or between requests.
func (l *Listener) ConnState(nc net.Conn, st http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	if (st == http.StateNew || st == http.StateIdle) && !c.closed {
		c.elem = l.idle.PushBack(c)
	}
}

// release counts c closed.
func (l *Listener) release(c *conn) {
	l.mu.Lock()
	if c.closed {
		l.mu.Unlock()
		return
	}
	c.closed = true
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	l.open--
	l.mu.Unlock()
	if l.hooks.Closed != nil {
		l.hooks.Closed()
	}
}

// conn is an admitted connection; its fields but Conn are the listener's,
// under its lock.
type conn struct {
	net.Conn
	l      *Listener
	elem   *list.Element // in l.idle while idle
	closed bool
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.l.release(c)
	return err
}
