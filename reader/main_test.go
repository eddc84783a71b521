package reader_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/druidiceberg/sidecar/internal/sharedtables"
)

// testRoot is a directory for what the tests build once and share for the
// run of the package (the tables corruptTargets writes); it outlives every
// test's own TempDir and is removed when the run ends.
var testRoot string

func TestMain(m *testing.M) {
	var err error
	if testRoot, err = os.MkdirTemp("", "reader-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(testRoot)
	sharedtables.RemoveAll()
	os.Exit(code)
}
