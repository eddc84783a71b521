package testenv_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// asChild, set in a child's environment, makes TestOutcomes run one case
// as the child itself: a skip or a failure ends a test, so the outcome of
// each is watched from a test binary of its own.
const asChild = "TESTENV_CHILD"

// TestOutcomes runs each helper in a child test binary with CI set and
// unset and holds it to its outcome: a missing tool or a -short run skips
// with a message naming what is left out, except under CI, where it fails.
func TestOutcomes(t *testing.T) {
	switch os.Getenv(asChild) {
	case "":
	case "tool":
		testenv.Tool(t, "sidecar-no-such-tool", "apt-get install no-such-package")
		return
	case "postgres":
		testenv.PostgresTool(t, "sidecar_no_such_pg_tool")
		return
	case "missing":
		testenv.Missing(t, "druid-query-toolkit is not installed")
		return
	case "short":
		testenv.SkipShort(t, "writes a table of 300,000 rows")
		return
	case "poll":
		testenv.Poll(t, 50*time.Millisecond, func() error { return errors.New("127.0.0.1:9 still accepts connections") })
		return
	default:
		t.Fatalf("unknown child case %q", os.Getenv(asChild))
	}

	for _, tc := range []struct {
		child string
		short bool
		ci    bool
		want  string // PASS, SKIP or FAIL
		msg   string
	}{
		{"tool", false, false, "SKIP", "sidecar-no-such-tool is not on PATH (apt-get install no-such-package)"},
		{"tool", false, true, "FAIL", "sidecar-no-such-tool is not on PATH (apt-get install no-such-package); under CI a test that cannot run fails"},
		{"postgres", false, false, "SKIP", "sidecar_no_such_pg_tool is neither on PATH nor in /usr/lib/postgresql/*/bin (apt-get install postgresql)"},
		{"postgres", false, true, "FAIL", "sidecar_no_such_pg_tool is neither on PATH"},
		{"missing", false, false, "SKIP", "druid-query-toolkit is not installed"},
		{"missing", false, true, "FAIL", "druid-query-toolkit is not installed; under CI"},
		{"short", true, false, "SKIP", "-short: the test writes a table of 300,000 rows"},
		{"short", true, true, "FAIL", "-short would leave out this test, which writes a table of 300,000 rows; under CI every test runs"},
		{"short", false, true, "PASS", ""},
		{"short", false, false, "PASS", ""},
		{"poll", false, false, "FAIL", "not within 50ms: 127.0.0.1:9 still accepts connections"},
	} {
		name := tc.child
		if tc.short {
			name += ",-short"
		}
		if tc.ci {
			name += ",CI"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each case waits on a child process of its own
			args := []string{"-test.run=^TestOutcomes$", "-test.v"}
			if tc.short {
				args = append(args, "-test.short")
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CI=") })
			cmd.Env = testenv.ChildEnv(append(cmd.Env, asChild+"="+tc.child, "PATH="+t.TempDir()))
			if tc.ci {
				cmd.Env = append(cmd.Env, "CI=true")
			}
			out, err := cmd.CombinedOutput()
			if (err == nil) != (tc.want != "FAIL") {
				t.Fatalf("the child exited with %v, want %s:\n%s", err, tc.want, out)
			}
			if !strings.Contains(string(out), "--- "+tc.want+": TestOutcomes") {
				t.Fatalf("the child's test did not end in %s:\n%s", tc.want, out)
			}
			if !strings.Contains(string(out), tc.msg) {
				t.Fatalf("the child's output lacks %q:\n%s", tc.msg, out)
			}
		})
	}
}

// TestToolFound: a program on PATH is found by both lookups.
func TestToolFound(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"sidecar-fake-tool", "sidecar_fake_pg_tool"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	if got, want := testenv.Tool(t, "sidecar-fake-tool", "no install"), filepath.Join(dir, "sidecar-fake-tool"); got != want {
		t.Errorf("Tool = %q, want %q", got, want)
	}
	if got, want := testenv.PostgresTool(t, "sidecar_fake_pg_tool"), filepath.Join(dir, "sidecar_fake_pg_tool"); got != want {
		t.Errorf("PostgresTool = %q, want %q", got, want)
	}
}

// TestPostgresToolOffPath: Debian keeps PostgreSQL's server programs off
// PATH, in one folder a major version; the newest is taken.
func TestPostgresToolOffPath(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9", "15", "13"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if got, want := testenv.PostgresToolIn(t, "initdb", root), filepath.Join(root, "15", "bin", "initdb"); got != want {
		t.Fatalf("PostgresTool(initdb) = %q, want the newest version's %q", got, want)
	}
}

// TestPollBacksOff: Poll asks at once, then after waits that double from
// 10 ms up to half a second, and returns at the first nil.
func TestPollBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var asked []time.Duration
		testenv.Poll(t, time.Minute, func() error {
			asked = append(asked, time.Since(start))
			if len(asked) < 9 {
				return errors.New("not yet")
			}
			return nil
		})
		want := []time.Duration{0, 10, 30, 70, 150, 310, 630, 1130, 1630}
		for i := range want {
			want[i] *= time.Millisecond
		}
		if !slices.Equal(asked, want) {
			t.Fatalf("Poll asked at %v, want %v", asked, want)
		}
	})
}
