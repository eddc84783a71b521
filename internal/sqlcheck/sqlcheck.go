// Package sqlcheck parses Druid SQL with Druid's own web-console parser,
// druid-query-toolkit's SqlQuery.parse, run by Node.js from
// tools/sqlcheck. It is a check of syntax only, and a lenient one (it
// takes PARTITIONED BY words Druid refuses); the Druid model
// (internal/druidsim) holds the rules.
package sqlcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/druidiceberg/sidecar/internal/testenv"
)

// dir is tools/sqlcheck of the module this file is in.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tools", "sqlcheck")
}

// ErrMissing: Node.js or the parser is not installed.
var ErrMissing = errors.New("druid-query-toolkit is not installed: run npm ci --prefix tools/sqlcheck (Node.js needed)")

// Parse parses each statement and returns, for each, "" when it parses or
// the parser's message.
func Parse(stmts []string) ([]string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, ErrMissing
	}
	if _, err := os.Stat(filepath.Join(dir(), "node_modules", "druid-query-toolkit")); err != nil {
		return nil, ErrMissing
	}
	in, err := json.Marshal(stmts)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, filepath.Join(dir(), "check.js"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("run check.js: %w: %s", err, stderr.Bytes())
	}
	var msgs []*string
	if err := json.Unmarshal(out, &msgs); err != nil || len(msgs) != len(stmts) {
		return nil, fmt.Errorf("check.js answered %q", out)
	}
	res := make([]string, len(msgs))
	for i, m := range msgs {
		if m != nil {
			res[i] = *m
		}
	}
	return res, nil
}

// Require fails t for every statement Druid's parser does not parse. Where
// the parser is not installed it skips t, except under CI, where a check
// that did not run is a failure (testenv.Missing).
func Require(t testing.TB, stmts ...string) {
	t.Helper()
	msgs, err := Parse(stmts)
	if errors.Is(err, ErrMissing) {
		testenv.Missing(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m != "" {
			t.Errorf("Druid's SQL parser refuses statement %d: %s\n%s", i, m, stmts[i])
		}
	}
}
