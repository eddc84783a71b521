package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// asSidecar, set in a child's environment, makes the test binary run as
// the sidecar itself (main's run with the child's arguments) instead of
// running tests: the tests that need the sidecar as a process of its own
// start the test binary again, without building the sidecar a second time.
const asSidecar = "SIDECAR_TEST_AS_SIDECAR"

// asSidecarOpenFiles, set in such a child's environment, is the child's
// open-file limit (RLIMIT_NOFILE, soft and hard), set before it runs: the
// tests of the connection cap flood a sidecar past its limit without
// opening as many sockets as this machine allows.
const asSidecarOpenFiles = "SIDECAR_TEST_OPEN_FILES"

func TestMain(m *testing.M) {
	if os.Getenv(asSidecar) == "1" {
		if v := os.Getenv(asSidecarOpenFiles); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err == nil {
				err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s=%s: %v\n", asSidecarOpenFiles, v, err)
				os.Exit(2)
			}
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	testenv.CollectLess()
	os.Exit(m.Run())
}

// sidecarCommand is the sidecar as a process: this test binary, run as
// the sidecar with args.
func sidecarCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = testenv.ChildEnv(append(os.Environ(), asSidecar+"=1"))
	return cmd
}
