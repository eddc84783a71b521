package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/connlimit"
	"github.com/druidiceberg/sidecar/metrics"
)

// healthConnections caps the health listener's connections: an
// orchestrator holds a few.
const healthConnections = 64

// serveHTTP serves the router made of hc on cfg.Addr, with at most
// --max-connections connections open, and with --health-addr the health
// routes on a listener of their own, until ctx is cancelled; then it shuts
// both down gracefully. ready, when non-nil, receives the address of
// cfg.Addr once it listens; catalogs names the catalogs for the log.
func serveHTTP(ctx context.Context, cfg config, hc handlers.Config, m *metrics.Metrics, ready chan<- string, catalogs []string) error {
	log := hc.Logger
	limit, err := openFileLimit()
	if err != nil {
		return fmt.Errorf("read the open-file limit: %w", err)
	}
	maxConns := connectionCap(cfg.MaxConnections, limit)
	if uint64(maxConns)+healthConnections >= limit {
		log.Warn("--max-connections is not below the open-file limit: past the limit, accept fails with too many open files",
			slog.Int("max_connections", maxConns), slog.Uint64("open_file_limit", limit))
	}
	var lc net.ListenConfig
	if cfg.sendBuffer > 0 {
		// Accepted sockets inherit the listening socket's buffer size.
		lc.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, cfg.sendBuffer)
			})
			return errors.Join(err, serr)
		}
	}
	tcp, err := lc.Listen(context.WithoutCancel(ctx), "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	hooks := connlimit.Hooks{
		Opened: m.HTTPConnections.Inc, Closed: m.HTTPConnections.Dec,
		Shed: m.HTTPConnectionsShed.Inc,
		Refused: func(c net.Conn) {
			m.HTTPConnectionsRefused.Inc()
			if cfg.TLSCert == "" {
				// Over TLS there is no plain answer to give: the
				// connection is closed.
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_ = handlers.WriteRefusal(c, maxConns)
			}
		},
	}
	servers := []*listening{{ln: connlimit.New(tcp, maxConns, hooks), handler: handlers.New(hc)}}
	if cfg.HealthAddr != "" {
		htcp, err := net.Listen("tcp", cfg.HealthAddr)
		if err != nil {
			_ = tcp.Close()
			return fmt.Errorf("listen on %s (--health-addr): %w", cfg.HealthAddr, err)
		}
		servers = append(servers, &listening{ln: connlimit.New(htcp, healthConnections, connlimit.Hooks{}), handler: handlers.NewHealth(hc)})
	}
	// No ReadTimeout or WriteTimeout: they would cut a long row stream that
	// a slow but live client is still reading. Slow clients are bounded by
	// the header and idle timeouts, the router's body deadline and its
	// progress-based write deadline (--write-stall-timeout), stream slots
	// by --max-streams, and connections by the cap.
	for _, s := range servers {
		s.srv = &http.Server{
			Handler:           s.handler,
			ReadHeaderTimeout: cfg.readHeaderTimeout,
			IdleTimeout:       cfg.idleTimeout,
			ConnState:         s.ln.ConnState,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		}
	}
	attrs := []any{slog.String("addr", tcp.Addr().String()), slog.String("catalogs", strings.Join(catalogs, ",")),
		slog.Bool("basic_auth", len(cfg.BasicAuth) > 0), slog.Int64("delete_cache_size", cfg.DeleteCacheSize),
		slog.Int("max_connections", maxConns)}
	if len(servers) > 1 {
		attrs = append(attrs, slog.String("health_addr", servers[1].ln.Addr().String()))
	}
	log.Info("listening", attrs...)
	if ready != nil {
		ready <- tcp.Addr().String()
	}

	errc := make(chan error, len(servers))
	for _, s := range servers {
		go func() {
			if cfg.TLSCert != "" {
				errc <- s.srv.ServeTLS(s.ln, cfg.TLSCert, cfg.TLSKey)
				return
			}
			errc <- s.srv.Serve(s.ln)
		}()
	}
	// A server that stops on its own (it cannot listen any more) stops
	// the others too.
	var serveErr error
	waiting := len(servers)
	select {
	case serveErr = <-errc:
		waiting--
	case <-ctx.Done():
		log.Info("shutting down", slog.Duration("grace", cfg.ShutdownGrace))
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	for _, s := range servers {
		if err := s.srv.Shutdown(sctx); err != nil {
			// The grace period ran out: cut what is left so clients retry
			// against another replica rather than wait.
			log.Warn("grace period over, aborting open streams", slog.String("error", err.Error()))
			_ = s.srv.Close()
		}
	}
	for range waiting {
		if err := <-errc; serveErr == nil && !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	if serveErr != nil {
		return fmt.Errorf("serve: %w", serveErr)
	}
	return nil
}

// listening is one listener with the server that serves it.
type listening struct {
	ln      *connlimit.Listener
	handler http.Handler
	srv     *http.Server
}

// openFileLimit is the process's open-file limit: RLIMIT_NOFILE's soft
// limit, which the Go runtime raises to the hard limit at start-up.
func openFileLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	return rl.Cur, nil
}

// connectionCap is --max-connections, or when it is 0 three quarters of
// the open-file limit: the rest is for the files streams read, the
// connections to catalogs and object stores, and the health listener.
func connectionCap(flagValue int, limit uint64) int {
	if flagValue > 0 {
		return flagValue
	}
	// An unlimited limit (RLIM_INFINITY) is not a number of connections.
	return int(max(min(limit, 1<<30)*3/4, 1))
}
