package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/druidiceberg/sidecar/handlers"
	"github.com/druidiceberg/sidecar/internal/connlimit"
	"github.com/druidiceberg/sidecar/internal/rungroup"
	"github.com/druidiceberg/sidecar/metrics"
)

// healthConnections caps the health listener's connections: an
// orchestrator holds a few.
const healthConnections = 64

// listen opens cfg.Addr, with at most --max-connections connections open,
// and with --health-addr the health routes on a listener of their own, and
// makes the servers of the router made of hc; catalogs names the catalogs
// for the log. The first server is the main one.
func listen(ctx context.Context, cfg config, hc handlers.Config, m *metrics.Metrics, catalogs []string) ([]*listening, error) {
	log := hc.Logger
	limit, err := openFileLimit()
	if err != nil {
		return nil, fmt.Errorf("read the open-file limit: %w", err)
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
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
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
	servers := []*listening{{name: "main", ln: connlimit.New(tcp, maxConns, hooks), handler: handlers.New(hc)}}
	if cfg.HealthAddr != "" {
		htcp, err := net.Listen("tcp", cfg.HealthAddr)
		if err != nil {
			_ = tcp.Close()
			return nil, fmt.Errorf("listen on %s (--health-addr): %w", cfg.HealthAddr, err)
		}
		servers = append(servers, &listening{name: "health", ln: connlimit.New(htcp, healthConnections, connlimit.Hooks{}),
			handler: handlers.NewHealth(hc)})
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
	return servers, nil
}

// runServers runs the servers and the components they use as one group
// (rungroup) until ctx is cancelled or a server stops on its own, then
// stops them in this order: readiness (close stopping, so that /readyz
// answers 503), --shutdown-delay (which a second SIGTERM or SIGINT ends),
// the main server (it stops accepting and its streams finish within
// --shutdown-grace; past it they are cut), the health server, then stops
// (the catalogs), each once the one before has returned.
func runServers(ctx context.Context, cfg config, log *slog.Logger, servers []*listening, stopping chan<- struct{}, stops []func()) error {
	var g rungroup.Group
	// The signal: main cancels ctx on SIGTERM or SIGINT.
	interrupted := make(chan struct{})
	g.Add(func() error {
		select {
		case <-ctx.Done():
			log.Info("shutting down", slog.Duration("delay", cfg.ShutdownDelay), slog.Duration("grace", cfg.ShutdownGrace))
		case <-interrupted:
		}
		return nil
	}, func(error) { close(interrupted) })
	// Readiness, first to stop: /readyz answers 503 from here on, while
	// the listeners still accept for --shutdown-delay, so that a load
	// balancer that polls it takes the replica out before it refuses.
	unready := make(chan struct{})
	g.Add(func() error {
		<-unready
		return nil
	}, func(err error) {
		var again chan os.Signal
		if err == nil && cfg.ShutdownDelay > 0 {
			// Registered before /readyz turns, so that a second signal
			// sent once it has is never lost.
			again = make(chan os.Signal, 1)
			signal.Notify(again, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(again)
		}
		close(stopping)
		log.Info("not ready")
		close(unready)
		if again == nil {
			return
		}
		delay := time.NewTimer(cfg.ShutdownDelay)
		defer delay.Stop()
		select {
		case <-delay.C:
		case <-again:
			log.Info("second signal: shutdown delay ended")
		}
	})
	// The servers, main first: each interrupt returns once its
	// connections are drained, or cut when the grace period is over. The
	// grace period starts when the main server stops accepting.
	var grace context.Context
	cancelGrace := func() {}
	defer func() { cancelGrace() }()
	for _, s := range servers {
		served := make(chan struct{})
		g.Add(func() error {
			defer close(served)
			var err error
			if cfg.TLSCert != "" {
				err = s.srv.ServeTLS(s.ln, cfg.TLSCert, cfg.TLSKey)
			} else {
				err = s.srv.Serve(s.ln)
			}
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return fmt.Errorf("serve %s listener: %w", s.name, err)
		}, func(error) {
			if grace == nil {
				grace, cancelGrace = context.WithTimeout(context.Background(), cfg.ShutdownGrace)
			}
			if err := s.srv.Shutdown(grace); err != nil {
				// The grace period ran out: cut what is left so clients
				// retry against another replica rather than wait.
				log.Warn("grace period over, aborting open streams", slog.String("listener", s.name), slog.String("error", err.Error()))
				_ = s.srv.Close()
			}
			<-served
		})
	}
	// What the servers used, closed once nothing serves from it.
	for _, stop := range stops {
		g.AddStop(stop)
	}
	return g.Run()
}

// listening is one listener with the server that serves it.
type listening struct {
	name    string
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
